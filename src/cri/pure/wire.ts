// The CRI messages as proto-loader hands them over (keepCase, longs as decimal strings, enums as
// names) and the mappers between them and the typed values of types.ts.
// Owns: the wire shapes and the pure conversions. Must not: talk to the runtime or fill in a
// value the runtime did not send (an absent int64 reads as 0, an absent map as empty).
import type { Container, ContainerFilter, ContainerMetadata, ContainerState, ContainerStatus } from '../types.js';
import type { LinuxContainerResources } from '../../api/node.js';

/** An int64 as proto-loader gives it with `longs: String`. */
export type WireInt64 = string;
export type WireMap = Record<string, string>;

export interface WireResources {
  cpu_period?: WireInt64;
  cpu_quota?: WireInt64;
  cpu_shares?: WireInt64;
  memory_limit_in_bytes?: WireInt64;
  oom_score_adj?: WireInt64;
  cpuset_cpus?: string;
  cpuset_mems?: string;
  hugepage_limits?: { page_size: string; limit: WireInt64 }[];
  unified?: WireMap;
  memory_swap_limit_in_bytes?: WireInt64;
}
interface WireContainerMetadata {
  name: string;
  attempt: number;
}
interface WireImageSpec {
  image: string;
}
export interface WireContainer {
  id: string;
  pod_sandbox_id: string;
  metadata: WireContainerMetadata | null;
  image: WireImageSpec | null;
  image_ref: string;
  image_id: string;
  state: ContainerState;
  created_at: WireInt64;
  labels: WireMap;
  annotations: WireMap;
}
export interface WireContainerStatus {
  id: string;
  metadata: WireContainerMetadata | null;
  state: ContainerState;
  created_at: WireInt64;
  started_at: WireInt64;
  finished_at: WireInt64;
  exit_code: number;
  image: WireImageSpec | null;
  image_ref: string;
  image_id: string;
  reason: string;
  message: string;
  labels: WireMap;
  annotations: WireMap;
  log_path: string;
  resources: { linux: Required<WireResources> | null } | null;
}

export const big = (v: WireInt64 | undefined | null): bigint =>
  v === undefined || v === null || v === '' ? 0n : BigInt(v);

export function resourcesToWire(r: Partial<LinuxContainerResources>): WireResources {
  const wire: WireResources = {};
  if (r.cpuPeriod !== undefined) wire.cpu_period = r.cpuPeriod.toString();
  if (r.cpuQuota !== undefined) wire.cpu_quota = r.cpuQuota.toString();
  if (r.cpuShares !== undefined) wire.cpu_shares = r.cpuShares.toString();
  if (r.memoryLimitInBytes !== undefined) wire.memory_limit_in_bytes = r.memoryLimitInBytes.toString();
  if (r.oomScoreAdj !== undefined) wire.oom_score_adj = r.oomScoreAdj.toString();
  if (r.cpusetCpus !== undefined) wire.cpuset_cpus = r.cpusetCpus;
  if (r.cpusetMems !== undefined) wire.cpuset_mems = r.cpusetMems;
  if (r.hugepageLimits !== undefined) {
    wire.hugepage_limits = r.hugepageLimits.map((h) => ({ page_size: h.pageSize, limit: h.limit.toString() }));
  }
  if (r.unified !== undefined) wire.unified = { ...r.unified };
  if (r.memorySwapLimitInBytes !== undefined) wire.memory_swap_limit_in_bytes = r.memorySwapLimitInBytes.toString();
  return wire;
}

export function resourcesFromWire(w: WireResources): LinuxContainerResources {
  return {
    cpuPeriod: big(w.cpu_period),
    cpuQuota: big(w.cpu_quota),
    cpuShares: big(w.cpu_shares),
    memoryLimitInBytes: big(w.memory_limit_in_bytes),
    oomScoreAdj: big(w.oom_score_adj),
    cpusetCpus: w.cpuset_cpus ?? '',
    cpusetMems: w.cpuset_mems ?? '',
    hugepageLimits: (w.hugepage_limits ?? []).map((h) => ({ pageSize: h.page_size, limit: big(h.limit) })),
    unified: { ...(w.unified ?? {}) },
    memorySwapLimitInBytes: big(w.memory_swap_limit_in_bytes),
  };
}

/** ListContainers' filter; no filter lists every container. */
export function containerFilterToWire(filter: ContainerFilter | undefined): object | undefined {
  if (filter === undefined) return undefined;
  return {
    id: filter.id ?? '',
    state: filter.state === undefined ? undefined : { state: filter.state },
    pod_sandbox_id: filter.podSandboxId ?? '',
    label_selector: { ...(filter.labelSelector ?? {}) },
  };
}

function containerMetadataFromWire(m: WireContainerMetadata | null): ContainerMetadata | undefined {
  return m === null ? undefined : { name: m.name, attempt: m.attempt };
}

export function containerFromWire(c: WireContainer): Container {
  return {
    id: c.id,
    podSandboxId: c.pod_sandbox_id,
    metadata: containerMetadataFromWire(c.metadata),
    image: c.image?.image ?? '',
    imageRef: c.image_ref,
    imageId: c.image_id,
    state: c.state,
    createdAt: big(c.created_at),
    labels: { ...c.labels },
    annotations: { ...c.annotations },
  };
}

export function containerStatusFromWire(s: WireContainerStatus): ContainerStatus {
  const linux = s.resources?.linux ?? null;
  return {
    id: s.id,
    metadata: containerMetadataFromWire(s.metadata),
    state: s.state,
    createdAt: big(s.created_at),
    startedAt: big(s.started_at),
    finishedAt: big(s.finished_at),
    exitCode: s.exit_code,
    image: s.image?.image ?? '',
    imageRef: s.image_ref,
    imageId: s.image_id,
    reason: s.reason,
    message: s.message,
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    logPath: s.log_path,
    resources: linux === null ? undefined : resourcesFromWire(linux),
  };
}
