// The CloneSet planner: from what the controller observed (the CloneSet, its pods, its revisions
// and the time) to this round's intents, events and the status they lead to. It is the only place
// that decides which pods leave service, and every such decision draws from the one disruption
// budget (budget.ts): scale-down, ReCreate, the InPlaceIfPossible fallback, in-place restarts,
// RestartContainer resizes and resize outcomes that recreate. A round either scales (creates or
// deletes) or updates, as in Kruise, so expectations cover one kind of change at a time. It also
// decides the round's claims (claims.ts) and so how many creates go out. Owns the round's order;
// its input is plan-input.ts, each pod's update pod-update.ts, RolloutBlocked rollout-blocked.ts.
// Pure: the clock and the resize backend come in as input. Must not: perform I/O, generate
// names, or read anything but its input.
import { EventReasons } from '../../api/reasons.js';
import {
  CloneSetConditionTypes as Conditions,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_INSTANCE_ID,
  LABEL_SPECIFIED_DELETE,
  type CloneSetStatus,
  type LifecycleState,
} from '../../api/types.js';
import { readUpdateState, updateStateProblem } from '../../inplace/pure/plan.js';
import type { Pod } from '../../api/wire.js';
import { rfc3339Seconds } from '../../api/time.js';
import { allocate, budgetFor, disruptionBudget, disruptionCost, surgeRoom } from './budget.js';
import { planClaims, type ClaimPlan } from './claims.js';
import {
  deletionStep,
  excludesPreparingDelete,
  lifecycleWrites,
  marksPodNotReady,
  refreshedLifecycleState,
  type MoveOptions,
} from './lifecycle.js';
import type { ConditionWrites, Intent, PlannedEvent } from './intents.js';
import type { Plan } from './round-plan.js';
import { countsAsAvailable, isSpecifiedDelete, NONE } from './pod-state.js';
import { heldByReadinessGate } from '../../inplace/pure/readiness-gate.js';
import { availableAt } from './pod-summary.js';
import { earliest, movesNoPod, nameOf, type PlanInput } from './plan-input.js';
import { notInPlaceUpdatable, planPodUpdates, summarizePods, templatesWanted } from './pod-update.js';
import { followResizes, markResizeRecreates, resizeBlockedCondition } from './resizes.js';
import { rolloutBlocked } from './rollout-blocked.js';
import { revisionsInUseCondition } from './round-templates.js';
import { driverHold } from './driver-hold.js';
import { planScale, type ScalePlan } from './scale.js';
import { matchesSelector, selectorString } from './selector.js';
import { adoptable } from './adoption.js';
import { kindOf } from './pods.js';
import { withScaleDownClaims } from './claim-owners.js';
import { withIdentityClaims } from './identity-claims.js';
import { computeStatus, progressDeadlineAt } from './status.js';
import { readinessFacts, withReadiness } from './readiness-conditions.js';
import { planUpdate, type RolloutInput, type RolloutSpec } from './update.js';
import type { Round } from './round.js';
import { planUpkeep } from './upkeep.js';
import { resolveRolloutLimits } from './limits.js';
import { updateOrderOf } from './update-order.js';
import type { PodIdentity } from './kind.js';

/** Pods created in one round at most, as the ReplicaSet controller's burst (its 500). */
export const CREATES_PER_ROUND = 500;

export function planReconcile(input: PlanInput): Plan {
  const round = observe(input);
  round.conditions[Conditions.RevisionsInUse] = revisionsInUseCondition(input.revisions.inUse);
  setTransition(round, Conditions.UpdateHeld, EventReasons.UpdateHeld, round.updateHeld ?? null);
  if (!planAdoptions(round)) planScaleAndUpdates(round);
  planUpkeep(round);
  const claims = planRoundClaims(round);
  const { cs, summaries } = round;
  const plan = withIdentityClaims(finish(round), { input, cs, summaries, paused: pausedOrHeld(round) });
  if (round.templatesWanted?.length) plan.templatesWanted = round.templatesWanted;
  return claims ? { ...plan, claims } : plan;
}

/**
 * Adopts the orphans the workload's selector matches (adoption.ts); true when there are any. A
 * round that adopts does nothing else: the adopted pods count from the next round on, so a pod is
 * neither created beside them nor moved before the cache shows them as the workload's.
 */
