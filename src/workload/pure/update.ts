// CloneSet rollout arithmetic: how far the pods are from the spec (calculateDiffs, shared with
// scale.ts) and which pods the rolling update touches next (planUpdate).
// Modelled on OpenKruise's calculateDiffsWithExpectation, SortUpdateIndexes and
// limitUpdateIndexes (pkg/controller/cloneset/sync). Pure: no I/O, no clock, no client calls.
// Reconcile order, as in Kruise: plan the scale first; when it creates or deletes anything, do
// that and leave the update for the next round (one kind of change per reconcile).

import {
  activePods,
  compareActivePods,
  countsAsAvailable,
  isPreparingDelete,
  isSpecifiedDelete,
  NONE,
  type PodSummary,
} from './pod-state.js';
import { budgetFor, disruptionBudget, disruptionCost, take, type BudgetLeft } from './budget.js';
import { orderForUpdate, type UpdateOrder } from './update-order.js';
import { resolveRolloutLimits, type LimitSpec, type RolloutLimits } from './limits.js';

/** The spec fields the arithmetic reads (names as in the CloneSet spec); the limits' own are limits.ts's. */
export interface RolloutSpec extends LimitSpec {
  /** scaleStrategy.excludePreparingDelete: PreparingDelete pods do not count toward replicas when scaling. */
  readonly excludePreparingDelete?: boolean;
  /** scaleStrategy.podsToDelete (merged with each summary's specifiedDelete flag). */
  readonly podsToDelete?: ReadonlySet<string>;
  /**
   * Let a raised partition move updated pods back to the current revision. Kruise gates this
   * (CloneSetPartitionRollback, off by default); so is it here: false unless set.
   */
  readonly partitionRollback?: boolean;
  /** updateStrategy.priorityStrategy and scatterStrategy: reorder the candidates, never add any. */
  readonly updateOrder?: UpdateOrder;
}

export interface RolloutInput extends RolloutSpec {
  /**
   * The spec's limits, resolved once per round by the planner (resolveRolloutLimits) so that every
   * part of the round reads the same numbers; resolved here from the spec when absent.
   */
  readonly limits?: RolloutLimits;
  readonly currentRevision: string;
  readonly updateRevision: string;
  /** All pods the CloneSet owns; terminating and finished ones are ignored. */
  readonly pods: readonly PodSummary[];
}

/** The round's limits: those the planner resolved, else the spec's. */
export const limitsOf = (input: RolloutInput): RolloutLimits => input.limits ?? resolveRolloutLimits(input);

/** How far the pods are from the spec. All counts are ≥ 0 except `update` and `updateMaxUnavailable`. */
export interface RolloutDiffs {
  /** Pods to create (includes surge). */
  readonly scaleUp: number;
  /** Of those, how many should be on the current revision to keep the partition (may exceed scaleUp). */
  readonly scaleUpAtCurrentRevision: number;
  /** How many of scaleUp may be created now (scaleStrategy.maxUnavailable minus unavailable pods). */
  readonly scaleUpLimit: number;
  /** Pods to remove beyond those already specified for deletion. */
  readonly scaleDown: number;
  /** Of those, how many should be current-revision pods (may exceed scaleDown). */
  readonly scaleDownAtCurrentRevision: number;
  /** How many ready pods may be deleted now; set only when something is to be deleted. */
  readonly deleteReadyLimit: number;
  /** Pods temporarily allowed above replicas. */
  readonly surge: number;
  /** The part of surge that is current-revision pods. */
  readonly surgeAtCurrentRevision: number;
  /** > 0: pods to move to the update revision; < 0: pods to move back to the current revision. */
  readonly update: number;
  /** Unavailable pods the update may reach; set only when update ≠ 0 (can be negative). */
  readonly updateMaxUnavailable: number;
}

