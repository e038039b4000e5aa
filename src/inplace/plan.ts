// The in-place update of one pod as a state machine over what the pod shows, so every step
// survives a controller restart (the state lives on the pod, never in memory):
//   pre-pull  new images: wait until the node's agent has pulled them (prepull.ts), bounded
//   drain     set InPlaceUpdateReady (and Ready) False so endpoints drop the pod first
//   wait      until the cache shows it not Ready and gracePeriodSeconds have passed
//   patch     the first batch's images + labels/annotations in one patch, recording
//             inplace-update-state (the batches patched, and the images still to come)
//   next      the batch before runs its new images and is ready → the next batch's images
//             (native sidecars first, then app containers by priority: container-order.ts)
//   complete  every changed container runs again after the change → InPlaceUpdateReady True
//   undrain   drained, but the update no longer applies (rollback, partition, pause) → True
// A change that only touches metadata skips drain and wait: nothing restarts. The pod stays
// drained from the first batch to the last (one drain, one budget; decision 0021).
// Pure. Must not: perform I/O or choose which pods to update (the rollout arithmetic does).
import type * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_RESIZE_REQUEST,
  ANNOTATION_RESTART_REQUEST,
  LABEL_CONTROLLER_REVISION_HASH,
  type InPlaceUpdateState,
  type ResizeRefusal,
  type UpdateStrategyType,
} from '../api/types.js';
import { podCondition } from '../api/pod.js';
import { heldByReadinessGate, readinessGateCondition } from './readiness-gate.js';
import type { Pod, Wire } from '../api/wire.js';
import { diffTemplates, type PodTemplate, type TemplateDiff } from './diff.js';
import { prePullVerdict, type NotPrePulled, type PrePullTarget } from './prepull.js';
import { restartRequired } from '../resize/policy.js';
import { resizeChangesQos } from '../resize/qos.js';
import { podResizeView } from '../resize/state.js';
import { encodeResizeRequest } from '../resize/agent-protocol.js';
import { compareQuantities, parseQuantity } from '../api/quantity.js';
import { parseInPlaceUpdateState } from '../api/schemas.js';
import { containerBatches } from './container-order.js';

export type PodPatch = Record<string, unknown>;

export type InPlaceStep =
  | { kind: 'recreate'; reason: string }
  | { kind: 'blocked'; fields: string[] }
  | { kind: 'drain'; message: string; notPrePulled?: NotPrePulled[] }
  | { kind: 'wait'; untilMs?: number }
  | { kind: 'patch'; patch: PodPatch; diff: TemplateDiff; resize?: PodPatch }
  | { kind: 'none' };

export interface UpdateTarget {
  strategy: UpdateStrategyType;
  gracePeriodSeconds: number;
  podTemplate: PodTemplate;
  targetRevision: string;
  targetTemplate: PodTemplate;
  /** Whether this pod's node can resize in place; when not, why (shown to the user). */
  resize: { supported: boolean; reason?: string; via?: 'kubelet' | 'agent' };
  /** The pod's node's image pre-pull; undefined: nothing pre-pulls, drain at once. */
  prePull?: PrePullTarget;
  now: number;
}

