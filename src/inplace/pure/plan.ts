// The in-place update of one pod as a state machine over what the pod shows, so every step
// survives a controller restart (the state lives on the pod, never in memory):
//   pre-pull  new images: wait until the node's agent has pulled them (prepull.ts), bounded
//   drain     set InPlaceUpdateReady (and Ready) False so endpoints drop the pod first
//   wait      until the cache shows it not Ready and gracePeriodSeconds have passed
//   patch     the first batch (its images, resize through pods/resize or the agent, restart
//             request) + every label/annotation in one patch, recording inplace-update-state
//             (the batches patched, and the images, resources and restarts still to come;
//             what a batch writes is spelled out in batch-writes.ts)
//   next      the batch before runs the new revision and is ready → the next batch's images,
//             resize and restart request (native sidecars first, then app containers by
//             priority: container-order.ts); an update that restarts nothing is one batch
//   complete  every changed container runs again after the change → InPlaceUpdateReady True
//   undrain   drained, but the update no longer applies (rollback, partition, pause) → True
// A change that only touches metadata skips drain and wait: nothing restarts. The pod stays
// drained from the first batch to the last (one drain, one budget; decision 0021).
// Pure. Must not: perform I/O or choose which pods to update (the rollout arithmetic does).
import type * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_INPLACE_UPDATE_STATE,
  LABEL_CONTROLLER_REVISION_HASH,
  type InPlaceUpdateState,
  type ResizeRefusal,
  type UpdateStrategyType,
} from '../../api/types.js';
import { podCondition } from '../../api/pod.js';
import { heldByReadinessGate, readinessGateCondition } from './readiness-gate.js';
import type { Pod, Wire, PodTemplate } from '../../api/wire.js';
import { diffTemplates, restartingMetadata, type TemplateDiff } from './diff.js';
import { prePullVerdict, type NotPrePulled, type PrePullTarget } from './prepull.js';
import { restartRequired } from '../../resize/policy.js';
import { resizeChangesQos } from '../../resize/qos.js';
import { podResizeView } from '../../resize/state.js';
import { compareQuantities, parseQuantity } from '../../api/quantity.js';
import { parseInPlaceUpdateState } from '../../api/schemas.js';
import { containerBatches } from './container-order.js';
import {
  batchWrites,
  containerNamed,
  pick,
  statusesOf,
  withRequests,
  workNames,
  type Container,
  type ContainerWork,
  type PodPatch,
  type Resources,
} from './batch-writes.js';

export type InPlaceStep =
  | { kind: 'recreate'; reason: string }
  | { kind: 'blocked'; fields: string[] }
  | { kind: 'drain'; message: string; notPrePulled?: NotPrePulled[] }
  | { kind: 'wait'; untilMs?: number }
  | { kind: 'patch'; patch: PodPatch; diff: TemplateDiff; resize?: PodPatch; nextBatch?: true }
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
  const restarts =
    Object.keys(diff.images).length > 0 || Object.keys(diff.restarts).length > 0 || resizeRestarts(pod, diff);
  return (
    notInPlace(pod, diff, t, restarts) ??
    (restarts ? drainFirst(pod, diff, t) : undefined) ??
    patchStep(pod, diff, t, restarts)
  );
}

/** Recreate or blocked, when the strategy or a field the update changes rules out in place. */
function notInPlace(pod: Pod, diff: TemplateDiff, t: UpdateTarget, restarts: boolean): InPlaceStep | undefined {
  const blocking = [...diff.recreateOnly, ...resizeBlockers(pod, diff, t, restarts)];
  if (t.strategy === 'ReCreate') return { kind: 'recreate', reason: 'updateStrategy.type is ReCreate' };
  if (blocking.length === 0) return undefined;
  return t.strategy === 'InPlaceOnly'
    ? { kind: 'blocked', fields: blocking }
    : { kind: 'recreate', reason: `cannot change in place: ${blocking.join(', ')}` };
}

/**
 * Before an update that restarts containers: drain (once the images are pre-pulled, where the node
 * pre-pulls), then wait until the pod is out of endpoints and the grace period has passed.
 * Undefined once the pod may be patched.
 */
