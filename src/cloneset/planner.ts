// The CloneSet planner: from what the controller observed (the CloneSet, its pods, its revisions
// and the time) to this round's intents, events and the status they lead to. It is the only place
// that decides which pods leave service, and every such decision draws from the one disruption
// budget (budget.ts): scale-down, ReCreate, the InPlaceIfPossible fallback, in-place restarts,
// RestartContainer resizes and resize outcomes that recreate. A round either scales (creates or
// deletes) or updates, as in Kruise, so expectations cover one kind of change at a time.
// Pure: the clock and the resize backend come in as input. Must not: perform I/O, generate
// names, or read anything but its input.
import { ConditionReasons, EventReasons } from '../api/reasons.js';
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CloneSetConditionTypes as Conditions,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_INSTANCE_ID,
  LABEL_LIFECYCLE_STATE,
  LABEL_SPECIFIED_DELETE,
  type LifecycleHook,
  type LifecycleState,
} from '../api/types.js';
import type { PodTemplate } from '../inplace/diff.js';
import {
  planInPlaceUpdate,
  planNextContainerBatch,
  readUpdateState,
  RESTART_OVERDUE_MS,
  restartOverdue,
  restartRequestedAt,
  settleInPlaceUpdate,
  updateStateProblem,
  type InPlaceStep,
} from '../inplace/plan.js';
import { podCondition } from '../api/pod.js';
import type { Pod } from '../api/wire.js';
import { rfc3339Seconds } from '../api/time.js';
import { allocate, disruptionBudget, disruptionCost } from './budget.js';
import { claimTemplatesChanged } from './claims.js';
import {
  deletionStep,
  excludesPreparingDelete,
  heldNotReady,
  inPlaceUpdateGate,
  lifecycleStateOf,
  marksPodNotReady,
  refreshedLifecycleState,
} from './lifecycle.js';
import type { ConditionWrites, Intent, Plan, PlannedEvent } from './intents.js';
import { countsAsAvailable, isSpecifiedDelete, NONE, type PodSummary } from './pod-state.js';
import { heldByReadinessGate, needsReadinessGateCondition, readinessGateCondition } from '../inplace/readiness-gate.js';
import { availableAt, summarizePod, whyPodCannotStart, type DefaultedWireCloneSet } from './pods.js';
import { backendForPod, type Backend, type NodeResizeEvidence } from '../resize/backend.js';
import { followResizes, rerouteToKubelet, type ResizeBackend, type ResizeFollowUp } from './resizes.js';
import { planScale, type ScalePlan } from './scale.js';
import { matchesSelector, selectorString } from './selector.js';
import { computeStatus, progressDeadlineAt } from './status.js';
import { readinessFacts, withReadiness } from './readiness-conditions.js';
import { planUpdate, resolvePartition, resolveRolloutLimits, type RolloutInput, type UpdatePlan } from './update.js';
import { updateOrderOf } from './update-order.js';
import type { PulledImages } from '../api/prepull.js';
import type { PrePullTarget } from '../inplace/prepull.js';

export interface PlanInput {
  cloneSet: DefaultedWireCloneSet;
  /** Every pod the CloneSet controls, terminating ones included. */
  pods: readonly Pod[];
  revisions: { updateRevision: string; currentRevision: string; templates: ReadonlyMap<string, unknown> };
  now: number;
  resizeBackend: ResizeBackend;
  /** What is known about each node's kubelet (resize/backend.ts), by node name. */
  nodeEvidence: { get(node: string): NodeResizeEvidence | undefined };
  /** The nodes' image pre-pull reports (inplace/prepull.ts); absent: nothing waits for pulls. */
  prePull?: PrePullInput;
}

export interface PrePullInput {
  /** Each node's report, by node name; a node without one has no agent pre-pulling. */
  readonly reports: ReadonlyMap<string, PulledImages>;
  /** When each of the CloneSet's revisions was created (ms), by name. */
  readonly revisionCreatedAt: ReadonlyMap<string, number>;
  readonly timeoutMs: number;
}

