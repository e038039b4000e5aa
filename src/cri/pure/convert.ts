// Kubernetes container cpu/memory -> CRI LinuxContainerResources, identical to the kubelet
// (v1.34.4: pkg/kubelet/kuberuntime/kuberuntime_container_linux.go calculateLinuxResources and
// configureContainerSwapResources; pkg/kubelet/cm/helpers_linux.go MilliCPUToShares,
// MilliCPUToQuota). Owns: that arithmetic, in bigint (the kubelet's int64 never overflows for
// real inputs and neither do we). Must not: do I/O, know about pods, QoS classes or the pod-level
// cgroup (the agent owns those), compute cgroup file values (cgroup/pure/values.ts), or look at
// resources other than cpu and memory.
import { parseQuantity, toBytes, toMilli } from '../../api/quantity.js';
import type { CgroupVersion, LinuxContainerResources } from '../../api/node.js';

export const MIN_SHARES = 2n;
export const MAX_SHARES = 262_144n;
export const SHARES_PER_CPU = 1024n;
export const MILLI_CPU_TO_CPU = 1000n;
/** CFS period in microseconds (100 ms). */
export const QUOTA_PERIOD = 100_000n;
/** Smallest CFS quota the kernel accepts, microseconds (1 ms). */
export const MIN_QUOTA_PERIOD = 1_000n;

/** A container's resources as in a pod spec (client-node V1ResourceRequirements fits). */
export interface ContainerResourceRequirements {
  readonly requests?: Readonly<Record<string, string>> | undefined;
  readonly limits?: Readonly<Record<string, string>> | undefined;
}

export interface ConvertOptions {
  /** The kubelet's cpuCFSQuota setting (default true); false sends neither quota nor period. */
  readonly cpuCfsQuota?: boolean;
  /** The node's cgroup version, for the swap fields (default 1). */
  readonly cgroupVersion?: CgroupVersion;
  /** Whether the node has a swap controller (v1: memory.memsw.* files exist). Default false. */
  readonly swapControllerAvailable?: boolean;
}

/** The part of LinuxContainerResources that a cpu/memory resize sets. */
export type CpuMemoryResources = Pick<
  LinuxContainerResources,
  'cpuPeriod' | 'cpuQuota' | 'cpuShares' | 'memoryLimitInBytes' | 'memorySwapLimitInBytes' | 'unified'
>;

/** Kubelet MilliCPUToShares: milli*1024/1000, clamped to [2, 262144]; 0 -> 2. */
export function milliCpuToShares(milliCpu: bigint): bigint {
  if (milliCpu <= 0n) return MIN_SHARES;
  const shares = (milliCpu * SHARES_PER_CPU) / MILLI_CPU_TO_CPU;
  if (shares < MIN_SHARES) return MIN_SHARES;
  if (shares > MAX_SHARES) return MAX_SHARES;
  return shares;
}

/** Kubelet MilliCPUToQuota: 0 for no limit, else milli*period/1000 but at least 1000. */
export function milliCpuToQuota(milliCpu: bigint, period: bigint = QUOTA_PERIOD): bigint {
  if (milliCpu <= 0n) return 0n;
  const quota = (milliCpu * period) / MILLI_CPU_TO_CPU;
  return quota < MIN_QUOTA_PERIOD ? MIN_QUOTA_PERIOD : quota;
}

function quantityOf(
  list: Readonly<Record<string, string>> | undefined,
  name: string,
  what: string,
): bigint | undefined {
  const text = list?.[name];
  if (text === undefined) return undefined;
  try {
    const q = parseQuantity(text, { allowNegative: false });
    return name === 'cpu' ? toMilli(q) : toBytes(q);
  } catch (err) {
    throw new Error(`${what}.${name} ${JSON.stringify(text)} is not a valid quantity`, { cause: err });
  }
}

/**
 * The LinuxContainerResources the kubelet would send for a container with these resources.
 * Throws on an unparsable or negative quantity (the API server would have rejected it).
 *
 * The kubelet's rules, as read in v1.34.4:
 * - shares: a cpu request that is present (even "0") gives MilliCPUToShares(request); an absent
 *   request gives MilliCPUToShares(limit) (the limit is a zero Quantity when absent too, so
 *   neither -> MilliCPUToShares(0) = MinShares 2). MilliCPUToShares = milli*1024/1000 (integer
 *   division), clamped to [MinShares 2, MaxShares 262144].
 * - quota: with cpuCFSQuota (the kubelet's default, true) period is QuotaPeriod 100000 µs and
 *   quota = MilliCPUToQuota(limit) = limit*period/1000, at least MinQuotaPeriod 1000; no limit
 *   (milli 0) gives quota 0 while period stays 100000. The kubelet never sends -1 for "no limit"
 *   (only for DisableCPUQuotaWithExclusiveCPUs). Quota 0 means "not specified" to the runtime:
 *   containerd (pkg/cri/opts WithResources: `if q != 0`) then leaves the OCI spec's quota alone,
 *   so a new container gets the cgroup default (v1 cfs_quota_us -1, v2 cpu.max "max") and an
 *   update keeps the previous quota (seen on the test bed: 50000 stayed 50000; -1 would clear it). Removing a limit in place is forbidden by the API server
 *   ("resource limits cannot be removed", pkg/apis/core/validation), so 0 never has to undo one.
 * - memory: MemoryLimitInBytes = limit.Value() when non-zero, else 0 (unset).
 * - swap (NoSwap, the kubelet's default behaviour) only when the node has a swap controller:
 *   cgroup v1 -> memory_swap_limit_in_bytes = memory limit; cgroup v2 -> unified
 *   "memory.swap.max" = "0". Sent on every update as the kubelet does, although on the test bed
 *   (containerd 1.6.20, runc 1.1.5, v1) raising memory without it raised memsw along with it.
 * Not carried over: oom_score_adj, hugepages, MemoryQoS (memory.min/high), memory.oom.group and
 * the CPUCFSQuotaPeriod gate (custom periods) — none of them change with a cpu/memory resize.
 */
export function toLinuxResources(
  resources: ContainerResourceRequirements,
  options: ConvertOptions = {},
): CpuMemoryResources {
  const cpuRequest = quantityOf(resources.requests, 'cpu', 'requests');
  const cpuLimit = quantityOf(resources.limits, 'cpu', 'limits') ?? 0n;
  const memoryLimit = quantityOf(resources.limits, 'memory', 'limits') ?? 0n;

  const cpuShares = milliCpuToShares(cpuRequest ?? cpuLimit);
  const cfs = options.cpuCfsQuota ?? true;
  const cpuPeriod = cfs ? QUOTA_PERIOD : 0n;
  const cpuQuota = cfs ? milliCpuToQuota(cpuLimit, QUOTA_PERIOD) : 0n;

  let memorySwapLimitInBytes = 0n;
  let unified: Record<string, string> = {};
  if (options.swapControllerAvailable === true) {
    if ((options.cgroupVersion ?? 1) === 1) memorySwapLimitInBytes = memoryLimit;
    else unified = { 'memory.swap.max': '0' };
  }
  return { cpuShares, cpuQuota, cpuPeriod, memoryLimitInBytes: memoryLimit, memorySwapLimitInBytes, unified };
}