function drainFirst(pod: Pod, diff: TemplateDiff, t: UpdateTarget): InPlaceStep | undefined {
  const gate = readinessGateCondition(pod);
  if (gate?.status !== 'False') {
    const images = Object.values(diff.images);
    const verdict = t.prePull && images.length > 0 ? prePullVerdict(images, t.prePull, t.now) : undefined;
    if (verdict?.wait === true) return { kind: 'wait', untilMs: verdict.untilMs };
    const notPrePulled = verdict?.notPrePulled.length ? { notPrePulled: verdict.notPrePulled } : {};
    const what = [
      ...new Set([...Object.keys(diff.images), ...Object.keys(diff.restarts), ...Object.keys(diff.resources)]),
    ].join(', ');
    return { kind: 'drain', message: `in-place update to revision ${t.targetRevision}: ${what}`, ...notPrePulled };
  }
  if (podCondition(pod, 'Ready')?.status === 'True') return { kind: 'wait' };
  const drainedAt = Date.parse(gate.lastTransitionTime ?? '') || t.now;
  const readyAt = drainedAt + t.gracePeriodSeconds * 1000;
  return t.now < readyAt ? { kind: 'wait', untilMs: readyAt } : undefined;
}

/** The patch of the first container batch: its images, restarts and resize, every label and annotation, the state record. */
function patchStep(pod: Pod, diff: TemplateDiff, t: UpdateTarget, restarts: boolean): InPlaceStep {
  const annotations = { ...pod.metadata?.annotations, ...t.targetTemplate.metadata?.annotations };
  const work = containerWork(pod, diff, t);
  // Priorities order what restarts; an update that restarts nothing keeps the pod in service and
  // goes in one patch (a resize that restarts nothing makes no container wait for another).
  const [batch = [], ...later] = restarts
    ? containerBatches(t.targetTemplate.spec ?? pod.spec ?? {}, annotations, workNames(work))
    : [workNames(work)];
  const timestamp = new Date(t.now).toISOString();
  const base: InPlaceUpdateState = {
    revision: t.targetRevision,
    updateTimestamp: timestamp,
    lastContainerImageIDs: {},
    lastRestartCounts: {},
    changed: {},
  };
  const writes = batchWrites(pod, work, { batch, later }, base, { via: t.resize.via, timestamp });
  const podResize = diff.podResources ? { resources: withRequests(diff.podResources) } : {};
  const resize = { ...writes.resize, ...podResize };
  return {
    kind: 'patch',
    patch: {
      metadata: {
        labels: { ...diff.labels, [LABEL_CONTROLLER_REVISION_HASH]: t.targetRevision },
        annotations: { ...diff.annotations, ...writes.annotations },
      },
      ...(writes.spec ? { spec: writes.spec } : {}),
    },
    diff,
    ...(Object.keys(resize).length > 0 ? { resize: { spec: resize } } : {}),
  };
}

/** What the pod's kubelet reports of pod-level resources (status.resources, Kubernetes ≥ 1.36). */
const podLevelStatus = (pod: Pod): Resources | undefined =>
  (pod.status as { resources?: Resources } | undefined)?.resources;

/**
 * Cpu/memory changes that cannot be a resize here: no resize on the node; a sidecar's or the
 * pod's own resources on the agent's path (it resizes containers only); pod-level resources on a
 * kubelet that does not report them (it cannot resize them: Kubernetes < 1.36); a QoS class change.
 */
function resizeBlockers(pod: Pod, diff: TemplateDiff, t: UpdateTarget, restarts: boolean): string[] {
  const sidecars = new Set(diff.sidecars);
  const path = (name: string): string =>
    `spec.${sidecars.has(name) ? 'initContainers' : 'containers'}[${name}].resources`;
  const names = Object.keys(diff.resources);
  const paths = [...names.map(path), ...(diff.podResources ? ['spec.resources'] : [])];
  if (paths.length === 0) return [];
  if (!t.resize.supported) return paths.map((p) => `${p} (${t.resize.reason ?? 'cannot resize in place'})`);
  if (t.resize.via === 'agent') {
    const notForAgent = [
      ...names.filter((n) => sidecars.has(n)).map(path),
      ...(diff.podResources ? ['spec.resources'] : []),
    ];
    if (notForAgent.length > 0) return notForAgent.map((p) => `${p} (the node agent resizes containers only)`);
  } else if (diff.podResources && podLevelStatus(pod) === undefined) {
    return [
      "spec.resources (this node's kubelet does not resize pod-level resources in place; Kubernetes >= 1.36 does)",
    ];
  }
  return qosBlockers(pod, diff, t, restarts);
}