export const NO_DIFFS: RolloutDiffs = {
  scaleUp: 0,
  scaleUpAtCurrentRevision: 0,
  scaleUpLimit: 0,
  scaleDown: 0,
  scaleDownAtCurrentRevision: 0,
  deleteReadyLimit: 0,
  surge: 0,
  surgeAtCurrentRevision: 0,
  update: 0,
  updateMaxUnavailable: 0,
};

interface RevisionCounts {
  total: number;
  /** Pods waiting in PreparingDelete (lifecycle.ts): unavailable, and not counted below. */
  preDeleting: number;
  toDelete: number;
  unavailable: number;
}

function countRevision(pods: readonly PodSummary[], podsToDelete: ReadonlySet<string>): RevisionCounts {
  const counts: RevisionCounts = { total: pods.length, preDeleting: 0, toDelete: 0, unavailable: 0 };
  for (const pod of pods) {
    // A pod on its way out is counted as such, not as unavailable.
    if (isPreparingDelete(pod)) counts.preDeleting++;
    else if (isSpecifiedDelete(pod, podsToDelete)) counts.toDelete++;
    else if (!countsAsAvailable(pod)) counts.unavailable++;
  }
  return counts;
}

interface SurgeUse {
  readonly total: number;
  readonly atCurrentRevision: number;
}

/** The update's pods that keep their identity: to move in place, or in the middle of it. */
export interface InPlaceMoves {
  /** Old pods that stay and whose move is in place (PodSummary.updatesInPlace): none of them is a recreate. */
  readonly keptOld: number;
  /** Of those, how many the update revision has room for: the moves in place. */
  readonly inPlace: number;
  /** Pods on the update revision whose in-place update has them out of service still. */
  readonly inFlight: number;
}

/**
 * Counts the in-place moves among `pods`. Old pods are moved in place into the room the update
 * revision has: replicas − partition, less its pods that are not surge. Pods above replicas on
 * the update revision count as surge (at most maxSurge of them): they leave at the end, so an old
 * pod updated in place is kept before them. The rest of the old pods leave by the scale-down, as
 * when replicas drops mid-rollout.
 */
function inPlaceMoves(
  input: RolloutInput,
  pods: readonly PodSummary[],
  isUpdated: (p: PodSummary) => boolean,
  limits: Pick<RolloutLimits, 'partition' | 'maxSurge'>,
): InPlaceMoves {
  const podsToDelete = input.podsToDelete ?? NONE;
  const staying = pods.filter((p) => !isPreparingDelete(p) && !isSpecifiedDelete(p, podsToDelete));
  const updated = staying.filter(isUpdated);
  const surgeOnNew = Math.min(Math.max(staying.length - input.replicas, 0), updated.length, limits.maxSurge);
  const room = Math.max(input.replicas - limits.partition - (updated.length - surgeOnNew), 0);
  const keptOld = staying.filter((p) => !isUpdated(p) && p.updatesInPlace === true).length;
  return {
    keptOld,
    inPlace: Math.min(keptOld, room),
    inFlight: updated.filter((p) => p.inPlaceUpdating === true).length,
  };
}

/**
 * The update's surge need when pods move forward (decision 72). A pod that is updated in place is
 * never replaced by a surge pod: only the moves that recreate take Kruise's surge (while both
 * sides have pods to move). Moves in place take surge only for capacity, when the budget lets no
 * pod out of service without it (maxUnavailable 0), and keep it until the last of them is back
 * in service, so the surge pods are what leaves at the end.
 */
function forwardUpdateSurge(maxUnavailable: number, oldDiff: number, newDiff: number, moves: InPlaceMoves): number {
  const inPlace = Math.min(moves.inPlace, oldDiff);
  const recreates = Math.min(Math.max(oldDiff - moves.keptOld, 0), Math.max(-newDiff, 0));
  return recreates + (maxUnavailable === 0 ? inPlace + moves.inFlight : 0);
}

