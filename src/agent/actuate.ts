// Applies a container's cpu/memory target through CRI UpdateContainerResources the way the kubelet
// does it, level-triggered: compare the target with what the container's cgroup really holds, do
// nothing when they already agree, refuse a memory limit the container's current usage does not
// fit under, otherwise update memory first and cpu second (kubelet doPodResizeAction order) and
// read back what took effect. Owns: that comparison, the refusal rule and the call order for ONE
// container. Must not: touch the pod-level cgroup or order containers against it (the agent's job),
// retry (a CriError says whether retrying can help), or convert Kubernetes quantities (cri/pure/convert.ts).
import { AgentReasons } from '../api/reasons.js';
import type { CgroupReading } from '../cgroup/container.js';
import type { CriClient } from '../cri/client.js';
import type { LinuxContainerResources } from '../api/node.js';
import type { CpuMemoryResources } from '../cri/pure/convert.js';
import { sharesToCpuWeight, sharesToCpuWeightQuadratic } from '../cgroup/pure/values.js';

export type ResizeStep = 'memory' | 'cpu';

/** What applyContainerResources did. */
export type ApplyResult =
  | { readonly outcome: 'Unchanged'; readonly current: CgroupReading }
  | {
      readonly outcome: 'Applied';
      /** The UpdateContainerResources calls made, in order. */
      readonly steps: readonly ResizeStep[];
      /** The cgroup after the calls. */
      readonly current: CgroupReading;
      /** Whether the cgroup now matches the target (false: the runtime accepted but did not actuate). */
      readonly actuated: boolean;
    }
  | {
      readonly outcome: 'ResizeRefused';
      readonly reason: typeof AgentReasons.MemoryLimitBelowUsage;
      /** E.g. "memory limit 33554432 is not above current usage 42123264 of container abc". */
      readonly message: string;
      readonly limitBytes: bigint;
      readonly usageBytes: bigint;
      readonly current: CgroupReading;
    };

export interface ApplyOptions {
  /** The container's current cgroup values and usage; cgroups.ts containerCgroupReader(client) in production. */
  readonly readCurrent: (containerId: string) => Promise<CgroupReading>;
  /** Kernel page size for comparing memory limits; 4096. */
  readonly pageSize?: bigint;
}

export type ResourceTarget = Partial<CpuMemoryResources>;

const floorTo = (value: bigint, unit: bigint): bigint => (value / unit) * unit;

/**
 * Whether the cgroup's memory values already are the target's. "Not specified" values (0, as on
 * the wire) are nothing to apply: containerd leaves them as they are, so they always match. The
 * kernel stores memory limits in whole pages, so a limit matches when it equals the target
 * rounded down to the page size.
 */
export function memoryMatches(target: ResourceTarget, current: CgroupReading, pageSize = 4096n): boolean {
  const limit = target.memoryLimitInBytes ?? 0n;
  if (limit > 0n && current.memoryLimitInBytes !== floorTo(limit, pageSize)) return false;
  if (limit < 0n && current.memoryLimitInBytes !== -1n) return false;
  const currentSwap = current.memorySwapLimitInBytes;
  if (currentSwap !== undefined) {
    if (current.version === 1) {
      const swap = target.memorySwapLimitInBytes ?? 0n;
      if (swap > 0n && currentSwap !== floorTo(swap, pageSize)) return false;
    } else {
      const swapMax = target.unified?.['memory.swap.max'];
      if (swapMax !== undefined && currentSwap !== (swapMax === 'max' ? -1n : floorTo(BigInt(swapMax), pageSize)))
        return false;
    }
  }
  return true;
}

/** Whether the cgroup's cpu values already are the target's (unspecified target values always match). */
export function cpuMatches(target: ResourceTarget, current: CgroupReading): boolean {
  const shares = target.cpuShares ?? 0n;
  if (shares > 0n) {
    if (current.version === 1 && current.cpuShares !== shares) return false;
    // runc's shares -> weight map changed (linear, then quadratic in opencontainers/cgroups v0.0.6); accept either.
    if (
      current.version === 2 &&
      current.cpuWeight !== sharesToCpuWeight(shares) &&
      current.cpuWeight !== sharesToCpuWeightQuadratic(shares)
    ) {
      return false;
    }
  }
  const quota = target.cpuQuota ?? 0n;
  if (quota > 0n && current.cpuQuota !== quota) return false;
  if (quota < 0n && current.cpuQuota !== -1n) return false;
  const period = target.cpuPeriod ?? 0n;
  if (period > 0n && current.cpuPeriod !== period) return false;
  return true;
}

