// Reads a pod's resize state as the node reports it, in either of the kubelet's two vocabularies
// (conditions since 1.33, status.resize before: podResizeView), and maps it onto Tailor's four
// states (docs/architecture.md §4.3 Resize states). Owns: that mapping, the "resize is done" test (spec == what the node reports, with the kubelet's
// own minimum-value equivalences), and whether a pod's kubelet can resize at all (docs/architecture.md §4.4 Two resize backends).
// Must not: do I/O, remember anything between calls, or decide what to do about a state
// (outcome.ts does); a pod is judged from itself alone, so the answer survives controller restarts.
import type * as k8s from '@kubernetes/client-node';
import { isResizeState, LABEL_CONTROLLER_REVISION_HASH, type ResizeState } from '../api/types.js';
import { parseInPlaceUpdateState, type ParsedInPlaceUpdateState } from '../api/schemas.js';
import { parseQuantity, toBytes, toMilli, type Quantity } from '../api/quantity.js';
import { podCondition, sidecarContainers } from '../api/pod.js';
import { ResizeViewReasons } from '../api/reasons.js';
import type { Pod, Wire } from '../api/wire.js';
import { readResizeRequest } from './agent-protocol.js';
import { agentResizeView } from './agent-view.js';
import type { ResizeView } from './view.js';
import { perObject } from '../api/memo.js';

type Resources = Wire<k8s.V1ResourceRequirements>;
type Condition = Wire<k8s.V1PodCondition>;
type ContainerStatus = Wire<k8s.V1ContainerStatus>;

/** The pod conditions the kubelet reports resizes with (Kubernetes ≥ 1.33). */
export const POD_RESIZE_PENDING = 'PodResizePending';
export const POD_RESIZE_IN_PROGRESS = 'PodResizeInProgress';

/** The kubelet's minimum effective cpu request (MinShares, in millicores). */
const MIN_CPU_REQUEST_MILLI = 2n;
/** The kubelet's minimum effective cpu limit (MinMilliCPULimit: 1ms quota per 100ms period). */
const MIN_CPU_LIMIT_MILLI = 10n;

function quantity(value: string | undefined): Quantity | undefined {
  if (value === undefined) return undefined;
  try {
    return parseQuantity(value);
  } catch {
    return undefined;
  }
}

/** A cpu request (absent = 0) compared like the kubelet: both at or below 2m are the same. */
function cpuRequestEqual(spec: string | undefined, actual: string | undefined): boolean {
  const a = spec === undefined ? 0n : quantity(spec);
  const b = actual === undefined ? 0n : quantity(actual);
  if (a === undefined || b === undefined) return spec === actual;
  const am = typeof a === 'bigint' ? a : toMilli(a);
  const bm = typeof b === 'bigint' ? b : toMilli(b);
  return am === bm || (am <= MIN_CPU_REQUEST_MILLI && bm <= MIN_CPU_REQUEST_MILLI);
}

/** A cpu limit (absent = unlimited) compared like the kubelet: both at or below 10m are the same. */
function cpuLimitEqual(spec: string | undefined, actual: string | undefined): boolean {
  if (spec === undefined || actual === undefined) return spec === actual;
  const a = quantity(spec);
  const b = quantity(actual);
  if (a === undefined || b === undefined) return spec === actual;
  const am = toMilli(a);
  const bm = toMilli(b);
  return am === bm || (am <= MIN_CPU_LIMIT_MILLI && bm <= MIN_CPU_LIMIT_MILLI);
}

/** Memory in bytes; a request may be absent (= 0), a limit absent means unlimited. */
function memoryEqual(spec: string | undefined, actual: string | undefined, absentIsZero: boolean): boolean {
  if (!absentIsZero && (spec === undefined || actual === undefined)) return spec === actual;
  const a = spec === undefined ? 0n : quantity(spec);
  const b = actual === undefined ? 0n : quantity(actual);
  if (a === undefined || b === undefined) return spec === actual;
  return (typeof a === 'bigint' ? a : toBytes(a)) === (typeof b === 'bigint' ? b : toBytes(b));
}

/**
 * Whether a container's spec resources and the resources its status reports are the same as far
 * as the kubelet is concerned: cpu and memory requests and limits only (other resources cannot be
 * resized), quantities compared by value ("1000m" == "1", "128Mi" == "134217728"), a cpu request
 * at or below 2m equal to any other such request, a cpu limit at or below 10m to any other such
 * limit. An absent request counts as 0; an absent limit equals only an absent limit.
 * (The kubelet keeps the allocated cpu request in the status when both the allocated and the
 * actual value are at or below MinShares, 2m, and the allocated cpu limit when both are at or
 * below MinMilliCPULimit, 10m: kubelet_pods.go, cm/helpers_linux.go; older kubelets report the
 * clamped value instead, so those ranges compare equal.)
 */
