// The kubelet's actuation order for one pod's resize (v1.34 kuberuntime_manager.go
// doPodResizeAction), as a plan of steps: memory before cpu; per resource, the pod cgroup is
// raised first when it grows and lowered last when it shrinks, with the containers in between
// (containers that shrink before those that grow, so the pod never holds both at once). A resource
// whose pod values go up and down at once (cpu limit up, request down) gets the raised values
// first and the final ones last.
// Pod-level values are the kubelet's ResourceConfigForPod: cpu shares from the sum of the cpu
// requests; a cpu quota and a memory limit only when every container has that limit (their sum),
// unlimited (-1) otherwise. Plain init containers are not counted (they have finished by the
// time a running pod is resized; the kubelet's max(init, sum) only matters while they run).
// Owns: that arithmetic and the order. Must not: do I/O, compare with cgroup reality beyond the
// current pod values it is given (actuate.ts skips container steps that are already applied),
// or decide whether the resize is allowed (admission.ts).
import {
  milliCpuToQuota,
  milliCpuToShares,
  QUOTA_PERIOD,
  toLinuxResources,
  type ConvertOptions,
  type CpuMemoryResources,
} from '../cri/convert.js';
import { parseQuantity, toBytes, toMilli } from '../api/quantity.js';
import type { ContainerResources } from '../resize/agent-protocol.js';
import type { PodCgroupValues } from '../cgroup/pod.js';

export type { PodCgroupValues };

export type PlanStep =
  | { readonly kind: 'pod'; readonly resource: 'memory'; readonly values: Pick<PodCgroupValues, 'memoryLimitInBytes'> }
  | { readonly kind: 'pod'; readonly resource: 'cpu'; readonly values: Pick<PodCgroupValues, 'cpuShares' | 'cpuQuota' | 'cpuPeriod'> }
  | {
      readonly kind: 'container';
      readonly resource: 'memory' | 'cpu';
      readonly container: string;
      readonly target: Partial<CpuMemoryResources>;
    };

function value(resource: 'cpu' | 'memory', text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  const q = parseQuantity(text, { allowNegative: false });
  return resource === 'cpu' ? toMilli(q) : toBytes(q);
}

/**
 * The pod cgroup values for containers with these resources (every container of the pod that a
 * resize counts: regular containers and sidecars). Throws on an unreadable quantity.
 */
export function podCgroupValues(containers: Readonly<Record<string, ContainerResources>>): PodCgroupValues {
  let cpuRequests = 0n;
  let cpuLimits = 0n;
  let memoryLimits = 0n;
  let everyCpuLimit = true;
  let everyMemoryLimit = true;
  for (const r of Object.values(containers)) {
    const cpuLimit = value('cpu', r.limits?.cpu);
    const memoryLimit = value('memory', r.limits?.memory);
    cpuRequests += value('cpu', r.requests?.cpu) ?? cpuLimit ?? 0n;
    if (cpuLimit === undefined) everyCpuLimit = false;
    else cpuLimits += cpuLimit;
    if (memoryLimit === undefined) everyMemoryLimit = false;
    else memoryLimits += memoryLimit;
  }
  const any = Object.keys(containers).length > 0;
  return {
    cpuShares: milliCpuToShares(cpuRequests),
    cpuQuota: any && everyCpuLimit ? milliCpuToQuota(cpuLimits, QUOTA_PERIOD) : -1n,
    cpuPeriod: QUOTA_PERIOD,
    memoryLimitInBytes: any && everyMemoryLimit ? memoryLimits : -1n,
  };
}

/** a < b for limits where -1 (or 0 for a container's "not set") is unlimited. */
function limitBelow(a: bigint, b: bigint): boolean {
  const inf = (x: bigint): boolean => x <= 0n;
  if (inf(a)) return false;
  return inf(b) || a < b;
}
const limitMax = (a: bigint, b: bigint): bigint => (a <= 0n || b <= 0n ? -1n : a > b ? a : b);

export interface PlanInput {
  /** The pod cgroup's values now. */
  readonly currentPod: PodCgroupValues;
  /** Every counted container's resources in effect now. */
  readonly current: Readonly<Record<string, ContainerResources>>;
  /** Every counted container's resources after the resize (the request's over the current). */
  readonly desired: Readonly<Record<string, ContainerResources>>;
  /** The containers to update (the request's); others only count for the pod values. */
  readonly resize: readonly string[];
  readonly convert?: ConvertOptions;
}

/** The steps, in order. Throws on an unreadable quantity. */
export function planResize(input: PlanInput): PlanStep[] {
  const desiredPod = podCgroupValues(input.desired);
  const cur = input.currentPod;
  const convert = (r: ContainerResources | undefined): CpuMemoryResources => toLinuxResources(r ?? {}, input.convert);
  const containers = input.resize.map((name) => ({ name, now: convert(input.current[name]), next: convert(input.desired[name]) }));
  const steps: PlanStep[] = [];

  // memory
  const memoryShrinks = (c: (typeof containers)[number]): boolean => limitBelow(c.next.memoryLimitInBytes, c.now.memoryLimitInBytes);
  if (limitBelow(cur.memoryLimitInBytes, desiredPod.memoryLimitInBytes)) {
    steps.push({ kind: 'pod', resource: 'memory', values: { memoryLimitInBytes: desiredPod.memoryLimitInBytes } });
  }
  for (const c of [...containers.filter(memoryShrinks), ...containers.filter((c) => !memoryShrinks(c))]) {
    steps.push({
      kind: 'container',
      resource: 'memory',
      container: c.name,
      target: {
        memoryLimitInBytes: c.next.memoryLimitInBytes,
        memorySwapLimitInBytes: c.next.memorySwapLimitInBytes,
        unified: c.next.unified,
      },
    });
  }
  if (limitBelow(desiredPod.memoryLimitInBytes, cur.memoryLimitInBytes)) {
    steps.push({ kind: 'pod', resource: 'memory', values: { memoryLimitInBytes: desiredPod.memoryLimitInBytes } });
  }

  // cpu
  const cpuShrinks = (c: (typeof containers)[number]): boolean =>
    c.next.cpuShares < c.now.cpuShares || limitBelow(c.next.cpuQuota, c.now.cpuQuota);
  const raised = {
    cpuShares: cur.cpuShares > desiredPod.cpuShares ? cur.cpuShares : desiredPod.cpuShares,
    cpuQuota: limitMax(cur.cpuQuota, desiredPod.cpuQuota),
    cpuPeriod: desiredPod.cpuPeriod,
  };
  const final = { cpuShares: desiredPod.cpuShares, cpuQuota: desiredPod.cpuQuota, cpuPeriod: desiredPod.cpuPeriod };
  const same = (a: typeof raised, b: Pick<PodCgroupValues, 'cpuShares' | 'cpuQuota' | 'cpuPeriod'>): boolean =>
    a.cpuShares === b.cpuShares && a.cpuQuota === b.cpuQuota && a.cpuPeriod === b.cpuPeriod;
  if (!same(raised, cur)) steps.push({ kind: 'pod', resource: 'cpu', values: raised });
  for (const c of [...containers.filter(cpuShrinks), ...containers.filter((c) => !cpuShrinks(c))]) {
    steps.push({
      kind: 'container',
      resource: 'cpu',
      container: c.name,
      target: { cpuShares: c.next.cpuShares, cpuQuota: c.next.cpuQuota, cpuPeriod: c.next.cpuPeriod },
    });
  }
  if (!same(final, raised)) steps.push({ kind: 'pod', resource: 'cpu', values: final });
  return steps;
}