/** The pre-pull view of one pod's node for an update to `revision`. */
function prePullFor(input: PlanInput, pod: Pod, revision: string): PrePullTarget | undefined {
  const report = input.prePull?.reports.get(pod.spec?.nodeName ?? '');
  if (input.prePull === undefined || report === undefined) return undefined;
  return { report, revisionCreatedAt: input.prePull.revisionCreatedAt.get(revision), timeoutMs: input.prePull.timeoutMs };
}

const NO_EVIDENCE: NodeResizeEvidence = { kubeletResizes: undefined, why: 'no pod on the node tells' };

/** The backend that resizes `pod`, by the one rule the agent follows too. */
const backendOf = (input: PlanInput, pod: Pod): Backend =>
  backendForPod(input.resizeBackend, input.nodeEvidence.get(pod.spec?.nodeName ?? '') ?? NO_EVIDENCE, pod);

/** What the update half of a round decided for the pods the arithmetic picked. */
interface PodUpdates {
  intents: Intent[];
  events: PlannedEvent[];
  blockedFields: string[];
  wakeAt?: number;
}

/** One round being planned: what was observed, and the intents, events and conditions so far. */
interface Round {
  readonly input: PlanInput;
  readonly cs: DefaultedWireCloneSet;
  readonly replicas: number;
  readonly maxUnavailable: number;
  /** The CloneSet's pods, released ones left out. */
  readonly pods: readonly Pod[];
  readonly summaries: readonly PodSummary[];
  readonly summaryOf: (pod: Pod) => PodSummary;
  readonly rollout: RolloutInput;
  readonly update: UpdatePlan;
  readonly resizes: ResizeFollowUp;
  readonly budget: { total: number; used: number };
  readonly intents: Intent[];
  readonly events: PlannedEvent[];
  readonly conditions: ConditionWrites;
  wakeAt?: number;
  /** Set when the round creates pods: the instance ids they must not take. */
  instanceIdsInUse?: ReadonlySet<string>;
  /** Pods whose lifecycle state moves this round (lifecycle.ts): nothing else writes them. */
  readonly lifecycleMoves: Set<string>;
}

const nameOf = (pod: Pod): string => pod.metadata?.name ?? '';

/** No running pod moves to the update revision: paused, or OnDelete. */
const movesNoPod = (strategy: DefaultedWireCloneSet['spec']['updateStrategy']): boolean =>
  !!strategy.paused || strategy.type === 'OnDelete';

/** Pods created in one round at most, as the ReplicaSet controller's burst (its 500). */
export const CREATES_PER_ROUND = 500;
/**
 * Pods moved in one round by changes that restart nothing (NotRequired resizes, labels), which
 * the budget does not bound: a round of 1,000 resizes made 2,000 writes and held the key, and the
 * status, for 9–13 s. A round of 100 takes about a second; the next round starts on their events.
 */
export const NON_DISRUPTIVE_MOVES_PER_ROUND = 100;

export function planReconcile(input: PlanInput): Plan {
  const round = observe(input);
  const scale = planScale({ ...round.rollout, lifecycleMarksNotReady: marksPodNotReady(input.cloneSet.spec.lifecycle) });
  round.conditions[Conditions.FailedScale] = null;
  if (scale.cancelDelete.length > 0) planCancelDeletes(round, scale);
  else if (scale.create > 0) planCreates(round, scale);
  else if (scale.delete.length > 0) planScaleDown(round, scale);
  else {
    for (const pod of round.pods) if (!pod.metadata?.deletionTimestamp) planLifecycleRefresh(round, pod);
    planUpdates(round);
  }
  planUpkeep(round);
  return finish(round);
}