export function resourcesEquivalent(spec: Resources | undefined, actual: Resources | undefined): boolean {
  return (
    cpuRequestEqual(spec?.requests?.['cpu'], actual?.requests?.['cpu']) &&
    memoryEqual(spec?.requests?.['memory'], actual?.requests?.['memory'], true) &&
    cpuLimitEqual(spec?.limits?.['cpu'], actual?.limits?.['cpu']) &&
    memoryEqual(spec?.limits?.['memory'], actual?.limits?.['memory'], false)
  );
}

/** Describes the first cpu/memory value that differs, for a message ("cpu request 200m, node reports 100m"). */
function describeDifference(spec: Resources | undefined, actual: Resources | undefined): string {
  const parts = [
    ['requests', 'cpu', cpuRequestEqual],
    ['requests', 'memory', (a: string | undefined, b: string | undefined) => memoryEqual(a, b, true)],
    ['limits', 'cpu', cpuLimitEqual],
    ['limits', 'memory', (a: string | undefined, b: string | undefined) => memoryEqual(a, b, false)],
  ] as const;
  for (const [part, name, equal] of parts) {
    const want = spec?.[part]?.[name];
    const have = actual?.[part]?.[name];
    if (!equal(want, have)) {
      return `${name} ${part === 'requests' ? 'request' : 'limit'} ${want ?? 'unset'}, node reports ${have ?? 'unset'}`;
    }
  }
  return 'resources differ';
}

/**
 * Containers a resize can touch, paired with their status: regular containers and sidecars
 * (restartable init containers); plain init containers cannot be resized and are left out.
 */
function resizableContainerStatuses(
  pod: Pod,
): { name: string; spec: Resources | undefined; status: ContainerStatus | undefined }[] {
  const statuses = new Map<string, ContainerStatus>();
  for (const s of pod.status?.initContainerStatuses ?? []) statuses.set(`init/${s.name}`, s);
  for (const s of pod.status?.containerStatuses ?? []) statuses.set(`main/${s.name}`, s);
  return [
    ...sidecarContainers(pod.spec).map((c) => ({
      name: c.name,
      spec: c.resources,
      status: statuses.get(`init/${c.name}`),
    })),
    ...(pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      spec: c.resources,
      status: statuses.get(`main/${c.name}`),
    })),
  ];
}

/** Pod-level resources as the kubelet applied them (status.resources, Kubernetes ≥ 1.36). */
const podLevelStatus = (pod: Pod): Resources | undefined =>
  (pod.status as { resources?: Resources } | undefined)?.resources;

/** The first container (or the pod's own resources) reported other than its spec, or undefined when none is. */
function firstDifference(pod: Pod): string | undefined {
  const podLevel = podLevelStatus(pod);
  if (
    pod.spec?.resources !== undefined &&
    podLevel !== undefined &&
    !resourcesEquivalent(pod.spec.resources, podLevel)
  ) {
    return `pod-level resources: ${describeDifference(pod.spec.resources, podLevel)}`;
  }
  for (const c of resizableContainerStatuses(pod)) {
    if (c.status?.resources === undefined) continue;
    if (!resourcesEquivalent(c.spec, c.status.resources))
      return `container ${c.name}: ${describeDifference(c.spec, c.status.resources)}`;
  }
  return undefined;
}

const reportsResources = (pod: Pod): boolean =>
  resizableContainerStatuses(pod).some((c) => c.status?.resources !== undefined);

function activeCondition(pod: Pod, type: string): Condition | undefined {
  const condition = podCondition(pod, type);
  return condition?.status === 'True' ? condition : undefined;
}

/** A view with only the fields that have a value (status JSON stays free of undefined keys). */
function view(
  state: ResizeState,
  fields: { reason?: string | undefined; message?: string | undefined; since?: string | undefined },
): ResizeView {
  const out: ResizeView = { state, done: false };
  if (fields.reason) out.reason = fields.reason;
  if (fields.message) out.message = fields.message;
  if (fields.since) out.since = fields.since;
  return out;
}

