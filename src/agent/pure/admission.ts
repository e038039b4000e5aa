// The node agent's resize admission (docs/architecture.md §3.2 An agent resize): the kubelet's
// canResizePod rule for nodes whose kubelet cannot resize (admit).
// Owns: the pod request arithmetic (containers + sidecars, init containers as a max, overhead) and
// the verdict. Must not: do I/O, read annotations (the caller passes what the agent applied),
// or decide what to do with the verdict (decide.ts decide()).
import { parseQuantity, toBytes, toMilli } from '../../api/quantity.js';
import { isSidecar } from '../../api/pod.js';
import type { Pod } from '../../api/wire.js';
import type { ContainerResources, ResizeRequest } from '../../resize/agent-protocol.js';
import { errorMessage } from '../../api/errors.js';
import { AdmissionReasons } from '../../api/reasons.js';

/** A node's allocatable cpu and memory (node.status.allocatable). */
export interface Allocatable {
  readonly cpuMilli: bigint;
  readonly memoryBytes: bigint;
}

/** What a pod asks of the node. */
export interface PodRequest {
  readonly cpuMilli: bigint;
  readonly memoryBytes: bigint;
}

/** Pod UID → container name → what the agent applied to that container. */
export type AppliedByPod = ReadonlyMap<string, Readonly<Record<string, ContainerResources>>>;

export type AdmissionResult =
  | { readonly decision: 'Admit' }
  | { readonly decision: 'Deferred' | 'Infeasible'; readonly reason: string; readonly message: string };

type Resource = 'cpu' | 'memory';

function amount(resource: Resource, text: string | undefined, what: string): bigint | undefined {
  if (text === undefined) return undefined;
  try {
    const q = parseQuantity(text, { allowNegative: false });
    return resource === 'cpu' ? toMilli(q) : toBytes(q);
  } catch (err) {
    throw new Error(`${what} ${resource} ${JSON.stringify(text)} is not a valid quantity`, { cause: err });
  }
}