/** Releases pods that left the selector, reads every pod once, and sizes the budget. */
function observe(input: PlanInput): Round {
  const { cloneSet: cs, now } = input;
  const strategy = cs.spec.updateStrategy;
  const replicas = cs.spec.replicas ?? 1;
  const podsToDelete = new Set(cs.spec.scaleStrategy?.podsToDelete);
  const intents: Intent[] = [];
  const events: PlannedEvent[] = [];
  const pods: Pod[] = [];
  for (const pod of input.pods) {
    if (!pod.metadata?.deletionTimestamp && !matchesSelector(pod.metadata?.labels, cs.spec.selector)) {
      intents.push({ kind: 'release', pod });
      continue;
    }
    pods.push(pod);
    const problem = updateStateProblem(pod);
    if (problem) events.push({ on: pod, type: 'Warning', reason: EventReasons.InvalidAnnotation, message: `${problem}; read as absent` });
  }
  const lifecycle = cs.spec.lifecycle;
  const summaries = pods.map((p) => summarizePod(p, { minReadySeconds: cs.spec.minReadySeconds ?? 0, now, podsToDelete, lifecycle }));
  const summaryByName = new Map(summaries.map((s) => [s.name, s]));
  const rollout: RolloutInput = {
    replicas,
    partition: strategy.partition,
    maxUnavailable: strategy.maxUnavailable,
    maxSurge: strategy.maxSurge,
    // OnDelete moves no running pod, like a pause; the pods that replace deleted ones are new.
    paused: strategy.paused || strategy.type === 'OnDelete',
    scaleMaxUnavailable: cs.spec.scaleStrategy?.maxUnavailable,
    podsToDelete,
    excludePreparingDelete: excludesPreparingDelete(cs),
    currentRevision: input.revisions.currentRevision,
    updateRevision: input.revisions.updateRevision,
    pods: summaries,
    updateOrder: updateOrderOf(strategy, pods),
  };
  const { maxUnavailable } = resolveRolloutLimits(rollout);
  const resizes = followResizes(cs, pods, now);
  events.push(...resizes.events);
  return {
    input,
    cs,
    replicas,
    maxUnavailable,
    pods,
    summaries,
    summaryOf: (pod) => summaryByName.get(nameOf(pod))!,
    rollout,
    update: planUpdate(rollout),
    resizes,
    budget: { total: disruptionBudget({ replicas, maxUnavailable, pods: summaries }), used: 0 },
    intents,
    events,
    conditions: {},
    lifecycleMoves: new Set(),
    ...(resizes.tracking.nextCheckAt !== undefined ? { wakeAt: resizes.tracking.nextCheckAt } : {}),
  };
}

function planCreates(round: Round, scale: ScalePlan): void {
  const { currentRevision, updateRevision, templates } = round.input.revisions;
  // Bounded like the ReplicaSet controller's burst: the next round, once the cache has seen
  // these, creates the next share. One CloneSet's `replicas: 1000000` cannot hold the event loop.
  const count = Math.min(scale.create, CREATES_PER_ROUND);
  // Every pod the CloneSet has, terminating ones too: their names are still taken.
  round.instanceIdsInUse = new Set(round.input.pods.flatMap((p) => p.metadata?.labels?.[LABEL_INSTANCE_ID] ?? []));
  for (let i = 0; i < count; i++) {
    const revision = i < scale.createAtCurrentRevision ? currentRevision : updateRevision;
    round.intents.push({ kind: 'create', revision, template: templates.get(revision) ?? round.cs.spec.template });
  }
  if (scale.create < scale.missing) {
    const message = `scaleStrategy.maxUnavailable holds back ${scale.missing - scale.create} of ${scale.missing} new pods`;
    round.events.push({ on: 'cloneset', type: 'Normal', reason: EventReasons.ScaleUpLimited, message });
  }
}

/** PreparingDelete pods replicas wants again go back to PreparingNormal (lifecycle.ts). */
function planCancelDeletes(round: Round, scale: ScalePlan): void {
  const back = new Set(scale.cancelDelete);
  for (const pod of round.pods.filter((p) => back.has(nameOf(p)))) moveLifecycle(round, pod, 'PreparingNormal');
}

/** Plans a pod's lifecycle move, once per pod and round. */
function moveLifecycle(
  round: Round,
  pod: Pod,
  state: LifecycleState,
  options: { markNotReady?: boolean; restoreHook?: LifecycleHook } = {},
): void {
  if (round.lifecycleMoves.has(nameOf(pod))) return;
  round.lifecycleMoves.add(nameOf(pod));
  round.intents.push({ kind: 'lifecycle', pod, state, at: rfc3339Seconds(round.input.now), ...options });
}

