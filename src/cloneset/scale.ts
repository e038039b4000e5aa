// CloneSet scale decisions: how many pods to create (and at which revision) and which pods to
// delete this round. Modelled on OpenKruise's CloneSet Scale (pkg/controller/cloneset/sync/
// cloneset_scale.go). Pure: no I/O and no batching; the caller creates in slow-start batches,
// deletes, and records expectations. It must not also plan an update in a round where this plan
// is not empty (see update.ts).

import { activePods, countsAsReady, isSpecifiedDelete, rankForDeletion, type PodSummary } from './pod-state.js';
import { calculateDiffs, type RolloutInput } from './update.js';

export interface ScalePlan {
  /** Pods to create now (all missing pods, unless scaleStrategy.maxUnavailable holds some back). */
  readonly create: number;
  /** Of `create`, how many at the current revision (so the partition keeps its old pods). */
  readonly createAtCurrentRevision: number;
  /** All missing pods, including the ones held back; `create < missing` deserves an event. */
  readonly missing: number;
  /** Pods to delete now, first victim first. */
  readonly delete: string[];
}

function deleting(names: string[]): ScalePlan {
  return { create: 0, createAtCurrentRevision: 0, missing: 0, delete: names };
}

/**
 * Takes pods (best victims first) while the ready-pod budget lasts: pods that are not ready
 * cost nothing, each ready pod costs one.
 */
function withinReadyBudget(victims: readonly PodSummary[], readyBudget: number): string[] {
  let budget = readyBudget;
  const chosen: string[] = [];
  for (const pod of victims) {
    if (!countsAsReady(pod)) {
      chosen.push(pod.name);
    } else if (budget > 0) {
      chosen.push(pod.name);
      budget--;
    }
  }
  return chosen;
}

/**
 * Scale-down victims: current-revision pods first, as many as the partition (plus the surge
 * share of the current revision) no longer needs; then update-revision pods. So surge pods left
 * over after an update are removed from the old revision and the updated count is kept.
 */
function chooseVictims(pods: readonly PodSummary[], updateRevision: string, total: number, atCurrentRevision: number): PodSummary[] {
  const notUpdated = rankForDeletion(pods.filter((p) => p.revision !== updateRevision));
  const updated = rankForDeletion(pods.filter((p) => p.revision === updateRevision));
  const fromOld = Math.min(total, atCurrentRevision);
  return [...notUpdated.slice(0, fromOld), ...updated.slice(0, total - fromOld)];
}

/**
 * One round of scaling, in Kruise's order: create what is missing (and nothing else); else
 * delete pods specified for deletion (unready ones freely, ready ones within the delete budget);
 * else, unless specified pods are still waiting, delete surplus pods.
 */
export function planScale(input: RolloutInput): ScalePlan {
  const diffs = calculateDiffs(input);

  if (diffs.scaleUp > 0) {
    return {
      create: diffs.scaleUpLimit,
      createAtCurrentRevision: Math.min(diffs.scaleUpAtCurrentRevision, diffs.scaleUpLimit),
      missing: diffs.scaleUp,
      delete: [],
    };
  }

  const pods = activePods(input.pods);
  const specified = pods.filter((p) => isSpecifiedDelete(p, input.podsToDelete));
  if (specified.length > 0) {
    const toDelete = withinReadyBudget(rankForDeletion(specified), diffs.deleteReadyLimit);
    // Surplus pods wait until every specified pod is gone.
    return deleting(toDelete);
  }

  if (diffs.scaleDown > 0) {
    const victims = chooseVictims(pods, input.updateRevision, diffs.scaleDown, diffs.scaleDownAtCurrentRevision);
    return deleting(withinReadyBudget(victims, diffs.deleteReadyLimit));
  }

  return deleting([]);
}