/** A resize that changes the pod's QoS class, at the end or between container batches: pods/resize refuses it. */
function qosBlockers(pod: Pod, diff: TemplateDiff, t: UpdateTarget, restarts: boolean): string[] {
  const names = Object.keys(diff.resources);
  const resizedSoFar = (done: ReadonlySet<string>, podLevel: Resources | undefined): { resources?: Resources }[] => {
    const resize = (c: Container): Container =>
      done.has(c.name) && diff.resources[c.name] ? { ...c, resources: diff.resources[c.name] } : c;
    return qosInputs(podLevel, {
      containers: (pod.spec?.containers ?? []).map(resize),
      initContainers: (pod.spec?.initContainers ?? []).map(resize),
    });
  };
  const before = qosInputs(pod.spec?.resources, pod.spec);
  const after = resizedSoFar(new Set(names), diff.podResources ?? pod.spec?.resources);
  if (resizeChangesQos(before, after)) return ['spec.containers[*].resources (changes the pod QoS class)'];
  if (!restarts) return [];
  // Resized batch by batch (decision 0021), the pod passes through sizes that must keep its class
  // too: pods/resize refuses any step that would change it. Pod-level resources go with the first.
  const done = new Set<string>();
  const annotations = { ...pod.metadata?.annotations, ...t.targetTemplate.metadata?.annotations };
  for (const batch of containerBatches(t.targetTemplate.spec ?? pod.spec ?? {}, annotations, names).slice(0, -1)) {
    for (const name of batch) done.add(name);
    if (resizeChangesQos(before, resizedSoFar(done, diff.podResources ?? pod.spec?.resources)))
      return ['spec.containers[*].resources (changes the pod QoS class between container batches)'];
  }
  return [];
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

function containerWork(pod: Pod, diff: TemplateDiff, t: UpdateTarget): ContainerWork {
  const template = t.targetTemplate.spec;
  const templateContainer = (name: string): Container | undefined =>
    template?.containers?.find((c) => c.name === name) ?? template?.initContainers?.find((c) => c.name === name);
  return {
    images: Object.fromEntries(
      Object.entries(diff.images).filter(([name, image]) => containerNamed(pod, name)?.image !== image),
    ),
    resources: { ...diff.resources },
    restarts: Object.fromEntries(
      Object.keys(diff.restarts).map((name) => [name, restartingMetadata(templateContainer(name), diff)]),
    ),
  };
}

/**
 * The patch of the pod's next container batch (decision 0021): its images, its resize, its
 * restart request and the state, once every container of the batch before runs the new revision
 * (its new image, its restart, its resize actuated) and is ready; undefined while one is not, or
 * when no batch is left. `template`: the pod template of the revision the pod is updated to;
 * `via`: who resizes on the pod's node. The pod stays drained meanwhile: no new budget, no new drain.
 */
export function planNextContainerBatch(
  pod: Pod,
  template: PodTemplate | undefined,
  now: number,
  via?: UpdateTarget['resize']['via'],
): Extract<InPlaceStep, { kind: 'patch' }> | undefined {
  if (!heldByReadinessGate(pod)) return undefined;
  const state = readUpdateState(pod);
  if (!state || state.revision !== pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH]) return undefined;
  const work: ContainerWork = {
    images: state.nextContainerImages ?? {},
    resources: state.nextContainerResources ?? {},
    restarts: state.nextContainerRefMetadata ?? {},
  };
  const remaining = workNames(work);
  if (remaining.length === 0) return undefined;
  const previous = state.containerBatchesRecord?.at(-1)?.containers ?? [];
  if (!previous.every((name) => batchContainerDone(pod, state, name))) return undefined;
  const batches = containerBatches(template?.spec ?? pod.spec ?? {}, pod.metadata?.annotations ?? {}, remaining);
  // A name the template no longer holds still goes, last, so no work is left waiting for good.
  const placed = new Set(batches.flat());
  const [batch = [], ...later] = [...batches, remaining.filter((name) => !placed.has(name))].filter(
    (b) => b.length > 0,
  );
  const writes = batchWrites(pod, work, { batch, later }, state, { via, timestamp: new Date(now).toISOString() });
  const sidecarNames = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
  const diff: TemplateDiff = {
    images: pick(work.images, batch),
    resources: pick(work.resources, batch),
    labels: {},
    annotations: {},
    recreateOnly: [],
    sidecars: batch.filter((name) => sidecarNames.has(name)),
    restarts: Object.fromEntries(
      batch.filter((name) => name in work.restarts).map((name) => [name, 'its batch came (container priority)']),
    ),
  };
  return {
    kind: 'patch',
    patch: { metadata: { annotations: writes.annotations }, ...(writes.spec ? { spec: writes.spec } : {}) },
    diff,
    nextBatch: true,
    ...(Object.keys(writes.resize).length > 0 ? { resize: { spec: writes.resize } } : {}),
  };
}