function planAdoptions(round: Round): boolean {
  const orphans = adoptable(round.input.orphans ?? [], round.cs, round.input.identity?.isMember);
  for (const pod of orphans) round.intents.push({ kind: 'adopt', pod });
  return orphans.length > 0;
}

/** Scale, or else the lifecycle moves and updates of the pods it has. */
function planScaleAndUpdates(round: Round): void {
  const scale = planRoundScale(round);
  round.conditions[Conditions.FailedScale] = null;
  if (scale.cancelDelete.length > 0) planCancelDeletes(round, scale);
  else if (scale.create > 0) planCreates(round, scale);
  else if (scale.delete.length > 0) planScaleDown(round, scale);
  else {
    for (const pod of round.pods) if (!pod.metadata?.deletionTimestamp) planLifecycleRefresh(round, pod);
    planUpdates(round);
  }
}

/** The CloneSet's scale arithmetic (scale.ts), or the kind's own when its pods have identities. */
function planRoundScale(round: Round): ScalePlan {
  const { identity, cloneSet } = round.input;
  if (identity) return planIdentityScale(round, identity);
  return planScale({ ...round.rollout, lifecycleMarksNotReady: marksPodNotReady(cloneSet.spec.lifecycle) });
}

/**
 * A kind with pod identities scales by its own rules (kind.ts); the pods it replaces (ended, or
 * specified for deletion) leave first, and in a round of their own, so a name is never wanted
 * twice at once; each costs the budget what it costs.
 */
function planIdentityScale(round: Round, identity: PodIdentity): ScalePlan {
  const { input, cs, pods, summaries, limits } = round;
  const plan = identity.planScale({ workload: cs, pods, summaries, limits, now: input.now });
  const replace = new Map(plan.replace.map((r) => [r.name, r.why]));
  for (const pod of pods.filter((p) => replace.has(nameOf(p)))) {
    const ended = replace.get(nameOf(pod)) === 'ended';
    const message = ended
      ? `pod ${nameOf(pod)} ended (${pod.status?.phase}); it comes back with its name and claims`
      : `labelled ${LABEL_SPECIFIED_DELETE}; it comes back with its name and claims`;
    round.intents.push({ kind: 'delete', pod, reason: ended ? 'ReplaceEnded' : 'PodsToDelete', message });
    round.budget.used += disruptionCost(round.summaryOf(pod));
  }
  round.createIds = plan.createIds;
  return replace.size > 0 ? { ...plan, create: 0, delete: [], cancelDelete: [] } : plan;
}

/**
 * What happens to the CloneSet's claims this round (claims.ts): the claims of the pods it deletes
 * go with them, and a replacement waiting for its predecessor's name (and claims) is created once
 * that pod is gone: its create leaves the round. Undefined without templates or claims.
 */
function planRoundClaims(round: Round): ClaimPlan | undefined {
  const claims = round.input.claims ?? [];
  if (claims.length === 0 && (round.cs.spec.volumeClaimTemplates ?? []).length === 0) return undefined;
  const deletedPods = round.intents.flatMap((i) => (i.kind === 'delete' ? [i.pod] : []));
  const { identity } = round.input;
  const scaledDown = round.intents.flatMap((i) => (i.kind === 'delete' && i.reason === 'ScaleDown' ? [i.pod] : []));
  const counted = planClaims({ cloneSet: round.cs, pods: round.input.pods, claims, deletedPods });
  const plan = identity ? withScaleDownClaims(counted, scaledDown, round.cs, identity) : counted;
  // The first creates go out; the last heldCreates wait for a later round.
  let held = plan.heldCreates;
  for (let i = round.intents.length - 1; i >= 0 && held > 0; i--) {
    if (round.intents[i]?.kind !== 'create') continue;
    round.intents.splice(i, 1);
    held--;
  }
  return plan;
}

/** The pods the selector still matches; the others are released. An unreadable update state is said once per pod. */
function selectedPods(input: PlanInput): { pods: Pod[]; intents: Intent[]; events: PlannedEvent[] } {
  const { selector } = input.cloneSet.spec;
  const out = { pods: [] as Pod[], intents: [] as Intent[], events: [] as PlannedEvent[] };
  for (const pod of input.pods) {
    if (!pod.metadata?.deletionTimestamp && !matchesSelector(pod.metadata?.labels, selector)) {
      out.intents.push({ kind: 'release', pod });
      continue;
    }
    out.pods.push(pod);
    const problem = updateStateProblem(pod);
    if (problem)
      out.events.push({
        on: pod,
        type: 'Warning',
        reason: EventReasons.InvalidAnnotation,
        message: `${problem}; read as absent`,
      });
  }
  return out;
}

