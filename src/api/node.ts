// The shapes of what a node applies resources with, named here so the pure decisions about them
// (cri/pure/convert.ts, agent/pure/order.ts) never import the CRI client or the cgroup filesystem modules
// that read and write them: CRI's LinuxContainerResources, a pod cgroup's values, the cgroup
// version. Types only. Must not: do I/O, or know how a value is read or written.
import type { Labels } from './wire.js';

/** The node's cgroup hierarchy: v1 (legacy or hybrid) or v2 (unified). */
export type CgroupVersion = 1 | 2;

export interface HugepageLimit {
  /** "2MB", "1GB". */
  readonly pageSize: string;
  readonly limit: bigint;
}

/**
 * CRI LinuxContainerResources. Every int64 is a bigint; 0 / "" / empty means "not specified" on
 * the wire (proto3), and containerd leaves a not-specified value as it was on update.
 */
export interface LinuxContainerResources {
  readonly cpuPeriod: bigint;
  readonly cpuQuota: bigint;
  readonly cpuShares: bigint;
  readonly memoryLimitInBytes: bigint;
  readonly oomScoreAdj: bigint;
  readonly cpusetCpus: string;
  readonly cpusetMems: string;
  readonly hugepageLimits: readonly HugepageLimit[];
  readonly unified: Labels;
  readonly memorySwapLimitInBytes: bigint;
}

/** A pod cgroup's cpu/memory values; -1 = unlimited. */
export interface PodCgroupValues {
  readonly cpuShares: bigint;
  readonly cpuQuota: bigint;
  readonly cpuPeriod: bigint;
  readonly memoryLimitInBytes: bigint;
}