/** A container's request of one resource; an absent request takes the limit (the API server's defaulting). */
function containerRequest(resource: Resource, r: ContainerResources | undefined, what: string): bigint {
  return (
    amount(resource, r?.requests?.[resource], `${what} request`) ??
    amount(resource, r?.limits?.[resource], `${what} limit`) ??
    0n
  );
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * The pod's request as the scheduler and kubelet count it (resourcehelper.PodRequests): regular
 * containers and sidecars add up; a plain init container runs alone (with the sidecars started
 * before it), so it counts as a maximum; pod overhead adds. `resources(name, spec)` gives the
 * resources to count for a container (the spec's by default).
 * Throws on an unreadable quantity.
 */
export function podRequest(
  pod: Pod,
  resources: (name: string, spec: ContainerResources | undefined) => ContainerResources | undefined = (_, spec) => spec,
): PodRequest {
  const total = { cpu: 0n, memory: 0n };
  const initPeak = { cpu: 0n, memory: 0n };
  const sidecars = { cpu: 0n, memory: 0n };
  const podName = pod.metadata?.name ?? '';
  for (const c of pod.spec?.initContainers ?? []) {
    const r = resources(c.name, c.resources);
    for (const name of ['cpu', 'memory'] as const) {
      const value = containerRequest(name, r, `pod ${podName} init container ${c.name}`);
      if (isSidecar(c)) {
        sidecars[name] += value;
      } else {
        initPeak[name] = max(initPeak[name], sidecars[name] + value);
      }
    }
  }
  for (const c of pod.spec?.containers ?? []) {
    const r = resources(c.name, c.resources);
    for (const name of ['cpu', 'memory'] as const)
      total[name] += containerRequest(name, r, `pod ${podName} container ${c.name}`);
  }
  const overheadCpu = amount('cpu', pod.spec?.overhead?.['cpu'], `pod ${podName} overhead`) ?? 0n;
  const overheadMemory = amount('memory', pod.spec?.overhead?.['memory'], `pod ${podName} overhead`) ?? 0n;
  return {
    cpuMilli: max(total.cpu + sidecars.cpu, initPeak.cpu) + overheadCpu,
    memoryBytes: max(total.memory + sidecars.memory, initPeak.memory) + overheadMemory,
  };
}

/** A pod's request with the resize request's resources in place of the spec's for the containers it names. */
export function requestedPodRequest(pod: Pod, request: ResizeRequest): PodRequest {
  return podRequest(pod, (name, spec) => request.containers[name] ?? spec);
}

/**
 * A pod's total limit with the resize request in place (containers without a limit count 0: they
 * are bounded by the node itself), counted like requests (init containers as a maximum, overhead).
 */
export function requestedPodLimit(pod: Pod, request: ResizeRequest): PodRequest {
  return podRequest(pod, (name, spec) => {
    const limits = (request.containers[name] ?? spec)?.limits ?? {};
    const requests: { cpu?: string; memory?: string } = {};
    if (limits.cpu !== undefined) requests.cpu = limits.cpu;
    if (limits.memory !== undefined) requests.memory = limits.memory;
    return { requests };
  });
}

/**
 * A pod's effective request: per container, the larger of the spec's request and the request the
 * agent applied (each resource on its own).
 */
export function effectivePodRequest(
  pod: Pod,
  applied: Readonly<Record<string, ContainerResources>> | undefined,
): PodRequest {
  if (applied === undefined) return podRequest(pod);
  const podName = pod.metadata?.name ?? '';
  return podRequest(pod, (name, spec) => {
    const done = applied[name];
    if (done === undefined) return spec;
    const cpu = max(
      containerRequest('cpu', spec, `pod ${podName} container ${name}`),
      containerRequest('cpu', done, `pod ${podName} applied ${name}`),
    );
    const memory = max(
      containerRequest('memory', spec, `pod ${podName} container ${name}`),
      containerRequest('memory', done, `pod ${podName} applied ${name}`),
    );
    return { requests: { cpu: `${cpu}m`, memory: `${memory}` } };
  });
}

/** Pods that hold node resources: not finished (Succeeded/Failed pods free theirs). */
export function holdsResources(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/** An other pod's effective request; an unreadable applied value counts as the spec (the API server validated the spec). */
function usedBy(pod: Pod, applied: Readonly<Record<string, ContainerResources>> | undefined): PodRequest {
  try {
    return effectivePodRequest(pod, applied);
  } catch {
    try {
      return podRequest(pod);
    } catch {
      return { cpuMilli: 0n, memoryBytes: 0n };
    }
  }
}

const formatCpu = (milli: bigint): string => `${milli}m`;
const formatMemory = (bytes: bigint): string => `${bytes}`;

/** Infeasible when `amount` is beyond the node's allocatable in cpu or memory (`what` names requests or limits). */
function beyondNode(
  amount: PodRequest,
  allocatable: Allocatable,
  reason: string,
  what: string,
): AdmissionResult | undefined {
  const checks = [
    { name: 'cpu', want: amount.cpuMilli, capacity: allocatable.cpuMilli, fmt: formatCpu },
    { name: 'memory', want: amount.memoryBytes, capacity: allocatable.memoryBytes, fmt: formatMemory },
  ] as const;
  const c = checks.find((x) => x.want > x.capacity);
  if (!c) return undefined;
  return {
    decision: 'Infeasible',
    reason,
    message: `Node didn't have enough capacity: ${c.name}${what}, requested: ${c.fmt(c.want)}, capacity: ${c.fmt(c.capacity)}`,
  };
}

/**
 * Whether the node can give `pod` the resources of `request`. `otherPods` are the node's pods
 * (the pod itself and finished pods are skipped here); `appliedByOthers` what the agent applied
 * to them, by pod UID. The pod's new total request must fit the node's allocatable outright (else
 * Infeasible: no amount of waiting helps), and so must its total limit (a limit above the whole
 * node is a request in disguise: the scheduler never saw it, because the pod spec does not change
 * on this path); and the request must fit what the other pods leave of it now (else Deferred:
 * retried when pods come and go). The other pods count with their effective request
 * (effectivePodRequest: a resize the agent actuated is real on the node even though the pod spec
 * never changed).
 */
export function admit(
  request: ResizeRequest,
  pod: Pod,
  allocatable: Allocatable,
  otherPods: readonly Pod[],
  appliedByOthers: AppliedByPod,
): AdmissionResult {
  let wanted: PodRequest;
  let limit: PodRequest;
  let used: PodRequest = { cpuMilli: 0n, memoryBytes: 0n };
  try {
    wanted = requestedPodRequest(pod, request);
    limit = requestedPodLimit(pod, request);
  } catch (err) {
    return { decision: 'Infeasible', reason: AdmissionReasons.InvalidRequest, message: errorMessage(err) };
  }
  const uid = pod.metadata?.uid;
  for (const other of otherPods) {
    if (other.metadata?.uid === uid || !holdsResources(other)) continue;
    const r = usedBy(other, appliedByOthers.get(other.metadata?.uid ?? ''));
    used = { cpuMilli: used.cpuMilli + r.cpuMilli, memoryBytes: used.memoryBytes + r.memoryBytes };
  }

  const checks = [
    { name: 'cpu', want: wanted.cpuMilli, capacity: allocatable.cpuMilli, used: used.cpuMilli, fmt: formatCpu },
    {
      name: 'memory',
      want: wanted.memoryBytes,
      capacity: allocatable.memoryBytes,
      used: used.memoryBytes,
      fmt: formatMemory,
    },
  ] as const;
  const infeasible =
    beyondNode(wanted, allocatable, AdmissionReasons.ExceedsAllocatable, '') ??
    beyondNode(limit, allocatable, AdmissionReasons.LimitExceedsAllocatable, ' limit');
  if (infeasible) return infeasible;
  for (const c of checks) {
    if (c.want > c.capacity - c.used) {
      return {
        decision: 'Deferred',
        reason: AdmissionReasons.InsufficientNodeResources,
        message: `Node didn't have enough resource: ${c.name}, requested: ${c.fmt(c.want)}, used: ${c.fmt(c.used)}, capacity: ${c.fmt(c.capacity)}`,
      };
    }
  }
  return { decision: 'Admit' };
}

/** A node's allocatable cpu/memory; undefined when the node does not report both. Throws on an unreadable quantity. */
export function nodeAllocatable(allocatable: Readonly<Record<string, string>> | undefined): Allocatable | undefined {
  const cpu = amount('cpu', allocatable?.['cpu'], 'node allocatable');
  const memory = amount('memory', allocatable?.['memory'], 'node allocatable');
  return cpu === undefined || memory === undefined ? undefined : { cpuMilli: cpu, memoryBytes: memory };
}
