// The kubelet's actuation order for one pod's resize (v1.34 kuberuntime_manager.go
// doPodResizeAction) as a plan of steps (planResize), and the pod cgroup values the kubelet gives a
// pod (podCgroupValues).
// Owns: that arithmetic and the order. Must not: do I/O, compare with cgroup reality beyond the
// current pod values it is given (agent/actuate.ts skips container steps that are already applied),
// or decide whether the resize is allowed (admission.ts).
import {
  milliCpuToQuota,
  milliCpuToShares,
  MIN_SHARES,
  QUOTA_PERIOD,
  toLinuxResources,
  type ConvertOptions,
  type CpuMemoryResources,
} from '../../cri/pure/convert.js';
import { parseQuantity, toBytes, toMilli } from '../../api/quantity.js';
import { isSidecar } from '../../api/pod.js';
import type { ContainerResources } from '../../resize/agent-protocol.js';
import type { PodCgroupValues } from '../../api/node.js';

export type { PodCgroupValues };

export type PlanStep =
  | { readonly kind: 'pod'; readonly resource: 'memory'; readonly values: Pick<PodCgroupValues, 'memoryLimitInBytes'> }
  | {
      readonly kind: 'pod';
      readonly resource: 'cpu';
      readonly values: Pick<PodCgroupValues, 'cpuShares' | 'cpuQuota' | 'cpuPeriod'>;
    }
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

/** A container of a pod spec as the pod cgroup values read it (a wire V1Container fits). */
export interface PodCgroupContainer {
  readonly name: string;
  readonly restartPolicy?: string | undefined;
  readonly resources?: ContainerResources | undefined;
}

/** The parts of a pod spec its pod cgroup values come from (a wire V1PodSpec fits). */
export interface PodCgroupSpec {
  readonly containers?: readonly PodCgroupContainer[] | undefined;
  readonly initContainers?: readonly PodCgroupContainer[] | undefined;
  /** The RuntimeClass's pod overhead, set by the API server at admission. */
  readonly overhead?: Readonly<Record<string, string>> | undefined;
  /** Pod-level requests and limits (PodLevelResources). */
  readonly resources?: ContainerResources | undefined;
}

type Resource = 'cpu' | 'memory';
const RESOURCES: readonly Resource[] = ['cpu', 'memory'];
const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/** One resource's pod totals, summed the way the kubelet sums them. */
interface Totals {
  request: bigint;
  limit: bigint;
  /** Every container (a plain init container with the sidecars before it) declares a limit. */
  everyLimit: boolean;
}

function totals(
  spec: PodCgroupSpec,
  resource: Resource,
  resourcesOf: (c: PodCgroupContainer) => ContainerResources | undefined,
): Totals {
  const t: Totals = { request: 0n, limit: 0n, everyLimit: true };
  const read = (c: PodCgroupContainer): { request: bigint; limit: bigint } => {
    const r = resourcesOf(c);
    const limit = value(resource, r?.limits?.[resource]) ?? 0n;
    // An absent request takes the limit (the API server's defaulting of pods).
    return { request: value(resource, r?.requests?.[resource]) ?? limit, limit };
  };
  for (const c of spec.containers ?? []) {
    const { request, limit } = read(c);
    t.request += request;
    t.limit += limit;
    if (limit === 0n) t.everyLimit = false;
  }
  const sidecars = { request: 0n, limit: 0n };
  const initPeak = { request: 0n, limit: 0n };
  for (const c of spec.initContainers ?? []) {
    const { request, limit } = read(c);
    let running: { request: bigint; limit: bigint };
    if (isSidecar(c)) {
      t.request += request;
      t.limit += limit;
      sidecars.request += request;
      sidecars.limit += limit;
      running = { ...sidecars };
    } else {
      running = { request: request + sidecars.request, limit: limit + sidecars.limit };
    }
    if (running.limit === 0n) t.everyLimit = false;
    initPeak.request = maxOf(initPeak.request, running.request);
    initPeak.limit = maxOf(initPeak.limit, running.limit);
  }
  t.request = maxOf(t.request, initPeak.request);
  t.limit = maxOf(t.limit, initPeak.limit);

  const podRequest = value(resource, spec.resources?.requests?.[resource]);
  const podLimit = value(resource, spec.resources?.limits?.[resource]);
  if (podRequest !== undefined) t.request = podRequest;
  if (podLimit !== undefined) t.limit = podLimit;
  if (podLimit !== undefined && podLimit > 0n) t.everyLimit = true;

  const overhead = value(resource, spec.overhead?.[resource]) ?? 0n;
  t.request += overhead;
  if (t.limit > 0n) t.limit += overhead;
  return t;
}