/** The next step to move a pod selected for update to the target revision. */
export function planInPlaceUpdate(pod: Pod, t: UpdateTarget): InPlaceStep {
  const diff = diffTemplates(t.podTemplate, t.targetTemplate);
  const blocking = [...diff.recreateOnly, ...resizeBlockers(pod, diff, t)];
  if (t.strategy === 'ReCreate') return { kind: 'recreate', reason: 'updateStrategy.type is ReCreate' };
  if (blocking.length > 0) {
    return t.strategy === 'InPlaceOnly'
      ? { kind: 'blocked', fields: blocking }
      : { kind: 'recreate', reason: `cannot change in place: ${blocking.join(', ')}` };
  }
  const restarts = Object.keys(diff.images).length > 0 || Object.keys(diff.restarts).length > 0 || resizeRestarts(pod, diff);
  if (restarts) {
    const gate = readinessGateCondition(pod);
    if (gate?.status !== 'False') {
      const images = Object.values(diff.images);
      const verdict = t.prePull && images.length > 0 ? prePullVerdict(images, t.prePull, t.now) : undefined;
      if (verdict?.wait === true) return { kind: 'wait', untilMs: verdict.untilMs };
      const notPrePulled = verdict?.notPrePulled.length ? { notPrePulled: verdict.notPrePulled } : {};
      const what = [...new Set([...Object.keys(diff.images), ...Object.keys(diff.restarts), ...Object.keys(diff.resources)])].join(', ');
      return { kind: 'drain', message: `in-place update to revision ${t.targetRevision}: ${what}`, ...notPrePulled };
    }
    if (podCondition(pod, 'Ready')?.status === 'True') return { kind: 'wait' };
    const drainedAt = Date.parse(gate.lastTransitionTime ?? '') || t.now;
    const readyAt = drainedAt + t.gracePeriodSeconds * 1000;
    if (t.now < readyAt) return { kind: 'wait', untilMs: readyAt };
  }
  // A pod's missing request was defaulted from its limit at creation; a resize does not default,
  // so send the request explicitly or a limit-only template would silently change the QoS class.
  const withRequests = (r: Resources): Resources => ({ ...r, requests: { ...pickResizable(r.limits), ...(r.requests ?? {}) } });
  const resized = Object.entries(diff.resources).map(([name, r]) => ({ name, resources: withRequests(r) }));
  if (resized.length > 0 && t.resize.via === 'agent') {
    // The node's kubelet cannot resize: the request rides in the same pod patch, for the agent.
    const request = encodeResizeRequest({
      revision: t.targetRevision,
      containers: Object.fromEntries(resized.map((c) => [c.name, c.resources])),
    });
    const patch = buildPatch(pod, t, diff) as { metadata: { annotations: Record<string, string> } };
    patch.metadata.annotations[ANNOTATION_RESIZE_REQUEST] = request;
    return { kind: 'patch', patch, diff };
  }
  const sidecars = new Set(diff.sidecars);
  const resizeSpec = {
    ...listed(
      'containers',
      resized.filter((c) => !sidecars.has(c.name)),
    ),
    ...listed(
      'initContainers',
      resized.filter((c) => sidecars.has(c.name)),
    ),
    ...(diff.podResources ? { resources: withRequests(diff.podResources) } : {}),
  };
  return {
    kind: 'patch',
    patch: buildPatch(pod, t, diff),
    diff,
    ...(Object.keys(resizeSpec).length > 0 ? { resize: { spec: resizeSpec } } : {}),
  };
}

const listed = <T>(list: string, items: T[]): Record<string, T[]> => (items.length > 0 ? { [list]: items } : {});

type Resources = Wire<k8s.V1ResourceRequirements>;
type Container = Wire<k8s.V1Container>;

/** Containers and native sidecars by name (names are unique across both lists in a pod). */
function containerNamed(pod: Pod, name: string): Container | undefined {
  return pod.spec?.containers?.find((c) => c.name === name) ?? pod.spec?.initContainers?.find((c) => c.name === name);
}

/** What the pod's kubelet reports of pod-level resources (status.resources, Kubernetes ≥ 1.36). */
const podLevelStatus = (pod: Pod): Resources | undefined => (pod.status as { resources?: Resources } | undefined)?.resources;

/**
 * Cpu/memory changes that cannot be a resize here: no resize on the node; a sidecar's or the
 * pod's own resources on the agent's path (it resizes containers only); pod-level resources on a
 * kubelet that does not report them (it cannot resize them: Kubernetes < 1.36); a QoS class change.
 */
function resizeBlockers(pod: Pod, diff: TemplateDiff, t: UpdateTarget): string[] {
  const sidecars = new Set(diff.sidecars);
  const path = (name: string): string => `spec.${sidecars.has(name) ? 'initContainers' : 'containers'}[${name}].resources`;
  const names = Object.keys(diff.resources);
  const paths = [...names.map(path), ...(diff.podResources ? ['spec.resources'] : [])];
  if (paths.length === 0) return [];
  if (!t.resize.supported) return paths.map((p) => `${p} (${t.resize.reason ?? 'cannot resize in place'})`);
  const blocked: string[] = [];
  if (t.resize.via === 'agent') {
    const notForAgent = [...names.filter((n) => sidecars.has(n)).map(path), ...(diff.podResources ? ['spec.resources'] : [])];
    blocked.push(...notForAgent.map((p) => `${p} (the node agent resizes containers only)`));
  } else if (diff.podResources && podLevelStatus(pod) === undefined) {
    blocked.push("spec.resources (this node's kubelet does not resize pod-level resources in place; Kubernetes >= 1.36 does)");
  }
  if (blocked.length > 0) return blocked;
  const resize = (c: Container): Container => (diff.resources[c.name] ? { ...c, resources: diff.resources[c.name] } : c);
  const before = qosInputs(pod.spec?.resources, pod.spec);
  const after = qosInputs(diff.podResources ?? pod.spec?.resources, {
    containers: (pod.spec?.containers ?? []).map(resize),
    initContainers: (pod.spec?.initContainers ?? []).map(resize),
  });
  return resizeChangesQos(before, after) ? ['spec.containers[*].resources (changes the pod QoS class)'] : [];
}