/**
 * Scale-down victims were chosen within the budget by the arithmetic (deleteReadyLimit). A pod
 * the preDelete hook holds moves to PreparingDelete instead, and is deleted once released.
 */
function planScaleDown(round: Round, scale: ScalePlan): void {
  const victims = new Set(scale.delete);
  const preDelete = round.cs.spec.lifecycle?.preDelete;
  for (const pod of round.pods.filter((p) => victims.has(nameOf(p)))) {
    const step = deletionStep(round.cs.spec.lifecycle, pod);
    if (step !== 'delete') {
      if (step === 'prepare') moveLifecycle(round, pod, 'PreparingDelete', { markNotReady: !!preDelete?.markPodNotReady });
      round.budget.used += disruptionCost(round.summaryOf(pod));
      continue;
    }
    const specified = isSpecifiedDelete(round.summaryOf(pod), round.rollout.podsToDelete);
    const labelled = pod.metadata?.labels?.[LABEL_SPECIFIED_DELETE] !== undefined;
    const message = !specified
      ? `replicas is ${round.replicas}`
      : labelled
        ? `labelled ${LABEL_SPECIFIED_DELETE}`
        : 'named in scaleStrategy.podsToDelete';
    round.intents.push({ kind: 'delete', pod, reason: specified ? 'PodsToDelete' : 'ScaleDown', message });
    round.budget.used += disruptionCost(round.summaryOf(pod));
  }
}

/**
 * The update and the resize outcomes share what is left of the budget, update first: the
 * arithmetic has already taken its part (limitCandidates).
 */
function planUpdates(round: Round): void {
  const { update } = round;
  round.budget.used += update.budgetUsed;
  const podUpdates = planPodUpdates(round.input, round.pods, update, round.lifecycleMoves);
  round.intents.push(...podUpdates.intents);
  round.events.push(...podUpdates.events);
  round.wakeAt = earliest(round.wakeAt, podUpdates.wakeAt);
  setTransition(round, Conditions.FailedUpdate, EventReasons.NotInPlaceUpdatable, notInPlaceUpdatable(podUpdates.blockedFields));
  const blocked = rolloutBlocked(round);
  setTransition(round, Conditions.RolloutBlocked, EventReasons.RolloutBlocked, blocked.condition);
  round.wakeAt = earliest(round.wakeAt, blocked.wakeAt === Infinity ? undefined : blocked.wakeAt);
  planResizeOutcomes(round);
}

/** Recreates what the resize strategy asks for while the budget lasts; the rest is ResizeBlocked. */
function planResizeOutcomes(round: Round): void {
  const { tracking } = round.resizes;
  const leaving = new Set(round.intents.flatMap((i) => (i.kind === 'delete' ? [nameOf(i.pod)] : [])));
  const wanted = tracking.recreate.filter((r) => !leaving.has(nameOf(r.pod)));
  const { admitted, held } = allocate(round.budget.total - round.budget.used, wanted, (r) => round.summaryOf(r.pod));
  for (const { pod, reason } of admitted) {
    round.budget.used += disruptionCost(round.summaryOf(pod));
    round.intents.push({ kind: 'delete', pod, reason: 'ResizeRecreate', message: `recreated with its new resources: ${reason}` });
    const message = `pod ${nameOf(pod)} is recreated with its new resources: ${reason}`;
    round.events.push({ on: 'cloneset', type: 'Warning', reason: EventReasons.ResizeRecreate, message });
  }
  const unavailable = round.summaries
    .filter((s) => !s.terminating && !countsAsAvailable(s))
    .map((s) => s.name)
    .sort();
  const outOfService = unavailable.join(', ') || 'pods not yet created';
  const lines = [
    ...tracking.blocked.map((b) => `${nameOf(b.pod)}: ${b.reason}${b.message ? ` (${b.message})` : ''}`),
    ...held.map(
      (h) => `${nameOf(h.pod)}: ${h.reason}, recreate waits for maxUnavailable ${round.maxUnavailable} (out of service: ${outOfService})`,
    ),
  ];
  const infeasible = [...tracking.blocked, ...held].some((b) => b.reason === 'Infeasible');
  round.conditions[Conditions.ResizeBlocked] =
    lines.length === 0
      ? null
      : {
          status: 'True',
          reason: infeasible ? ConditionReasons.Infeasible : ConditionReasons.Timeout,
          message: lines.sort().join('; ').slice(0, 2000),
        };
}