/** No container and no pod-level resources ask for any cpu or memory: the pod is BestEffort. */
function bestEffort(
  spec: PodCgroupSpec,
  resourcesOf: (c: PodCgroupContainer) => ContainerResources | undefined,
): boolean {
  const asks = (r: ContainerResources | undefined): boolean =>
    RESOURCES.some(
      (name) => (value(name, r?.requests?.[name]) ?? 0n) > 0n || (value(name, r?.limits?.[name]) ?? 0n) > 0n,
    );
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  return !containers.some((c) => asks(resourcesOf(c))) && !asks(spec.resources);
}

/**
 * The pod cgroup values the kubelet gives a pod with this spec, with `resources[name]` in place of
 * the spec's resources for the containers it names (the resized ones). Throws on an unreadable
 * quantity.
 * They are the kubelet's ResourceConfigForPod over the whole pod spec, so a resize of one resource
 * never rewrites another's pod value (a pod's RuntimeClass overhead and its init containers are in
 * the cgroup the kubelet made): requests and limits each add up over the regular containers and
 * the sidecars (restartable init containers); a plain init container runs with the sidecars
 * started before it, and that sum counts as a maximum; pod-level resources (spec.resources)
 * replace the containers' totals; the overhead adds to the requests, and to a limit only when
 * there is one. Cpu shares come from the requests (a BestEffort pod gets the minimum); a cpu quota
 * and a memory limit only when every container declares that limit (a plain init container counts
 * with the sidecars before it), or the pod does, unlimited (-1) otherwise.
 */
export function podCgroupValues(
  spec: PodCgroupSpec,
  resources: Readonly<Record<string, ContainerResources>> = {},
): PodCgroupValues {
  const resourcesOf = (c: PodCgroupContainer): ContainerResources | undefined => resources[c.name] ?? c.resources;
  if (bestEffort(spec, resourcesOf))
    return { cpuShares: MIN_SHARES, cpuQuota: -1n, cpuPeriod: QUOTA_PERIOD, memoryLimitInBytes: -1n };
  const cpu = totals(spec, 'cpu', resourcesOf);
  const memory = totals(spec, 'memory', resourcesOf);
  return {
    cpuShares: milliCpuToShares(cpu.request),
    cpuQuota: cpu.everyLimit && cpu.limit > 0n ? milliCpuToQuota(cpu.limit, QUOTA_PERIOD) : -1n,
    cpuPeriod: QUOTA_PERIOD,
    memoryLimitInBytes: memory.everyLimit && memory.limit > 0n ? memory.limit : -1n,
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
  /** The pod's spec (all its containers, overhead, pod-level resources): the pod values count all of it. */
  readonly pod: PodCgroupSpec;
  /** The pod cgroup's values now. */
  readonly currentPod: PodCgroupValues;
  /** The resizable containers' resources in effect now. */
  readonly current: Readonly<Record<string, ContainerResources>>;
  /** The resizable containers' resources after the resize (the request's over the current); others count with their spec. */
  readonly desired: Readonly<Record<string, ContainerResources>>;
  /** The containers to update (the request's); others only count for the pod values. */
  readonly resize: readonly string[];
  readonly convert?: ConvertOptions;
}

/**
 * The steps, in order: memory before cpu; per resource, the pod cgroup is raised first when it
 * grows and lowered last when it shrinks, with the containers in between (containers that shrink
 * before those that grow, so the pod never holds both at once). A resource whose pod values go up
 * and down at once (cpu limit up, request down) gets the raised values first and the final ones
 * last. Throws on an unreadable quantity.
 */
export function planResize(input: PlanInput): PlanStep[] {
  const desiredPod = podCgroupValues(input.pod, input.desired);
  const cur = input.currentPod;
  const convert = (r: ContainerResources | undefined): CpuMemoryResources => toLinuxResources(r ?? {}, input.convert);
  const containers = input.resize.map((name) => ({
    name,
    now: convert(input.current[name]),
    next: convert(input.desired[name]),
  }));
  const steps: PlanStep[] = [];

  // memory
  const memoryShrinks = (c: (typeof containers)[number]): boolean =>
    limitBelow(c.next.memoryLimitInBytes, c.now.memoryLimitInBytes);
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