/** What the surge decision reads: the limits, the unavailable and marked pods, the update's gaps. */
interface SurgeFacts {
  readonly maxSurge: number;
  readonly maxUnavailable: number;
  readonly totalUnavailable: number;
  readonly toDeleteNew: number;
  readonly toDeleteOld: number;
  readonly updateOldDiff: number;
  readonly updateNewDiff: number;
  readonly moves: InPlaceMoves;
  /** Pods the resize strategy recreates (PodSummary.resizeRecreate); atCurrentRevision: those not updated. */
  readonly resizeRecreates: SurgeUse;
}

/** Pods the resize strategy recreates that stay until then (not already on their way out). */
function countResizeRecreates(
  pods: readonly PodSummary[],
  isUpdated: (p: PodSummary) => boolean,
  podsToDelete: ReadonlySet<string>,
): SurgeUse {
  const recreated = pods.filter(
    (p) => p.resizeRecreate === true && !isPreparingDelete(p) && !isSpecifiedDelete(p, podsToDelete),
  );
  return { total: recreated.length, atCurrentRevision: recreated.filter((p) => !isUpdated(p)).length };
}

/** Surge to replace specified-for-deletion pods that maxUnavailable would not let go. */
function scaleSurgeNeed(f: SurgeFacts): SurgeUse {
  const toDelete = f.toDeleteNew + f.toDeleteOld;
  if (toDelete <= 0) return { total: 0, atCurrentRevision: 0 };
  const total = Math.min(Math.max(f.totalUnavailable + toDelete - f.maxUnavailable, 0), toDelete);
  return { total, atCurrentRevision: Math.max(total - f.toDeleteNew, 0) };
}

/** Surge for the update: forward (forwardUpdateSurge), or back when a raised partition rolls pods back. */
function updateSurgeNeed(f: SurgeFacts): SurgeUse {
  if (f.updateOldDiff < 0 && f.updateNewDiff > 0) {
    // A raised partition moving pods back (partitionRollback): the surge is current-revision pods.
    const total = Math.min(-f.updateOldDiff, f.updateNewDiff);
    return { total, atCurrentRevision: total };
  }
  const total = forwardUpdateSurge(f.maxUnavailable, Math.max(f.updateOldDiff, 0), f.updateNewDiff, f.moves);
  return { total, atCurrentRevision: 0 };
}

/**
 * Surge is used for one purpose per round: replacing specified-for-deletion pods that
 * maxUnavailable would not let go, an update that has pods to move both ways (old ones to
 * retire while new ones are missing), or replacing the pods the resize strategy recreates: like
 * the moves that recreate, they take surge whenever there is some, so each replacement (on its
 * pod's side of the partition) runs before its pod goes (decision 79). The bigger need wins,
 * capped by maxSurge.
 */
function surgeToUse(f: SurgeFacts): SurgeUse {
  if (f.maxSurge <= 0) return { total: 0, atCurrentRevision: 0 };
  const needs = [scaleSurgeNeed(f), updateSurgeNeed(f), f.resizeRecreates];
  const need = needs.reduce((bigger, next) => (next.total > bigger.total ? next : bigger));
  const total = Math.min(f.maxSurge, need.total);
  return { total, atCurrentRevision: Math.min(total, need.atCurrentRevision) };
}

/**
 * The heart of the controller: compares the active pods, split by revision, with replicas,
 * partition, surge and unavailability budgets, and returns what scale and update should do.
 */
