// The cgroup v2 file values for cpu shares, CFS quota and memory limit (cpu.weight, cpu.max,
// memory.max), both ways: what the kubelet writes for a pod cgroup, what a runtime writes for a
// container, and the shares a cpu.weight was written for. Owns: that arithmetic. Pure: no I/O.
// Must not: read or write a cgroup (container.ts, pod.ts do), or convert pod resources
// (cri/pure/convert.ts does).
import { MAX_SHARES, MIN_SHARES, QUOTA_PERIOD, type CpuMemoryResources } from '../../cri/pure/convert.js';

export const MIN_CPU_WEIGHT = 1n;
export const MAX_CPU_WEIGHT = 10_000n;

/** The cgroup v2 file values for a CpuMemoryResources. */
export interface CgroupV2Values {
  /** cpu.weight, 1..10000. */
  readonly cpuWeight: bigint;
  /** cpu.max: "<quota> <period>" or "max <period>". */
  readonly cpuMax: string;
  /** memory.max: bytes or "max". */
  readonly memoryMax: string;
}

/**
 * cpu.weight for cpu shares, the linear map of the kubelet's getCPUWeight (pod cgroups) and of
 * runc up to opencontainers/cgroups v0.0.1 (containers): 1 + ((shares-2)*9999)/262142, with
 * shares clamped to [2, 262144] so the result is always in [1, 10000].
 */
export function sharesToCpuWeight(shares: bigint): bigint {
  const s = shares < MIN_SHARES ? MIN_SHARES : shares > MAX_SHARES ? MAX_SHARES : shares;
  return 1n + ((s - 2n) * 9_999n) / 262_142n;
}

/**
 * cpu.weight as newer runc writes it for containers (opencontainers/cgroups v0.0.6
 * ConvertCPUSharesToCgroupV2Value: a quadratic in log2(shares) through (2,1), (1024,100),
 * (262144,10000)). Only for recognising what such a runtime wrote; the kubelet's pod cgroups use
 * the linear map.
 */
export function sharesToCpuWeightQuadratic(shares: bigint): bigint {
  if (shares <= 0n) return 0n;
  if (shares <= MIN_SHARES) return MIN_CPU_WEIGHT;
  if (shares >= MAX_SHARES) return MAX_CPU_WEIGHT;
  const l = Math.log2(Number(shares));
  const exponent = (l * l + 125 * l) / 612 - 7 / 34;
  return BigInt(Math.ceil(10 ** exponent));
}

/** cpu.max for a CFS quota and period: a quota <= 0 (0 = not set, -1 = unlimited) is "max". */
export function cpuMaxValue(quota: bigint, period: bigint = QUOTA_PERIOD): string {
  const p = period > 0n ? period : QUOTA_PERIOD;
  return `${quota > 0n ? quota.toString() : 'max'} ${p.toString()}`;
}

/** memory.max for a memory limit: <= 0 (0 = not set, -1 = unlimited) is "max". */
export function memoryMaxValue(limitBytes: bigint): string {
  return limitBytes > 0n ? limitBytes.toString() : 'max';
}

export function toCgroupV2Values(
  r: Pick<CpuMemoryResources, 'cpuShares' | 'cpuQuota' | 'cpuPeriod' | 'memoryLimitInBytes'>,
): CgroupV2Values {
  return {
    cpuWeight: sharesToCpuWeight(r.cpuShares),
    cpuMax: cpuMaxValue(r.cpuQuota, r.cpuPeriod),
    memoryMax: memoryMaxValue(r.memoryLimitInBytes),
  };
}

/** The shares a v2 cpu.weight was written for (inverse of the kubelet's linear map; exact up to rounding). */
export function cpuWeightToShares(weight: bigint): bigint {
  const shares = 2n + ((weight - 1n) * 262_142n + 9_998n) / 9_999n;
  return shares < MIN_SHARES ? MIN_SHARES : shares > MAX_SHARES ? MAX_SHARES : shares;
}