/**
 * The kubelet's refusal: a memory limit that is added or lowered must stay above current usage.
 * Returns the message when refused, undefined when the limit may be applied. `subject` names the
 * cgroup for the message ("container <id>", "pod cgroup <path>"); containers and pods share the rule.
 * The rule is the kubelet's (v1.34.4 kuberuntime_manager.go validateMemoryResizeAction): when a
 * memory limit is added or lowered and the usage (page cache included: v1 memory.usage_in_bytes,
 * v2 memory.current) is >= the new limit, the resize is not attempted. Without it the runtime is
 * left to fail it: on the test bed (cgroup v1, runc 1.1.5) containerd answers Unknown "unable to
 * set memory limit to … (current usage: …)" after the kernel tried to reclaim; on v2 the kernel
 * may OOM-kill instead.
 */
export function memoryRefusal(
  subject: string,
  limit: bigint | undefined,
  current: { readonly memoryLimitInBytes: bigint; readonly memoryUsageInBytes: bigint },
): string | undefined {
  if (limit === undefined || limit <= 0n) return undefined;
  const lowering = current.memoryLimitInBytes === -1n || limit < current.memoryLimitInBytes;
  if (!lowering || current.memoryUsageInBytes < limit) return undefined;
  return `memory limit ${limit} is not above current usage ${current.memoryUsageInBytes} of ${subject}`;
}

function memoryStep(target: ResourceTarget): Partial<LinuxContainerResources> {
  const step: { -readonly [K in keyof LinuxContainerResources]?: LinuxContainerResources[K] } = {};
  if (target.memoryLimitInBytes !== undefined) step.memoryLimitInBytes = target.memoryLimitInBytes;
  if (target.memorySwapLimitInBytes !== undefined) step.memorySwapLimitInBytes = target.memorySwapLimitInBytes;
  const swapMax = target.unified?.['memory.swap.max'];
  if (swapMax !== undefined) step.unified = { 'memory.swap.max': swapMax };
  return step;
}

function cpuStep(target: ResourceTarget): Partial<LinuxContainerResources> {
  const step: { -readonly [K in keyof LinuxContainerResources]?: LinuxContainerResources[K] } = {};
  if (target.cpuShares !== undefined) step.cpuShares = target.cpuShares;
  if (target.cpuQuota !== undefined) step.cpuQuota = target.cpuQuota;
  if (target.cpuPeriod !== undefined) step.cpuPeriod = target.cpuPeriod;
  return step;
}

/**
 * Bring one running container's cgroup to `target` (typically convert.ts toLinuxResources).
 * Makes no CRI call when the cgroup already matches, and none when the memory limit is refused.
 * Throws what the reader or the client throws (CriError for the runtime).
 */
export async function applyContainerResources(
  client: Pick<CriClient, 'updateContainerResources'>,
  containerId: string,
  target: ResourceTarget,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const pageSize = options.pageSize ?? 4096n;
  const before = await options.readCurrent(containerId);
  const memoryDiffers = !memoryMatches(target, before, pageSize);
  const cpuDiffers = !cpuMatches(target, before);
  if (!memoryDiffers && !cpuDiffers) return { outcome: 'Unchanged', current: before };

  if (memoryDiffers) {
    const refusal = memoryRefusal(`container ${containerId}`, target.memoryLimitInBytes, before);
    if (refusal !== undefined) {
      return {
        outcome: 'ResizeRefused',
        reason: AgentReasons.MemoryLimitBelowUsage,
        message: refusal,
        limitBytes: target.memoryLimitInBytes ?? 0n,
        usageBytes: before.memoryUsageInBytes,
        current: before,
      };
    }
  }

  const steps: ResizeStep[] = [];
  if (memoryDiffers) {
    await client.updateContainerResources(containerId, memoryStep(target));
    steps.push('memory');
  }
  if (cpuDiffers) {
    await client.updateContainerResources(containerId, cpuStep(target));
    steps.push('cpu');
  }
  const after = await options.readCurrent(containerId);
  return {
    outcome: 'Applied',
    steps,
    current: after,
    actuated: memoryMatches(target, after, pageSize) && cpuMatches(target, after),
  };
}