/** What the QoS class is computed from: the pod-level resources when set, else every container's. */
function qosInputs(
  podLevel: Resources | undefined,
  spec: { containers?: Container[]; initContainers?: Container[] } | undefined,
): { resources?: Resources }[] {
  if (podLevel && (Object.keys(podLevel.requests ?? {}).length > 0 || Object.keys(podLevel.limits ?? {}).length > 0))
    return [{ resources: podLevel }];
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
}

function sameQuantity(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  try {
    return compareQuantities(parseQuantity(a), parseQuantity(b)) === 0;
  } catch {
    return a === b;
  }
}

function pickResizable(values: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([k]) => k === 'cpu' || k === 'memory'));
}

/** A resized resource whose resizePolicy is RestartContainer restarts the container. */
function resizeRestarts(pod: Pod, diff: TemplateDiff): boolean {
  return Object.entries(diff.resources).some(([name, next]) => {
    const container = containerNamed(pod, name);
    if (!container) return false;
    const changed = (['cpu', 'memory'] as const).filter(
      (r) =>
        !sameQuantity(container.resources?.requests?.[r], next.requests?.[r]) ||
        !sameQuantity(container.resources?.limits?.[r], next.limits?.[r]),
    );
    return restartRequired(container, changed);
  });
}

const statusesOf = (pod: Pod): ContainerStatusOf[] => [
  ...(pod.status?.containerStatuses ?? []),
  ...(pod.status?.initContainerStatuses ?? []),
];