/** Every round: settle finished in-place updates, mark new pods' gates, reroute stale requests. */
function planUpkeep(round: Round): void {
  const selected = new Set(round.update.toUpdate);
  const { lifecycle } = round.cs.spec;
  // A pod this round already deletes, moves or updates gets no gate write (settle, next batch,
  // gate ready) besides: the two could race (a hook's gate False against a settle's True). It
  // waits for the next round, which that write's own watch event starts.
  const written = new Set(round.intents.flatMap((i) => ('pod' in i ? [nameOf(i.pod)] : [])));
  const deleted = new Set(round.intents.flatMap((i) => (i.kind === 'delete' ? [nameOf(i.pod)] : [])));
  for (const pod of round.pods) {
    if (!deleted.has(nameOf(pod))) {
      const reroute = rerouteToKubelet(pod, backendOf(round.input, pod));
      if (reroute && !pod.metadata?.deletionTimestamp) round.intents.push({ kind: 'reroute', pod, ...reroute });
    }
    if (written.has(nameOf(pod))) continue;
    // A hook that marks the pod not ready holds the gate False every round, not only at the move.
    const state = lifecycleStateOf(pod);
    if (heldNotReady(lifecycle, state) && !pod.metadata?.deletionTimestamp && readinessGateCondition(pod)?.status !== 'False') {
      round.intents.push({ kind: 'holdNotReady', pod, state: state as LifecycleState, at: rfc3339Seconds(round.input.now) });
      continue;
    }
    let settlement = settleInPlaceUpdate(pod, selected.has(nameOf(pod)));
    // A hook that marks the pod not ready holds the gate False itself: nothing to withdraw.
    if (settlement === 'undrain' && heldNotReady(lifecycle, state)) settlement = 'none';
    if (settlement === 'complete' || settlement === 'undrain') round.intents.push({ kind: 'settle', pod, settlement });
    // The next container batch of a pod still at the revision it is updated to (decision 0021).
    const podTemplate = round.input.revisions.templates.get(pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '') as
      PodTemplate | undefined;
    const nextBatch =
      settlement === 'pending' && !selected.has(nameOf(pod))
        ? planNextContainerBatch(pod, podTemplate, round.input.now, backendOf(round.input, pod))
        : undefined;
    if (nextBatch) round.intents.push({ kind: 'patch', pod, step: nextBatch });
    if (settlement === 'pending') {
      // Look again when a restart still waiting would be overdue, to say so (RolloutBlocked).
      const update = readUpdateState(pod);
      const overdueAt = (update ? restartRequestedAt(update) : NaN) + RESTART_OVERDUE_MS;
      if (overdueAt > round.input.now) round.wakeAt = earliest(round.wakeAt, overdueAt);
    }
    if (!pod.metadata?.deletionTimestamp && needsReadinessGateCondition(pod)) round.intents.push({ kind: 'markGateReady', pod });
  }
}

/**
 * The move a pod makes without being deleted or updated (PreparingNormal → Normal and the like);
 * as in Kruise, only in a round that does not scale.
 */
function planLifecycleRefresh(round: Round, pod: Pod): void {
  const { lifecycle } = round.cs.spec;
  const revision = pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '';
  const next = refreshedLifecycleState(lifecycle, pod, {
    updateRevision: round.input.revisions.updateRevision,
    revision,
    scheduled: !!pod.spec?.nodeName,
    inPlaceUpdateDone: readUpdateState(pod)?.revision === revision && !heldByReadinessGate(pod),
  });
  if (next !== undefined) moveLifecycle(round, pod, next);
}

