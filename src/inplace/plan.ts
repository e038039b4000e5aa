// The in-place update of one pod as a state machine over what the pod shows, so every step
// survives a controller restart (the state lives on the pod, never in memory):
//   drain     set InPlaceUpdateReady (and Ready) False so endpoints drop the pod first
//   wait      until the cache shows it not Ready and gracePeriodSeconds have passed
//   patch     images + labels/annotations in one patch, recording inplace-update-state
//   complete  every changed container runs again after the change → InPlaceUpdateReady True
//   undrain   drained, but the update no longer applies (rollback, partition, pause) → True
// A change that only touches metadata skips drain and wait: nothing restarts.
// Pure. Must not: perform I/O or choose which pods to update (the rollout arithmetic does).
import type * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_RESIZE_REQUEST,
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  type InPlaceUpdateState,
  type ResizeRefusal,
  type UpdateStrategyType,
} from '../api/types.js';
import type { Pod, Wire } from '../api/wire.js';
import { diffTemplates, type PodTemplate, type TemplateDiff } from './diff.js';
import { restartRequired } from '../resize/policy.js';
import { resizeChangesQos } from '../resize/qos.js';
import { podResizeView } from '../resize/state.js';
import { encodeResizeRequest } from '../resize/agent-protocol.js';
import { compareQuantities, parseQuantity } from '../api/quantity.js';
import { parseInPlaceUpdateState } from '../api/schemas.js';

export type PodPatch = Record<string, unknown>;

export type InPlaceStep =
  | { kind: 'recreate'; reason: string }
  | { kind: 'blocked'; fields: string[] }
  | { kind: 'drain'; message: string }
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
  now: number;
}

const condition = (pod: Pod, type: string): Wire<k8s.V1PodCondition> | undefined => pod.status?.conditions?.find((c) => c.type === type);

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
  const restarts = Object.keys(diff.images).length > 0 || resizeRestarts(pod, diff);
  if (restarts) {
    const gate = condition(pod, CONDITION_INPLACE_UPDATE_READY);
    if (gate?.status !== 'False') {
      const what = [...new Set([...Object.keys(diff.images), ...Object.keys(diff.resources)])].join(', ');
      return { kind: 'drain', message: `in-place update to revision ${t.targetRevision}: ${what}` };
    }
    if (condition(pod, 'Ready')?.status === 'True') return { kind: 'wait' };
    const drainedAt = Date.parse(gate.lastTransitionTime ?? '') || t.now;
    const readyAt = drainedAt + t.gracePeriodSeconds * 1000;
    if (t.now < readyAt) return { kind: 'wait', untilMs: readyAt };
  }
  // A pod's missing request was defaulted from its limit at creation; a resize does not default,
  // so send the request explicitly or a limit-only template would silently change the QoS class.
  const resized = Object.entries(diff.resources).map(([name, r]) => ({
    name,
    resources: { ...r, requests: { ...pickResizable(r.limits), ...(r.requests ?? {}) } },
  }));
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
  return {
    kind: 'patch',
    patch: buildPatch(pod, t, diff),
    diff,
    ...(resized.length > 0 ? { resize: { spec: { containers: resized } } } : {}),
  };
}

/** Cpu/memory changes that cannot be a resize here: no resize on the node, or a QoS class change. */
function resizeBlockers(pod: Pod, diff: TemplateDiff, t: UpdateTarget): string[] {
  const names = Object.keys(diff.resources);
  if (names.length === 0) return [];
  if (!t.resize.supported) return names.map((c) => `spec.containers[${c}].resources (${t.resize.reason ?? 'cannot resize in place'})`);
  const current = pod.spec?.containers ?? [];
  const resized = current.map((c) => (diff.resources[c.name] ? { ...c, resources: diff.resources[c.name] } : c));
  return resizeChangesQos(current, resized) ? ['spec.containers[*].resources (changes the pod QoS class)'] : [];
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
    const container = pod.spec?.containers?.find((c) => c.name === name);
    if (!container) return false;
    const changed = (['cpu', 'memory'] as const).filter(
      (r) =>
        !sameQuantity(container.resources?.requests?.[r], next.requests?.[r]) ||
        !sameQuantity(container.resources?.limits?.[r], next.limits?.[r]),
    );
    return restartRequired(container, changed);
  });
}

function buildPatch(pod: Pod, t: UpdateTarget, diff: TemplateDiff): PodPatch {
  const statuses = pod.status?.containerStatuses ?? [];
  const changed: Record<string, string[]> = {};
  for (const name of Object.keys(diff.images)) changed[name] = ['image'];
  for (const name of Object.keys(diff.resources)) changed[name] = [...(changed[name] ?? []), 'resources'];
  const state: InPlaceUpdateState = {
    revision: t.targetRevision,
    updateTimestamp: new Date(t.now).toISOString(),
    lastContainerImageIDs: Object.fromEntries(statuses.filter((s) => s.name in diff.images).map((s) => [s.name, s.imageID ?? ''])),
    lastRestartCounts: Object.fromEntries(statuses.filter((s) => s.name in diff.images).map((s) => [s.name, s.restartCount ?? 0])),
    changed,
  };
  const containers = Object.entries(diff.images).map(([name, image]) => ({ name, image }));
  return {
    metadata: {
      labels: { ...diff.labels, [LABEL_CONTROLLER_REVISION_HASH]: t.targetRevision },
      annotations: { ...diff.annotations, [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(state) },
    },
    ...(containers.length > 0 ? { spec: { containers } } : {}),
  };
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

/**
 * For a pod whose InPlaceUpdateReady is False: 'complete' when every container the update changed
 * runs again after the change; 'undrain' when it was drained for an update it is no longer
 * getting (`selected` false) and nothing was patched; 'pending' while containers restart.
 */
export function settleInPlaceUpdate(pod: Pod, selected: boolean): Settlement {
  if (condition(pod, CONDITION_INPLACE_UPDATE_READY)?.status !== 'False') return 'none';
  const state = readUpdateState(pod);
  const revision = pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH];
  if (!state || state.revision !== revision) return selected ? 'none' : 'undrain';
  const resized = Object.values(state.changed ?? {}).some((fields) => fields.includes('resources'));
  if (resized && !podResizeView(pod).done) return 'pending';
  const allRestarted = Object.entries(state.changed ?? {})
    .filter(([, fields]) => fields.includes('image'))
    .every(([name]) => {
      const s = pod.status?.containerStatuses?.find((c) => c.name === name);
      const spec = pod.spec?.containers?.find((c) => c.name === name);
      if (!s?.state?.running || !spec) return false;
      const newImage = !!s.imageID && s.imageID !== state.lastContainerImageIDs?.[name];
      const restarted = (s.restartCount ?? 0) > (state.lastRestartCounts?.[name] ?? 0);
      return newImage || restarted;
    });
  return allRestarted ? 'complete' : 'pending';
}
