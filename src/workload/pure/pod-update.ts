// The per-pod update decision: for each pod the rollout arithmetic picked (update.ts), the next
// step toward the target revision: in place (inplace/pure/plan.ts) where the strategy and the change
// allow, by recreate otherwise, held back while a lifecycle hook holds the pod (lifecycle.ts);
// and, outside the pick, the changes that restart nothing. What InPlaceOnly cannot apply becomes
// the FailedUpdate condition.
// Pure. Must not: choose which pods move or size the disruption budget (update.ts and budget.ts
// do), or perform I/O.
import { ConditionReasons, EventReasons } from '../../api/reasons.js';
import { ANNOTATION_LIFECYCLE_TIMESTAMP, LABEL_LIFECYCLE_STATE, type LifecycleState } from '../../api/types.js';
import { podRevision } from '../../api/pod.js';
import { rfc3339Seconds } from '../../api/time.js';
import type { Pod } from '../../api/wire.js';
import { planInPlaceUpdate, type InPlaceStep } from '../../inplace/pure/plan.js';
import { claimTemplatesChanged } from './claims.js';
import type { ConditionWrites, Intent, PlannedEvent } from './intents.js';
import { deletionStep, inPlaceUpdateGate, lifecycleWrites, type MoveOptions } from './lifecycle.js';
import { backendOf, earliest, movesNoPod, nameOf, prePullFor, type PlanInput } from './plan-input.js';
import type { PodSummary } from './pod-state.js';
import { summarizePod } from './pod-summary.js';
import type { UpdatePlan } from './update.js';

/**
 * Pods moved in one round by changes that restart nothing (NotRequired resizes, labels), which
 * the budget does not bound: a round of 1,000 resizes made 2,000 writes and held the key, and the
 * status, for 9–13 s. A round of 100 takes about a second; the next round starts on their events.
 */
export const NON_DISRUPTIVE_MOVES_PER_ROUND = 100;

/** When a round that left pods waiting for their templates looks again (decision 81). */
export const DEFERRED_RETRY_MS = 1000;

/** What the update half of a round decided for the pods the arithmetic picked. */
export interface PodUpdates {
  intents: Intent[];
  events: PlannedEvent[];
  blockedFields: string[];
  wakeAt?: number;
}

/**
 * Moves the pods the arithmetic picked toward the target revision: in place where the strategy
 * and the change allow, by recreate otherwise. Pods outside the pick move only by changes that
 * restart nothing (labels, NotRequired resizes), bounded by the partition and by
 * NON_DISRUPTIVE_MOVES_PER_ROUND. A pod that was never scheduled is replaced, whatever the
 * strategy: nothing of it runs, so nothing is lost.
 */
export function planPodUpdates(
  input: PlanInput,
  pods: readonly Pod[],
  update: UpdatePlan,
  lifecycleMoves: ReadonlySet<string>,
): PodUpdates {
  const out: PodUpdates = { intents: [], events: [], blockedFields: [] };
  const selected = new Set(update.toUpdate);
  let nonDisruptive = nonDisruptiveMoves(input, pods, update);
  for (const pod of pods) {
    // A pod whose lifecycle state moves this round is written once: its update waits a round.
    if (
      pod.metadata?.deletionTimestamp ||
      podRevision(pod) === update.targetRevision ||
      lifecycleMoves.has(nameOf(pod))
    )
      continue;
    const picked = selected.has(nameOf(pod));
    if (!picked && nonDisruptive <= 0) continue;
    if (picked && !pod.spec?.nodeName) {
      out.intents.push(replaceUnscheduled(pod, update.targetRevision));
      continue;
    }
    const step = stepFor(input, pod, update.targetRevision);
    if (!picked) {
      if (!restartsNothing(step)) continue;
      nonDisruptive--;
    }
    const held = heldByLifecycle(input, pod, step, picked);
    if (held) {
      if (held !== 'wait') out.intents.push(held);
      continue;
    }
    followStep(out, input, { pod, step, picked });
  }
  return out;
}

/** How many pods outside the pick may take a change that restarts nothing this round (within the partition). */
function nonDisruptiveMoves(input: PlanInput, pods: readonly Pod[], update: UpdatePlan): number {
  if (movesNoPod(input.cloneSet.spec.updateStrategy)) return 0;
  const onTarget = pods.filter((p) => podRevision(p) === update.targetRevision).length;
  return Math.min(NON_DISRUPTIVE_MOVES_PER_ROUND, update.expectedUpdatedReplicas - onTarget - update.toUpdate.length);
}

const replaceUnscheduled = (pod: Pod, targetRevision: string): Intent => ({
  kind: 'delete',
  pod,
  reason: 'ReplaceUnscheduled',
  message: `never scheduled; replaced by a pod of revision ${targetRevision}`,
});