/** The status the round leads to, and when to look again. */
function finish(round: Round): Plan {
  const { cs, input, replicas } = round;
  const { now } = input;
  const strategy = cs.spec.updateStrategy;
  const counted = computeStatus({
    generation: cs.metadata?.generation ?? 0,
    replicas,
    pods: round.summaries,
    currentRevision: input.revisions.currentRevision,
    updateRevision: input.revisions.updateRevision,
    collisionCount: cs.status?.collisionCount ?? 0,
    expectedUpdatedReplicas: replicas - resolvePartition(strategy.partition, replicas),
    labelSelector: selectorString(cs.spec.selector),
    previous: cs.status,
    progressDeadlineSeconds: cs.spec.progressDeadlineSeconds,
    paused: !!strategy.paused,
    onDelete: strategy.type === 'OnDelete',
    resize: round.resizes.tracking.status,
    conditions: round.conditions,
    now,
  });
  // Reconciling and Stalled (kstatus) read the status Kruise's conditions lead to; the reconciler
  // decides them again once the round's failures are folded in.
  const status = withReadiness(counted, readinessFacts(cs.spec), now);
  let wakeAt = earliest(round.wakeAt, progressDeadlineAt(status, cs.spec.progressDeadlineSeconds));
  for (const pod of round.pods) {
    const at = availableAt(pod, cs.spec.minReadySeconds ?? 0);
    if (at !== undefined && at > now) wakeAt = earliest(wakeAt, at);
  }
  const plan: Plan = {
    intents: round.intents,
    events: round.events,
    status,
    budget: round.budget,
    resizeDurations: round.resizes.durations,
    instanceIdsInUse: round.instanceIdsInUse ?? NONE,
  };
  if (wakeAt !== undefined) plan.wakeAt = wakeAt;
  return plan;
}

/**
 * Moves the pods the arithmetic picked toward the target revision: in place where the strategy
 * and the change allow, by recreate otherwise. Pods outside the pick move only by changes that
 * restart nothing (labels, NotRequired resizes), bounded by the partition and by
 * NON_DISRUPTIVE_MOVES_PER_ROUND. A pod that was never scheduled is replaced, whatever the
 * strategy: nothing of it runs, so nothing is lost.
 */