/** Releases pods that left the selector, reads every pod once, and sizes the budget. */
function observe(input: PlanInput): Round {
  const { cloneSet: cs, now } = input;
  const strategy = cs.spec.updateStrategy;
  const replicas = cs.spec.replicas ?? 1;
  const podsToDelete = new Set(cs.spec.scaleStrategy?.podsToDelete);
  const { pods, intents, events } = selectedPods(input);
  // OnDelete moves no running pod, like a pause; the pods that replace deleted ones are new. So
  // does a change the canary driver let through unseen (decision 97).
  const updateHeld = driverHold({ ...cs.metadata, ...input.revisions });
  const paused = movesNoPod(strategy) || updateHeld !== undefined;
  const resizes = followResizes(
    cs.status,
    { type: cs.spec.updateStrategy.type, ...cs.spec.updateStrategy.resizeStrategy },
    pods,
    now,
  );
  events.push(...resizes.events);
  const spec: RolloutSpec = {
    replicas,
    partition: strategy.partition,
    maxUnavailable: strategy.maxUnavailable,
    maxSurge: strategy.maxSurge,
    paused,
    scaleMaxUnavailable: cs.spec.scaleStrategy?.maxUnavailable,
  };
  // The one place a round resolves its limits: every part of the plan reads these.
  const limits = resolveRolloutLimits(spec);
  const { maxUnavailable, maxSurge } = limits;
  const summaries = markResizeRecreates(summarizePods(input, pods, podsToDelete, maxSurge > 0), resizes.tracking);
  const summaryByName = new Map(summaries.map((s) => [s.name, s]));
  const rollout: RolloutInput = {
    ...spec,
    limits,
    podsToDelete,
    excludePreparingDelete: excludesPreparingDelete(cs),
    currentRevision: input.revisions.currentRevision,
    updateRevision: input.revisions.updateRevision,
    pods: summaries,
    updateOrder: updateOrderOf(strategy, pods),
  };
  return {
    input,
    cs,
    replicas,
    limits,
    pods,
    summaries,
    summaryOf: (pod) => summaryByName.get(nameOf(pod))!,
    rollout,
    update: planUpdate(rollout),
    ...(updateHeld !== undefined ? { updateHeld } : {}),
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
    const template = templates.get(revision) ?? round.cs.spec.template;
    const instanceId = round.createIds?.[i];
    round.intents.push({ kind: 'create', revision, template, ...(instanceId !== undefined ? { instanceId } : {}) });
  }
  if (scale.create < scale.missing) {
    const message = `scaleStrategy.maxUnavailable holds back ${scale.missing - scale.create} of ${scale.missing} new pods`;
    round.events.push({ on: 'workload', type: 'Normal', reason: EventReasons.ScaleUpLimited, message });
  }
}

/** PreparingDelete pods replicas wants again go back to PreparingNormal (lifecycle.ts). */
function planCancelDeletes(round: Round, scale: ScalePlan): void {
  const back = new Set(scale.cancelDelete);
  for (const pod of round.pods.filter((p) => back.has(nameOf(p)))) moveLifecycle(round, pod, 'PreparingNormal');
}

/** Plans a pod's lifecycle move, once per pod and round. */
function moveLifecycle(round: Round, pod: Pod, state: LifecycleState, options: MoveOptions = {}): void {
  if (round.lifecycleMoves.has(nameOf(pod))) return;
  round.lifecycleMoves.add(nameOf(pod));
  const at = rfc3339Seconds(round.input.now);
  round.intents.push({ kind: 'lifecycle', pod, state, at, ...options, ...lifecycleWrites(pod, state, at, options) });
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
      if (step === 'prepare')
        moveLifecycle(round, pod, 'PreparingDelete', { markNotReady: !!preDelete?.markPodNotReady });
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
  const wanted = templatesWanted(round.input, round.pods, update);
  round.templatesWanted = wanted.revisions;
  round.wakeAt = earliest(round.wakeAt, wanted.wakeAt);
  setTransition(
    round,
    Conditions.FailedUpdate,
    EventReasons.NotInPlaceUpdatable,
    notInPlaceUpdatable(podUpdates.blockedFields),
  );
  const blocked = rolloutBlocked(round);
  setTransition(round, Conditions.RolloutBlocked, EventReasons.RolloutBlocked, blocked.condition);
  round.wakeAt = earliest(round.wakeAt, blocked.wakeAt === Infinity ? undefined : blocked.wakeAt);
  planResizeOutcomes(round);
}