/**
 * The pod's resize state. Order of evidence:
 * 1. Conditions (≥ 1.33). PodResizePending wins over PodResizeInProgress; its reason gives Deferred
 *    or Infeasible (anything else reads as Deferred). A PodResizePending whose observedGeneration is
 *    older than metadata.generation is a verdict on an earlier resize, not on the one the spec asks
 *    for now, so it reads as Proposed (NotObserved) rather than re-triggering a timeout or a
 *    recreate. PodResizeInProgress is InProgress, keeping its reason (Error: e.g. a memory limit
 *    below current usage) and message.
 * 2. status.resize (≤ 1.32), an unknown value reading as Deferred. No start time is known.
 * 3. Inferred Proposed: the kubelet has not seen metadata.generation yet (both generations present)
 *    and the resources do not already match, or it has and the resources still differ.
 * `since` is the condition's lastTransitionTime; undefined for the legacy field and for inference.
 *
 * The two vocabularies (kubernetes/kubernetes, KEP-1287 "Resize Status", KEP-5067):
 * - Kubernetes ≥ 1.33: conditions PodResizePending (reason Deferred | Infeasible) and
 *   PodResizeInProgress (reason "" or Error), each with observedGeneration and lastTransitionTime;
 *   status.observedGeneration; metadata.generation bumped by every spec change, resizes included.
 *   Nothing sets Proposed any more: observedGeneration tells whether the kubelet has seen the
 *   latest resize.
 * - Kubernetes ≤ 1.32: status.resize = Proposed | InProgress | Deferred | Infeasible (the API
 *   server sets Proposed on every resize, the kubelet the rest), no timestamps, no generations.
 * A Deferred or Infeasible verdict takes precedence over InProgress; an unknown verdict means the
 * same as Deferred.
 */
export const podResizeView: (pod: Pod) => Readonly<ResizeView> = perObject(resizeViewOf);

function resizeViewOf(pod: Pod): ResizeView {
  // A pod resized by Tailor's node agent reports through annotations, not the kubelet.
  const request = readResizeRequest(pod);
  if (request.ok || request.error) return agentResizeView(pod, request);
  const update = currentUpdate(pod);
  if (update?.resizeRefused) {
    const { cause, message, at } = update.resizeRefused;
    return view('Infeasible', { reason: cause, message: `refused by the API server: ${message}`, since: at });
  }
  const generation = pod.metadata?.generation;
  const observed = pod.status?.observedGeneration;
  const pending = activeCondition(pod, POD_RESIZE_PENDING);
  const inProgress = activeCondition(pod, POD_RESIZE_IN_PROGRESS);

  if (pending) {
    // A verdict is about the latest resize once it observed the generation that resize produced;
    // a later patch of the same update (the image) raises the generation without a new resize.
    const judgedFrom = update?.resizeGeneration ?? generation;
    const stale =
      judgedFrom !== undefined && pending.observedGeneration !== undefined && pending.observedGeneration < judgedFrom;
    if (stale) {
      return view('Proposed', {
        reason: ResizeViewReasons.NotObserved,
        message:
          `the kubelet has not judged generation ${generation} yet; its verdict on generation ` +
          `${pending.observedGeneration} was ${pending.reason || 'Deferred'}${pending.message ? `: ${pending.message}` : ''}`,
      });
    }
    const state: ResizeState = pending.reason === 'Infeasible' ? 'Infeasible' : 'Deferred';
    return view(state, { reason: pending.reason, message: pending.message, since: pending.lastTransitionTime });
  }
  if (inProgress) {
    return view('InProgress', {
      reason: inProgress.reason,
      message: inProgress.message,
      since: inProgress.lastTransitionTime,
    });
  }

  const legacy = pod.status?.resize;
  if (legacy) {
    if (isResizeState(legacy)) return view(legacy, {});
    return view('Deferred', {
      reason: legacy,
      message: `status.resize is ${JSON.stringify(legacy)}, read as Deferred`,
    });
  }

  const difference = firstDifference(pod);
  const behind = generation !== undefined && observed !== undefined && generation > observed;
  if (behind && (difference !== undefined || !reportsResources(pod))) {
    return view('Proposed', {
      reason: ResizeViewReasons.NotObserved,
      message: `the kubelet has observed generation ${observed}, the pod is at ${generation}`,
    });
  }
  if (difference !== undefined) {
    return view('Proposed', { reason: ResizeViewReasons.NotActuated, message: difference });
  }
  // Nothing pending. Done unless the kubelet still has to look at the newest spec.
  return { done: !behind };
}

/** The pod's in-place update state when it is of the pod's current revision (else it says nothing of this resize). */
function currentUpdate(pod: Pod): ParsedInPlaceUpdateState | undefined {
  const parsed = parseInPlaceUpdateState(pod.metadata?.annotations);
  if (!parsed.ok || parsed.value === undefined) return undefined;
  return parsed.value.revision === pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ? parsed.value : undefined;
}

/**
 * Whether the pod's kubelet resizes in place (the `kubelet` backend of docs/architecture.md §4.4 Two resize backends): a running
 * container — regular or init — reports status resources. The API server applies the same test
 * (KEP-1287 "Version Skew Strategy") and refuses a resize when a running container lacks them;
 * a pod with no running container gives no evidence and answers false here.
 * status.containerStatuses[].resources is the actual configuration of a running container and the
 * allocated one otherwise; a kubelet without in-place resize leaves it unset, one with it sets it
 * on every container (to {} when the container names no resources).
 */
export function kubeletCanResize(pod: Pod): boolean {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  return statuses.some((s) => s.state?.running !== undefined && s.resources !== undefined);
}