/** A patch that changes no image and restarts no container: a pod outside the pick may take it. */
const restartsNothing = (step: InPlaceStep): boolean =>
  step.kind === 'patch' && Object.keys(step.diff.images).length === 0 && Object.keys(step.diff.restarts).length === 0;

/** What a pod's next step adds to the round: its intent, its events, the fields that block it, when to look again. */
function followStep(
  out: PodUpdates,
  input: PlanInput,
  { pod, step, picked }: { pod: Pod; step: InPlaceStep; picked: boolean },
): void {
  switch (step.kind) {
    case 'recreate': {
      const fallback = input.cloneSet.spec.updateStrategy.type !== 'ReCreate';
      if (fallback)
        out.events.push({
          on: 'workload',
          type: 'Normal',
          reason: EventReasons.RecreateFallback,
          message: `recreated: ${step.reason}`,
          batchPod: nameOf(pod),
        });
      out.intents.push({
        kind: 'delete',
        pod,
        reason: fallback ? 'RecreateFallback' : 'RecreateUpdate',
        message: step.reason,
      });
      break;
    }
    case 'blocked':
      out.blockedFields.push(...step.fields);
      break;
    case 'drain':
      out.intents.push({ kind: 'drain', pod, message: step.message });
      for (const missed of step.notPrePulled ?? [])
        out.events.push({ on: pod, type: 'Warning', reason: missed.reason, message: missed.message });
      break;
    case 'wait':
      out.wakeAt = earliest(out.wakeAt, step.untilMs ?? input.now + 500);
      break;
    case 'patch':
      out.intents.push({ kind: 'patch', pod, step: withUpdatingState(input, step, picked) });
      break;
    case 'none':
      break;
  }
}

/**
 * A lifecycle hook holds the pod's update back (lifecycle.ts): a recreate of a pod the preDelete
 * hook holds moves it to PreparingDelete; an in-place update of a pod the inPlaceUpdate hook
 * holds moves it to PreparingUpdate, and waits there until released. Undefined: go ahead.
 */
function heldByLifecycle(input: PlanInput, pod: Pod, step: InPlaceStep, picked: boolean): Intent | 'wait' | undefined {
  const { lifecycle } = input.cloneSet.spec;
  const at = rfc3339Seconds(input.now);
  const move = (state: LifecycleState, options: MoveOptions): Intent => ({
    kind: 'lifecycle',
    pod,
    state,
    at,
    ...options,
    ...lifecycleWrites(pod, state, at, options),
  });
  if (step.kind === 'recreate') {
    const deletion = deletionStep(lifecycle, pod);
    if (deletion === 'delete') return undefined;
    return deletion === 'wait'
      ? 'wait'
      : move('PreparingDelete', { markNotReady: !!lifecycle?.preDelete?.markPodNotReady });
  }
  if (step.kind !== 'drain' && step.kind !== 'wait' && step.kind !== 'patch') return undefined;
  const gate = inPlaceUpdateGate(lifecycle, pod);
  if (gate.kind === 'proceed') return undefined;
  // Only a pod the budget picked enters PreparingUpdate (its hook may mark it not ready); one
  // moved outside the pick by a change that restarts nothing waits for its turn.
  if (gate.kind === 'hold' || !picked) return 'wait';
  const hook = lifecycle?.inPlaceUpdate;
  return move('PreparingUpdate', {
    markNotReady: !!hook?.markPodNotReady,
    ...(gate.restoreHook && hook ? { restoreHook: hook } : {}),
  });
}

/**
 * The in-place patch also labels the pod Updating when an inPlaceUpdate hook waits for the
 * update's end (Updated); without one the pod stays Normal throughout (decision 0019).
 */
function withUpdatingState(
  input: PlanInput,
  step: Extract<InPlaceStep, { kind: 'patch' }>,
  picked: boolean,
): Extract<InPlaceStep, { kind: 'patch' }> {
  // Updating (not available) only for a pod the budget picked.
  if (!input.cloneSet.spec.lifecycle?.inPlaceUpdate || !picked) return step;
  const metadata = (step.patch.metadata ?? {}) as {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  const patch = {
    ...step.patch,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, [LABEL_LIFECYCLE_STATE]: 'Updating' },
      annotations: { ...metadata.annotations, [ANNOTATION_LIFECYCLE_TIMESTAMP]: rfc3339Seconds(input.now) },
    },
  };
  return { ...step, patch };
}

/**
 * Every pod's summary. Surge never replaces a pod that can be updated in place (decision 72): the
 * arithmetic needs to know which moves keep their pod, and asks only while surge is in use.
 */
