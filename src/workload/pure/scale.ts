// CloneSet scale decisions: how many pods to create (and at which revision) and which pods to
// delete this round, and which pods waiting in PreparingDelete a scale-up takes back. Modelled on
// OpenKruise's CloneSet Scale (pkg/controller/cloneset/sync/cloneset_scale.go), lifecycle hooks
// included: a pod the preDelete hook holds is "deleted" by moving it to PreparingDelete (the
// planner does that, lifecycle.ts), and is deleted once released. Pure: no I/O and no batching;
// the caller creates in slow-start batches, deletes, and records expectations. It must not also
// plan an update in a round where this plan is not empty (see update.ts).

import {
  activePods,
  countsAsReadyToDelete,
  isPreparingDelete,
  isSpecifiedDelete,
  rankForDeletion,
  type PodSummary,
} from './pod-state.js';
import { nodeShares, take } from './budget.js';
import { calculateDiffs, countsAsUpdatedWhenScaling, limitsOf, type RolloutInput } from './update.js';

/** What scaling needs beyond the rollout arithmetic's input. */
export interface ScaleInput extends RolloutInput {
  /** Some lifecycle hook has markPodNotReady: a PreparingDelete pod is never taken back. */
  readonly lifecycleMarksNotReady?: boolean;
}

export interface ScalePlan {
  /** Pods to create now (all missing pods, unless scaleStrategy.maxUnavailable holds some back). */
  readonly create: number;
  /** Of `create`, how many at the current revision (so the partition keeps its old pods). */
  readonly createAtCurrentRevision: number;
  /** All missing pods, including the ones held back; `create < missing` deserves an event. */
  readonly missing: number;
  /** Pods to delete now (or move to PreparingDelete, when their preDelete hook holds them), first victim first. */
  readonly delete: string[];
  /** PreparingDelete pods a scale-up takes back: they return to PreparingNormal. */
  readonly cancelDelete: string[];
}

function deleting(names: string[]): ScalePlan {
  return { create: 0, createAtCurrentRevision: 0, missing: 0, delete: names, cancelDelete: [] };
}

/** Deleting the pod would change something now: it is not already PreparingDelete and held there. */
const deletionActs = (pod: PodSummary): boolean => !(isPreparingDelete(pod) && pod.preDeleteHooked === true);

/**
 * Takes pods (best victims first) while the ready-pod budget lasts and the pod's node has a share
 * of it left (budget.ts nodeShares: one node is not emptied while the others keep theirs): pods
 * that are not ready cost nothing, each ready pod costs one.
 */
function withinReadyBudget(victims: readonly PodSummary[], readyBudget: number, shares: Map<string, number>): string[] {
  const left = { total: readyBudget, byNode: shares };
  const readyCost = (pod: PodSummary): number => (countsAsReadyToDelete(pod) ? 1 : 0);
  return victims.filter((pod) => take(left, pod, readyCost)).map((pod) => pod.name);
}

/**
 * Scale-down victims: current-revision pods first, as many as the partition (plus the surge
 * share of the current revision) no longer needs; then update-revision pods. So surge pods left
 * over after an update are removed from the old revision and the updated count is kept. An old
 * pod that can be updated in place is not taken first: it ranks with the updated pods, where the
 * surge pods of an in-place rollout go before it (pod-state.ts), and a pod in the middle of an
 * in-place update goes last (decision 72).
 */
function chooseVictims(
  pods: readonly PodSummary[],
  updateRevision: string,
  total: number,
  atCurrentRevision: number,
): PodSummary[] {
  const isUpdated = countsAsUpdatedWhenScaling(updateRevision);
  const replaced = (p: PodSummary): boolean => !isUpdated(p) && p.updatesInPlace !== true;
  const notUpdated = rankForDeletion(pods.filter(replaced));
  // A pod out of service only for its in-place update is back soon: the last to go.
  const ranked = rankForDeletion(pods.filter((p) => !replaced(p)));
  const rest = [
    ...ranked.filter((p) => p.inPlaceUpdating !== true),
    ...ranked.filter((p) => p.inPlaceUpdating === true),
  ];
  const fromOld = Math.min(total, atCurrentRevision, notUpdated.length);
  return [...notUpdated.slice(0, fromOld), ...rest.slice(0, total - fromOld)];
}

/**
 * PreparingDelete pods that replicas wants back (not specified for deletion), while pods are
 * missing; none when a hook marks pods not ready (their readiness would not come back).
 */
function takenBack(
  input: ScaleInput,
  pods: readonly PodSummary[],
  preDeleting: readonly PodSummary[],
  plannedDeletes: number,
): string[] {
  if (input.lifecycleMarksNotReady === true) return [];
  let missing = input.replicas - pods.length + plannedDeletes;
  const names: string[] = [];
  for (const pod of preDeleting) {
    if (missing <= 0) break;
    if (isSpecifiedDelete(pod, input.podsToDelete)) continue;
    names.push(pod.name);
    missing--;
  }
  return names;
}

/**
 * One round of scaling, in Kruise's order: take PreparingDelete pods back while replicas wants
 * them; else create what is missing (and nothing else); else delete the PreparingDelete pods
 * their hook has released; else delete pods specified for deletion (unready ones freely, ready
 * ones within the delete budget); else, unless pods are still specified or PreparingDelete,
 * delete surplus pods.
 */
export function planScale(input: ScaleInput): ScalePlan {
  const pods = activePods(input.pods);
  const preDeleting = pods.filter(isPreparingDelete);
  const specified = pods.filter((p) => isSpecifiedDelete(p, input.podsToDelete) && !isPreparingDelete(p));
  const cancelDelete = takenBack(input, pods, preDeleting, preDeleting.length + specified.length);
  if (cancelDelete.length > 0) return { ...deleting([]), cancelDelete };

  const diffs = calculateDiffs(input, 'scale');
  if (diffs.scaleUp > 0) {
    return {
      create: diffs.scaleUpLimit,
      createAtCurrentRevision: Math.min(diffs.scaleUpAtCurrentRevision, diffs.scaleUpLimit),
      missing: diffs.scaleUp,
      delete: [],
      cancelDelete: [],
    };
  }

  const released = preDeleting.filter(deletionActs);
  if (released.length > 0) return deleting(released.map((p) => p.name));

  const { maxUnavailable } = limitsOf(input);
  const shares = nodeShares({ replicas: input.replicas, maxUnavailable, pods });
  if (specified.length > 0) {
    const toDelete = withinReadyBudget(rankForDeletion(specified), diffs.deleteReadyLimit, shares);
    // Surplus pods wait until every specified pod is gone.
    return deleting(toDelete);
  }
  if (preDeleting.length > 0) return deleting([]);

  if (diffs.scaleDown > 0) {
    const victims = chooseVictims(pods, input.updateRevision, diffs.scaleDown, diffs.scaleDownAtCurrentRevision);
    return deleting(withinReadyBudget(victims, diffs.deleteReadyLimit, shares));
  }

  return deleting([]);
}