function buildPatch(pod: Pod, t: UpdateTarget, diff: TemplateDiff): PodPatch {
  const statuses = statusesOf(pod);
  // Only a running container is restarted; one that has not started yet reads the new env when it does.
  const toStop = runningContainerIds(statuses, Object.keys(diff.restarts));
  const annotations = { ...pod.metadata?.annotations, ...t.targetTemplate.metadata?.annotations };
  const [batch = [], ...later] = imageBatches(pod, t.targetTemplate, annotations, diff.images);
  const changed: Record<string, string[]> = {};
  for (const name of batch) changed[name] = ['image'];
  for (const name of Object.keys(toStop)) changed[name] = ['restart'];
  for (const name of Object.keys(diff.resources)) changed[name] = [...(changed[name] ?? []), 'resources'];
  const restarting = (s: { name: string }): boolean => batch.includes(s.name) || s.name in toStop;
  const timestamp = new Date(t.now).toISOString();
  const state: InPlaceUpdateState = {
    revision: t.targetRevision,
    updateTimestamp: timestamp,
    lastContainerImageIDs: Object.fromEntries(statuses.filter((s) => batch.includes(s.name)).map((s) => [s.name, s.imageID ?? ''])),
    lastRestartCounts: Object.fromEntries(statuses.filter(restarting).map((s) => [s.name, s.restartCount ?? 0])),
    changed,
    ...(batch.length > 0 ? { containerBatchesRecord: [{ timestamp, containers: batch }] } : {}),
    ...(later.length > 0 ? { nextContainerImages: Object.fromEntries(later.flat().map((name) => [name, diff.images[name] ?? ''])) } : {}),
  };
  return {
    metadata: {
      labels: { ...diff.labels, [LABEL_CONTROLLER_REVISION_HASH]: t.targetRevision },
      annotations: { ...diff.annotations, [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(state), ...restartRequest(toStop, t) },
    },
    ...imageSpec(pod, batch, diff.images),
  };
}

/**
 * The containers whose image changes, in update batches (container-order.ts), by the priorities
 * of the revision's template (a cached pod keeps no env; env cannot change in place, so the
 * template's is the pod's). A container whose spec already holds its new image (an update taken
 * back between two batches) is not changed.
 */
function imageBatches(
  pod: Pod,
  template: PodTemplate | undefined,
  annotations: Record<string, string>,
  images: Readonly<Record<string, string>>,
): string[][] {
  const changing = Object.keys(images).filter((name) => containerNamed(pod, name)?.image !== images[name]);
  return containerBatches(template?.spec ?? pod.spec ?? {}, annotations, changing);
}

/** The pod spec patch that sets these containers' images, sidecars under initContainers. */
function imageSpec(pod: Pod, names: readonly string[], images: Readonly<Record<string, string>>): { spec?: PodPatch } {
  const sidecars = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
  const entries = names.map((name) => ({ name, image: images[name] ?? '' }));
  const spec = {
    ...listed(
      'containers',
      entries.filter((c) => !sidecars.has(c.name)),
    ),
    ...listed(
      'initContainers',
      entries.filter((c) => sidecars.has(c.name)),
    ),
  };
  return Object.keys(spec).length > 0 ? { spec } : {};
}

/**
 * The patch of the pod's next container batch (decision 0021), once every container of the batch
 * before runs its new image and is ready; undefined while it is not, or when no batch is left.
 * `template`: the pod template of the revision the pod is updated to.
 * The pod stays drained meanwhile: no new budget, no new drain.
 */
export function planNextContainerBatch(
  pod: Pod,
  template: PodTemplate | undefined,
  now: number,
): Extract<InPlaceStep, { kind: 'patch' }> | undefined {
  if (!heldByReadinessGate(pod)) return undefined;
  const state = readUpdateState(pod);
  const next = state?.nextContainerImages ?? {};
  if (!state || state.revision !== pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] || Object.keys(next).length === 0)
    return undefined;
  const previous = state.containerBatchesRecord?.at(-1)?.containers ?? [];
  const ready = previous.every((name) => runsNewImage(pod, state, name, ['image']) && containerStatus(pod, name)?.ready === true);
  if (!ready) return undefined;
  const [batch = [], ...later] = imageBatches(pod, template, pod.metadata?.annotations ?? {}, next);
  const statuses = statusesOf(pod).filter((s) => batch.includes(s.name));
  const timestamp = new Date(now).toISOString();
  const updated: InPlaceUpdateState = {
    ...state,
    lastContainerImageIDs: { ...state.lastContainerImageIDs, ...Object.fromEntries(statuses.map((s) => [s.name, s.imageID ?? ''])) },
    lastRestartCounts: { ...state.lastRestartCounts, ...Object.fromEntries(statuses.map((s) => [s.name, s.restartCount ?? 0])) },
    changed: { ...state.changed, ...Object.fromEntries(batch.map((name) => [name, ['image']])) },
    containerBatchesRecord: [...(state.containerBatchesRecord ?? []), ...(batch.length > 0 ? [{ timestamp, containers: batch }] : [])],
  };
  const remaining = Object.fromEntries(later.flat().map((name) => [name, next[name] ?? '']));
  if (Object.keys(remaining).length > 0) updated.nextContainerImages = remaining;
  else delete updated.nextContainerImages;
  const images = Object.fromEntries(batch.map((name) => [name, next[name] ?? '']));
  const sidecarNames = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
  const diff: TemplateDiff = {
    images,
    resources: {},
    labels: {},
    annotations: {},
    recreateOnly: [],
    sidecars: batch.filter((name) => sidecarNames.has(name)),
    restarts: {},
  };
  return {
    kind: 'patch',
    patch: { metadata: { annotations: { [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(updated) } }, ...imageSpec(pod, batch, images) },
    diff,
  };
}

type ContainerStatusOf = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];

/** Of `names`, the containers running now, by the ID of the running container. */
function runningContainerIds(statuses: readonly ContainerStatusOf[], names: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    names.flatMap((name) => {
      const s = statuses.find((c) => c.name === name);
      return s?.state?.running !== undefined && s.containerID ? [[name, s.containerID]] : [];
    }),
  );
}

/** The request that has the node agent stop each of these running containers once (none when there are none). */
function restartRequest(containers: Record<string, string>, t: UpdateTarget): Record<string, string> {
  if (Object.keys(containers).length === 0) return {};
  return { [ANNOTATION_RESTART_REQUEST]: JSON.stringify({ revision: t.targetRevision, containers }) };
}

/**
 * The step's pod patch with what its resize (sent first, through pods/resize) came to: the
 * generation it produced, or the API server's refusal. Both live in the update state the patch
 * records, so the pod alone tells the resize's fate (resize/state.ts reads it).
 */