export function calculateDiffs(input: RolloutInput, purpose: 'scale' | 'update' = 'update'): RolloutDiffs {
  const { replicas, updateRevision, currentRevision } = input;
  const podsToDelete = input.podsToDelete ?? NONE;
  const { partition, maxSurge, maxUnavailable, scaleMaxUnavailable } = limitsOf(input);

  const pods = activePods(input.pods);
  const isUpdated =
    purpose === 'scale' ? countsAsUpdatedWhenScaling(updateRevision) : (p: PodSummary) => p.revision === updateRevision;
  const updated = countRevision(pods.filter(isUpdated), podsToDelete);
  const old = countRevision(
    pods.filter((p) => !isUpdated(p)),
    podsToDelete,
  );
  const totalUnavailable = updated.unavailable + old.unavailable + updated.preDeleting + old.preDeleting;

  let updateOldDiff = old.total - old.preDeleting - partition;
  let updateNewDiff = updated.total - updated.preDeleting - (replicas - partition);
  if (updateRevision === currentRevision || input.partitionRollback !== true) {
    // Pods only ever move forward to the update revision.
    updateOldDiff = Math.max(updateOldDiff, 0);
    updateNewDiff = Math.min(updateNewDiff, 0);
  }

  const moves = inPlaceMoves(input, pods, isUpdated, { partition, maxSurge });
  const surge = surgeToUse({
    maxSurge,
    maxUnavailable,
    totalUnavailable,
    toDeleteNew: updated.toDelete,
    toDeleteOld: old.toDelete,
    updateOldDiff,
    updateNewDiff,
    moves,
    resizeRecreates: countResizeRecreates(pods, isUpdated, podsToDelete),
  });
  const expectedTotal = replicas + surge.total;
  const expectedOld = partition + surge.atCurrentRevision;
  const toDelete = updated.toDelete + old.toDelete;
  const excluded = input.excludePreparingDelete === true;
  const currentTotal = pods.length - (excluded ? updated.preDeleting + old.preDeleting : 0);
  const currentOld = old.total - (excluded ? old.preDeleting : 0);

  let scaleUp = 0;
  let scaleUpAtCurrentRevision = 0;
  let scaleUpLimit = 0;
  if (expectedTotal > currentTotal) {
    scaleUp = expectedTotal - currentTotal;
    scaleUpAtCurrentRevision = Math.max(expectedOld - currentOld, 0);
    scaleUpLimit = Math.min(scaleUp, Math.max(scaleMaxUnavailable - totalUnavailable, 0));
  }

  let scaleDown = 0;
  let scaleDownAtCurrentRevision = 0;
  if (currentTotal - toDelete > expectedTotal) {
    scaleDown = currentTotal - toDelete - expectedTotal;
    scaleDownAtCurrentRevision = Math.max(currentOld - old.toDelete - expectedOld, 0);
  }
  const deleteReadyLimit = toDelete > 0 || scaleDown > 0 ? disruptionBudget({ replicas, maxUnavailable, pods }) : 0;

  // Move the smaller of the two gaps; the scale diffs close the rest, except that an old pod that
  // can be updated in place is always moved, never closed by a scale-down (decision 72).
  const smaller = Math.abs(updateOldDiff) <= Math.abs(updateNewDiff) ? updateOldDiff : -updateNewDiff;
  const update = updateOldDiff > 0 ? Math.max(smaller, Math.min(updateOldDiff, moves.inPlace)) : smaller;
  const updateMaxUnavailable = update !== 0 ? maxUnavailable + pods.length - replicas : 0;

  return {
    scaleUp,
    scaleUpAtCurrentRevision,
    scaleUpLimit,
    scaleDown,
    scaleDownAtCurrentRevision,
    deleteReadyLimit,
    surge: surge.total,
    surgeAtCurrentRevision: surge.atCurrentRevision,
    update: update === 0 ? 0 : update, // no -0
    updateMaxUnavailable,
  };
}

/**
 * When scaling, a pod in PreparingUpdate counts as updated already (Kruise's
 * PreparingUpdateAsUpdate, always on here): a replacement or a new pod is not created at the old
 * revision only because a hook holds an update back.
 */
export const countsAsUpdatedWhenScaling =
  (updateRevision: string) =>
  (pod: PodSummary): boolean =>
    pod.revision === updateRevision || pod.lifecycleState === 'PreparingUpdate';