function planPodUpdates(input: PlanInput, pods: readonly Pod[], update: UpdatePlan, lifecycleMoves: ReadonlySet<string>): PodUpdates {
  const { cloneSet: cs, now } = input;
  const strategy = cs.spec.updateStrategy;
  const out: PodUpdates = { intents: [], events: [], blockedFields: [] };
  const revisionOf = (p: Pod): string => p.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '';
  const selected = new Set(update.toUpdate);
  const onTarget = pods.filter((p) => revisionOf(p) === update.targetRevision).length;
  let nonDisruptive = movesNoPod(strategy)
    ? 0
    : Math.min(NON_DISRUPTIVE_MOVES_PER_ROUND, update.expectedUpdatedReplicas - onTarget - update.toUpdate.length);
  for (const pod of pods) {
    // A pod whose lifecycle state moves this round is written once: its update waits a round.
    if (pod.metadata?.deletionTimestamp || revisionOf(pod) === update.targetRevision || lifecycleMoves.has(nameOf(pod))) continue;
    const picked = selected.has(nameOf(pod));
    if (!picked && nonDisruptive <= 0) continue;
    if (picked && !pod.spec?.nodeName) {
      out.intents.push({
        kind: 'delete',
        pod,
        reason: 'ReplaceUnscheduled',
        message: `never scheduled; replaced by a pod of revision ${update.targetRevision}`,
      });
      continue;
    }
    const step = stepFor(input, pod, update.targetRevision);
    if (!picked) {
      if (step.kind !== 'patch' || Object.keys(step.diff.images).length > 0 || Object.keys(step.diff.restarts).length > 0) continue;
      nonDisruptive--;
    }
    const held = heldByLifecycle(input, pod, step, picked);
    if (held) {
      if (held !== 'wait') out.intents.push(held);
      continue;
    }
    switch (step.kind) {
      case 'recreate': {
        const fallback = strategy.type !== 'ReCreate';
        if (fallback)
          out.events.push({
            on: 'cloneset',
            type: 'Normal',
            reason: EventReasons.RecreateFallback,
            message: `recreated: ${step.reason}`,
            batchPod: nameOf(pod),
          });
        out.intents.push({ kind: 'delete', pod, reason: fallback ? 'RecreateFallback' : 'RecreateUpdate', message: step.reason });
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
        out.wakeAt = earliest(out.wakeAt, step.untilMs ?? now + 500);
        break;
      case 'patch':
        out.intents.push({ kind: 'patch', pod, step: withUpdatingState(input, step, picked) });
        break;
      case 'none':
        break;
    }
  }
  return out;
}

/**
 * A lifecycle hook holds the pod's update back (lifecycle.ts): a recreate of a pod the preDelete
 * hook holds moves it to PreparingDelete; an in-place update of a pod the inPlaceUpdate hook
 * holds moves it to PreparingUpdate, and waits there until released. Undefined: go ahead.
 */
function heldByLifecycle(input: PlanInput, pod: Pod, step: InPlaceStep, picked: boolean): Intent | 'wait' | undefined {
  const { lifecycle } = input.cloneSet.spec;
  const move = (state: LifecycleState, options: { markNotReady?: boolean; restoreHook?: LifecycleHook }): Intent => ({
    kind: 'lifecycle',
    pod,
    state,
    at: rfc3339Seconds(input.now),
    ...options,
  });
  if (step.kind === 'recreate') {
    const deletion = deletionStep(lifecycle, pod);
    if (deletion === 'delete') return undefined;
    return deletion === 'wait' ? 'wait' : move('PreparingDelete', { markNotReady: !!lifecycle?.preDelete?.markPodNotReady });
  }
  if (step.kind !== 'drain' && step.kind !== 'wait' && step.kind !== 'patch') return undefined;
  const gate = inPlaceUpdateGate(lifecycle, pod);
  if (gate.kind === 'proceed') return undefined;
  // Only a pod the budget picked enters PreparingUpdate (its hook may mark it not ready); one
  // moved outside the pick by a change that restarts nothing waits for its turn.
  if (gate.kind === 'hold' || !picked) return 'wait';
  const hook = lifecycle?.inPlaceUpdate;
  return move('PreparingUpdate', { markNotReady: !!hook?.markPodNotReady, ...(gate.restoreHook && hook ? { restoreHook: hook } : {}) });
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
  const metadata = (step.patch.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
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

/** The next in-place step for one pod; a pod whose revision is unknown cannot be diffed. */
function stepFor(input: PlanInput, pod: Pod, targetRevision: string): InPlaceStep {
  const strategy = input.cloneSet.spec.updateStrategy;
  const templates = input.revisions.templates;
  const podTemplate = templates.get(pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '') as PodTemplate | undefined;
  const targetTemplate = templates.get(targetRevision) as PodTemplate | undefined;
  if (!podTemplate || !targetTemplate) {
    return strategy.type === 'InPlaceOnly'
      ? { kind: 'blocked', fields: ['metadata.labels[controller-revision-hash] (unknown revision)'] }
      : { kind: 'recreate', reason: "the pod's revision is unknown" };
  }
  // In place cannot change volumes: new claim templates mean a new pod (docs/decisions/0018-volume-claim-templates.md).
  if (strategy.type !== 'InPlaceOnly' && claimTemplatesChanged(pod, input.cloneSet)) {
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

function notInPlaceUpdatable(fields: readonly string[]): ConditionWrites[string] {
  if (fields.length === 0) return null;
  const list = [...new Set(fields)].sort().join(', ');
  return {
    status: 'True',
    reason: ConditionReasons.NotInPlaceUpdatable,
    message: `updateStrategy.type InPlaceOnly cannot apply these changes to running pods: ${list}; revert them or use InPlaceIfPossible/ReCreate`,
  };
}

/** Why a pod will not come back into service without help: it cannot start, or no one restarts it. */
const whyStuck = (pod: Pod, now: number): string | undefined => whyPodCannotStart(pod) ?? restartOverdue(pod, now);

/** Stuck pods RolloutBlocked names (with why) before it counts the rest: the message stays short. */
const NAMED_STUCK_PODS = 5;

/** How long a pod may be on its way into service before it counts as holding the rollout up. */
const STUCK_AFTER_MS = 30_000;

/**
 * Since when a pod that does not count as available has been out of service, if that is long
 * enough to call it stuck: at once for a pod no node fits or a container that will not start
 * (crash loop, image pull back-off, bad config); otherwise once it has been not
 * ready (or, never ready, in existence) for STUCK_AFTER_MS. Pods starting up after a restart are
 * the rollout moving, not blocked. `at` is when it will count as stuck, for a wake-up.
 */
function stuck(pod: Pod, now: number): { now: boolean; at?: number } {
  if (whyStuck(pod, now) !== undefined) return { now: true };
  const ready = podCondition(pod, 'Ready');
  const since = Date.parse((ready?.status === 'False' ? ready.lastTransitionTime : undefined) ?? pod.metadata?.creationTimestamp ?? '');
  if (Number.isNaN(since)) return { now: true };
  const at = since + STUCK_AFTER_MS;
  return at <= now ? { now: true } : { now: false, at };
}

/**
 * A rollout that cannot move because maxUnavailable pods are already out of service and stuck
 * there (a new image that never becomes ready, a replacement no node fits) says so, naming the
 * pods. Pods in the middle of our own in-place update, and pods still starting, are the rollout
 * at work and are not named; the round wakes when one of them would count as stuck.
 */
function rolloutBlocked(round: Round): { condition: ConditionWrites[string]; wakeAt?: number } {
  const { update, replicas, maxUnavailable } = round;
  const live = round.pods.filter((p) => !p.metadata?.deletionTimestamp);
  const onTarget = (p: Pod): boolean => round.summaryOf(p).revision === update.targetRevision;
  const pending = live.filter((p) => !onTarget(p)).length;
  const wanted = update.expectedUpdatedReplicas - live.filter(onTarget).length;
  if (movesNoPod(round.cs.spec.updateStrategy) || update.toUpdate.length > 0 || pending === 0 || wanted <= 0) return { condition: null };
  // A pod mid in-place update is the rollout at work, unless it will not start without help (an
  // image that cannot be pulled): then it is what holds the rollout, and the user must see it.
  const out = live.filter((p) => {
    const summary = round.summaryOf(p);
    return !countsAsAvailable(summary) && (!summary.inPlaceUpdating || whyStuck(p, round.input.now) !== undefined);
  });
  const missing = Math.max(0, replicas - live.length);
  if (out.length + missing === 0 || out.length + missing < maxUnavailable) return { condition: null };
  const verdicts = out.map((p) => ({ pod: p, ...stuck(p, round.input.now) }));
  const stuckPods = verdicts
    .filter((v) => v.now)
    .map((v) => v.pod)
    .sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  if (stuckPods.length === 0) {
    return { condition: null, wakeAt: Math.min(...verdicts.map((v) => v.at ?? Infinity)) };
  }
  const described = stuckPods.slice(0, NAMED_STUCK_PODS).map((p) => {
    const why = whyStuck(p, round.input.now);
    return why === undefined ? nameOf(p) : `${nameOf(p)} (${why.slice(0, 300)})`;
  });
  const more = stuckPods.length - described.length;
  const names = [...described, ...(more > 0 ? [`${more} more`] : []), ...(missing > 0 ? [`${missing} pod(s) not yet created`] : [])];
  return {
    condition: {
      status: 'True',
      reason: ConditionReasons.MaxUnavailable,
      message: `${out.length + missing} pod(s) out of service (maxUnavailable ${maxUnavailable}), stuck: ${names.join(', ')}; the rollout waits for them`,
    },
  };
}

/** Sets a condition and, when it newly appears or its message changes, plans its event. */
function setTransition(round: Round, type: string, reason: string, wanted: ConditionWrites[string]): void {
  round.conditions[type] = wanted;
  if (!wanted) return;
  const old = round.cs.status?.conditions?.find((c) => c.type === type);
  if (old?.status !== wanted.status || old.message !== wanted.message) {
    round.events.push({ on: 'cloneset', type: 'Warning', reason, message: wanted.message });
  }
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