export function summarizePods(
  input: PlanInput,
  pods: readonly Pod[],
  podsToDelete: ReadonlySet<string>,
  surgeInUse: boolean,
): readonly PodSummary[] {
  const { spec } = input.cloneSet;
  const options = {
    minReadySeconds: spec.minReadySeconds ?? 0,
    now: input.now,
    podsToDelete,
    lifecycle: spec.lifecycle,
  };
  const observed = pods.map((p) => summarizePod(p, options));
  return surgeInUse ? withInPlaceMoves(input, pods, observed) : observed;
}

/**
 * The summaries with `updatesInPlace` set on every scheduled pod not yet on the update revision:
 * whether its move there keeps it (update.ts spends surge only on the moves that replace a pod;
 * decision 72). Under ReCreate every move replaces the pod, and the summaries stay as they are.
 */
export function withInPlaceMoves(
  input: PlanInput,
  pods: readonly Pod[],
  summaries: readonly PodSummary[],
): readonly PodSummary[] {
  const { updateRevision } = input.revisions;
  if (input.cloneSet.spec.updateStrategy.type === 'ReCreate') return summaries;
  return summaries.map((summary, i) => {
    const pod = pods[i];
    // A pod whose template is not held is counted as replaced: the surge errs on the safe side.
    if (summary.revision === updateRevision || pod === undefined || !pod.spec?.nodeName) return summary;
    if (input.revisions.deferred?.has(summary.revision)) return summary;
    return { ...summary, updatesInPlace: stepFor(input, pod, updateRevision).kind !== 'recreate' };
  });
}

/**
 * The next in-place step for one pod. A pod whose template the round does not hold waits for a
 * round that does (templatesWanted; decision 81): never recreated for want of it.
 */
const stepFor = (input: PlanInput, pod: Pod, targetRevision: string): InPlaceStep =>
  input.revisions.deferred?.has(podRevision(pod)) ? { kind: 'none' } : inPlaceStepFor(input, pod, targetRevision);

/**
 * Deferred revisions of the pods the update picked: the round fetches them and plans again
 * (decision 81); should it not fetch them all (its bound), it looks again soon for the rest.
 */
export function templatesWanted(
  input: PlanInput,
  pods: readonly Pod[],
  update: UpdatePlan,
): { revisions: string[]; wakeAt?: number } {
  const picked = new Set(update.toUpdate);
  // A pod never scheduled is replaced without its template.
  const revisions = pods.filter((p) => picked.has(nameOf(p)) && p.spec?.nodeName).map(podRevision);
  const wanted = [...new Set(revisions.filter((r) => input.revisions.deferred?.has(r)))];
  return wanted.length > 0 ? { revisions: wanted, wakeAt: input.now + DEFERRED_RETRY_MS } : { revisions: [] };
}

/** The next in-place step for one pod; a pod whose revision is unknown cannot be diffed. */
function inPlaceStepFor(input: PlanInput, pod: Pod, targetRevision: string): InPlaceStep {
  const strategy = input.cloneSet.spec.updateStrategy;
  const templates = input.revisions.templates;
  const podTemplate = templates.get(podRevision(pod));
  const targetTemplate = templates.get(targetRevision);
  if (!podTemplate || !targetTemplate) {
    return strategy.type === 'InPlaceOnly'
      ? { kind: 'blocked', fields: ['metadata.labels[controller-revision-hash] (unknown revision)'] }
      : { kind: 'recreate', reason: "the pod's revision is unknown" };
  }
  // In place cannot change volumes: new claim templates mean a new pod (docs/decisions/0018-volume-claim-templates.md).
  // Not for a kind with identities: its pod keeps its claims by name whatever the templates, so a
  // new pod would gain nothing; its claims follow the templates in place or not at all (decision 98).
  if (strategy.type !== 'InPlaceOnly' && !input.identity && claimTemplatesChanged(pod, input.cloneSet)) {
    return { kind: 'recreate', reason: 'spec.volumeClaimTemplates changed, and in place cannot change volumes' };
  }
  const prePull = prePullFor(input, pod, targetRevision);
  return planInPlaceUpdate(pod, {
    strategy: strategy.type,
    gracePeriodSeconds: strategy.inPlaceUpdateStrategy.gracePeriodSeconds ?? 0,
    podTemplate,
    targetRevision,
    targetTemplate,
    resize: { supported: true, via: backendOf(input, pod) },
    ...(prePull ? { prePull } : {}),
    now: input.now,
  });
}

export function notInPlaceUpdatable(fields: readonly string[]): ConditionWrites[string] {
  if (fields.length === 0) return null;
  const list = [...new Set(fields)].sort().join(', ');
  return {
    status: 'True',
    reason: ConditionReasons.NotInPlaceUpdatable,
    message: `updateStrategy.type InPlaceOnly cannot apply these changes to running pods: ${list}; revert them or use InPlaceIfPossible/ReCreate`,
  };
}