export interface UpdatePlan {
  /** Pods to move to targetRevision this round, in the order to do it. */
  readonly toUpdate: string[];
  /** updateRevision, or currentRevision when the partition rolls pods back. */
  readonly targetRevision: string;
  /** replicas - partition: what status.expectedUpdatedReplicas reports. */
  readonly expectedUpdatedReplicas: number;
  /** The part of the disruption budget the chosen pods take (available pods among them). */
  readonly budgetUsed: number;
  /** What the chosen pods leave of the budget, in all and per node (for the resize outcomes after them). */
  readonly budgetLeft?: BudgetLeft;
}

/**
 * Pods waiting to move: those not on the target revision (for a rollback: those on the update
 * revision), minus pods still inside an in-place update grace period.
 */
function candidatesFor(pods: readonly PodSummary[], input: RolloutInput, forward: boolean): PodSummary[] {
  return pods.filter(
    (p) => (p.revision === input.updateRevision) !== forward && p.inPlaceGracePending !== true && !isPreparingDelete(p),
  );
}

/**
 * Caps the sorted candidates: at most |update| of them, stopping before unavailable pods on the
 * target revision would reach updateMaxUnavailable (a broken new revision stops the rollout), and
 * taking available pods only while the disruption budget (budget.ts) lasts and their node has a
 * share of it left (nodeShares: a node that used its share is passed over for the next candidate
 * on another node). Updating a pod that is already unavailable costs nothing.
 */
function limitCandidates(
  sorted: readonly PodSummary[],
  pods: readonly PodSummary[],
  diffs: RolloutDiffs,
  targetRevision: string,
  budget: BudgetLeft,
): { chosen: PodSummary[]; budgetUsed: number } {
  // Pods already in PreparingUpdate go first (a stable move): their hooks have been asked.
  const prepared = (p: PodSummary): boolean => p.lifecycleState === 'PreparingUpdate';
  const wanted = [...sorted.filter(prepared), ...sorted.filter((p) => !prepared(p))].slice(0, Math.abs(diffs.update));
  const targetUnavailable = pods.filter((p) => !countsAsAvailable(p) && p.revision === targetRevision).length;
  const chosen: PodSummary[] = [];
  const total = budget.total;
  for (const pod of wanted) {
    if (targetUnavailable + chosen.length >= diffs.updateMaxUnavailable) break;
    if (disruptionCost(pod) > budget.total) break;
    // A node that used its share is passed over for the next candidate on another node.
    if (take(budget, pod)) chosen.push(pod);
  }
  return { chosen, budgetUsed: total - budget.total };
}

/**
 * The rolling update's next step: which pods to move, and to which revision. Nothing moves
 * while paused. Candidates are taken in Kubernetes' ActivePods order (unscheduled, pending,
 * not-ready, recently-ready pods first: the pods serving least are disturbed first), which is
 * the default order Kruise's SortUpdateIndexes applies; its priority and scatter orders follow
 * (update-order.ts).
 */
export function planUpdate(input: RolloutInput): UpdatePlan {
  const expectedUpdatedReplicas = input.replicas - limitsOf(input).partition;
  const idle: UpdatePlan = {
    toUpdate: [],
    targetRevision: input.updateRevision,
    expectedUpdatedReplicas,
    budgetUsed: 0,
  };
  if (input.paused === true) return idle;

  const diffs = calculateDiffs(input);
  if (diffs.update === 0) return idle;

  const forward = diffs.update > 0;
  const targetRevision = forward ? input.updateRevision : input.currentRevision;
  const pods = activePods(input.pods);
  const sorted = orderForUpdate(candidatesFor(pods, input, forward).sort(compareActivePods), pods, input.updateOrder);
  const { maxUnavailable } = limitsOf(input);
  const budgetInput = { replicas: input.replicas, maxUnavailable, pods };
  const budget = budgetFor(budgetInput);
  const { chosen, budgetUsed } = limitCandidates(sorted, pods, diffs, targetRevision, budget);
  return {
    toUpdate: chosen.map((p) => p.name),
    targetRevision,
    expectedUpdatedReplicas,
    budgetUsed,
    budgetLeft: budget,
  };
}