/**
 * Recreates what the resize strategy asks for while the budget lasts; the rest is ResizeBlocked.
 * With surge, the replacement was created first (update.ts), and the recreate takes only the
 * capacity it adds, less what this round took already, so capacity never drops (decision 79).
 */
function planResizeOutcomes(round: Round): void {
  const { tracking } = round.resizes;
  const leaving = new Set(round.intents.flatMap((i) => (i.kind === 'delete' ? [nameOf(i.pod)] : [])));
  const wanted = tracking.recreate.filter((r) => !leaving.has(nameOf(r.pod)));
  // What the update left, node shares included (nothing else this round took pods out of service).
  const budgetInput = { replicas: round.replicas, maxUnavailable: round.limits.maxUnavailable, pods: round.summaries };
  const left = round.update.budgetLeft ?? budgetFor(budgetInput);
  const surged = round.limits.maxSurge > 0;
  const cap = surged ? Math.max(0, surgeRoom(budgetInput) - round.budget.used) : Infinity;
  const { admitted, held } = allocate(left, wanted, (r) => round.summaryOf(r.pod), cap);
  for (const { pod, reason } of admitted) {
    round.budget.used += disruptionCost(round.summaryOf(pod));
    round.intents.push({
      kind: 'delete',
      pod,
      reason: 'ResizeRecreate',
      message: `recreated with its new resources: ${reason}`,
    });
    const message = `pod ${nameOf(pod)} is recreated with its new resources: ${reason}`;
    round.events.push({ on: 'workload', type: 'Warning', reason: EventReasons.ResizeRecreate, message });
  }
  const unavailable = round.summaries
    .filter((s) => !s.terminating && !countsAsAvailable(s))
    .map((s) => s.name)
    .sort();
  const waitsFor = surged
    ? `its replacement to be available (maxSurge ${round.limits.maxSurge})`
    : `maxUnavailable ${round.limits.maxUnavailable} (out of service: ${unavailable.join(', ') || 'pods not yet created'})`;
  round.conditions[Conditions.ResizeBlocked] = resizeBlockedCondition(tracking.blocked, held, waitsFor);
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

/** The engine's status with the kind's own fields (kind.ts), when the kind has any. */
function withKindStatus(round: Round, counted: CloneSetStatus): CloneSetStatus {
  const { kindStatus } = round.input;
  return kindStatus ? kindStatus(counted, round.summaries, round.input.setClaims ?? [], round.cs) : counted;
}

/** Paused, or held for the canary driver (decision 97): Kruise's Progressing says paused for both. */
const pausedOrHeld = (round: Round): boolean => !!round.cs.spec.updateStrategy.paused || round.updateHeld !== undefined;

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
    expectedUpdatedReplicas: replicas - round.limits.partition,
    labelSelector: selectorString(cs.spec.selector),
    previous: cs.status,
    progressDeadlineSeconds: cs.spec.progressDeadlineSeconds,
    paused: pausedOrHeld(round),
    onDelete: strategy.type === 'OnDelete',
    resize: round.resizes.tracking.status,
    conditions: round.conditions,
    now,
    kind: kindOf(cs),
  });
  // Reconciling and Stalled (kstatus) read the status Kruise's conditions lead to; the reconciler
  // decides them again once the round's failures are folded in.
  const status = withReadiness(withKindStatus(round, counted), readinessFacts(cs.spec, undefined, round.limits), now);
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
    limits: round.limits,
    resizeDurations: round.resizes.durations,
    instanceIdsInUse: round.instanceIdsInUse ?? NONE,
  };
  if (wakeAt !== undefined) plan.wakeAt = wakeAt;
  return plan;
}

/** Sets a condition and, when it newly appears or its message changes, plans its event. */
function setTransition(round: Round, type: string, reason: string, wanted: ConditionWrites[string]): void {
  round.conditions[type] = wanted;
  if (!wanted) return;
  const old = round.cs.status?.conditions?.find((c) => c.type === type);
  if (old?.status !== wanted.status || old.message !== wanted.message) {
    round.events.push({ on: 'workload', type: 'Warning', reason, message: wanted.message });
  }
}