export function withResizeOutcome(patch: PodPatch, outcome: { generation?: number; refusal?: ResizeRefusal }): PodPatch {
  const metadata = patch['metadata'] as { annotations?: Record<string, string> } | undefined;
  const text = metadata?.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE];
  if (!metadata || text === undefined) return patch;
  const state = JSON.parse(text) as InPlaceUpdateState;
  if (outcome.generation !== undefined) state.resizeGeneration = outcome.generation;
  if (outcome.refusal) state.resizeRefused = outcome.refusal;
  return {
    ...patch,
    metadata: { ...metadata, annotations: { ...metadata.annotations, [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(state) } },
  };
}

/** The pod's last in-place update, or undefined when absent or invalid (see updateStateProblem). */
export function readUpdateState(pod: Pod): InPlaceUpdateState | undefined {
  const parsed = parseInPlaceUpdateState(pod.metadata?.annotations);
  return parsed.ok ? parsed.value : undefined;
}

/** Why the pod's inplace-update-state annotation cannot be read; undefined when absent or valid. */
export function updateStateProblem(pod: Pod): string | undefined {
  const parsed = parseInPlaceUpdateState(pod.metadata?.annotations);
  return parsed.ok ? undefined : parsed.error;
}

export type Settlement = 'complete' | 'undrain' | 'pending' | 'none';

/** How long a restart may wait for the node agent before the rollout says it is held up. */
export const RESTART_OVERDUE_MS = 60_000;

/**
 * Why a pod drained for a restart in place is held up: its request went out RESTART_OVERDUE_MS
 * ago and the kubelet has not restarted the containers (no node agent stopped them). Undefined
 * otherwise.
 */
export function restartOverdue(pod: Pod, now: number): string | undefined {
  if (!heldByReadinessGate(pod)) return undefined;
  const state = readUpdateState(pod);
  if (!state || state.revision !== pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH]) return undefined;
  const waiting = Object.entries(state.changed ?? {})
    .filter(([name, fields]) => fields.includes('restart') && !restartCountRose(pod, state, name))
    .map(([name]) => name);
  if (waiting.length === 0 || now - Date.parse(state.updateTimestamp) < RESTART_OVERDUE_MS) return undefined;
  return `containers ${waiting.join(', ')} wait to be restarted by the node agent (is tailor agent running on node ${pod.spec?.nodeName ?? '?'}?)`;
}

const containerStatus = (pod: Pod, name: string): Wire<k8s.V1ContainerStatus> | undefined =>
  [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find((c) => c.name === name);

/** The container restarted since the update recorded its restart count. */
const restartCountRose = (pod: Pod, state: InPlaceUpdateState, name: string): boolean =>
  (containerStatus(pod, name)?.restartCount ?? 0) > (state.lastRestartCounts?.[name] ?? 0);

/**
 * For a pod whose InPlaceUpdateReady is False: 'complete' when every container the update changed
 * runs again after the change; 'undrain' when it was drained for an update it is no longer
 * getting (`selected` false) and nothing was patched; 'pending' while containers restart.
 */
export function settleInPlaceUpdate(pod: Pod, selected: boolean): Settlement {
  if (!heldByReadinessGate(pod)) return 'none';
  const state = readUpdateState(pod);
  const revision = pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH];
  if (!state || state.revision !== revision) return selected ? 'none' : 'undrain';
  if (Object.keys(state.nextContainerImages ?? {}).length > 0) return 'pending';
  const resized = Object.values(state.changed ?? {}).some((fields) => fields.includes('resources'));
  if (resized && !podResizeView(pod).done) return 'pending';
  const allRestarted = Object.entries(state.changed ?? {})
    .filter(([, fields]) => fields.includes('image') || fields.includes('restart'))
    .every(([name, fields]) => runsNewImage(pod, state, name, fields));
  return allRestarted ? 'complete' : 'pending';
}

/** The container runs again since the update changed it (`fields`: what the update changed). */
function runsNewImage(pod: Pod, state: InPlaceUpdateState, name: string, fields: readonly string[]): boolean {
  const s = containerStatus(pod, name);
  if (!s?.state?.running || !containerNamed(pod, name)) return false;
  // A new image may come with a new container count or, for a fresh container, a new image ID.
  const newImage = fields.includes('image') && !!s.imageID && s.imageID !== state.lastContainerImageIDs?.[name];
  return newImage || restartCountRose(pod, state, name);
}