/**
 * A container of a patched batch runs the new revision and is ready: running and ready, restarted
 * with its new image (or restarted, for a restart), its resize actuated. A container the batch did
 * not change (not running when its restart was due) only has to run and be ready.
 */
function batchContainerDone(pod: Pod, state: InPlaceUpdateState, name: string): boolean {
  const fields = state.changed?.[name] ?? [];
  const s = containerStatus(pod, name);
  if (s?.ready !== true || s.state?.running === undefined) return false;
  if ((fields.includes('image') || fields.includes('restart')) && !runsNewImage(pod, state, name, fields)) return false;
  return !fields.includes('resources') || podResizeView(pod).done;
}

/**
 * The step's pod patch with what its resize (sent first, through pods/resize) came to: the
 * generation it produced, or the API server's refusal. Both live in the update state the patch
 * records, so the pod alone tells the resize's fate (resize/state.ts reads it).
 */
export function withResizeOutcome(
  patch: PodPatch,
  outcome: { generation?: number; refusal?: ResizeRefusal },
): PodPatch {
  const metadata = patch['metadata'] as { annotations?: Record<string, string> } | undefined;
  const text = metadata?.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE];
  if (!metadata || text === undefined) return patch;
  const state = JSON.parse(text) as InPlaceUpdateState;
  if (outcome.generation !== undefined) state.resizeGeneration = outcome.generation;
  if (outcome.refusal) state.resizeRefused = outcome.refusal;
  return {
    ...patch,
    metadata: {
      ...metadata,
      annotations: { ...metadata.annotations, [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(state) },
    },
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

/** Work of a later container batch is still to come (decision 0021). */
const hasNextBatch = (state: InPlaceUpdateState): boolean =>
  Object.keys(state.nextContainerImages ?? {}).length > 0 ||
  Object.keys(state.nextContainerResources ?? {}).length > 0 ||
  Object.keys(state.nextContainerRefMetadata ?? {}).length > 0;

/** When the pod's latest restart request went out (ms): its batch's time, else the update's. */
export function restartRequestedAt(state: InPlaceUpdateState): number {
  return Date.parse(state.containerBatchesRecord?.at(-1)?.timestamp ?? state.updateTimestamp);
}

/**
 * Why a pod drained for a restart in place is held up: its request (the latest batch's) went out
 * RESTART_OVERDUE_MS ago and the kubelet has not restarted the containers (no node agent stopped
 * them). Undefined otherwise.
 */
export function restartOverdue(pod: Pod, now: number): string | undefined {
  if (!heldByReadinessGate(pod)) return undefined;
  const state = readUpdateState(pod);
  if (!state || state.revision !== pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH]) return undefined;
  const waiting = Object.entries(state.changed ?? {})
    .filter(([name, fields]) => fields.includes('restart') && !restartCountRose(pod, state, name))
    .map(([name]) => name);
  if (waiting.length === 0 || now - restartRequestedAt(state) < RESTART_OVERDUE_MS) return undefined;
  return `containers ${waiting.join(', ')} wait to be restarted by the node agent (is tailor agent running on node ${pod.spec?.nodeName ?? '?'}?)`;
}

const containerStatus = (pod: Pod, name: string): Wire<k8s.V1ContainerStatus> | undefined =>
  statusesOf(pod).find((c) => c.name === name);

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
  if (hasNextBatch(state)) return 'pending';
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
