// The one disruption budget of a CloneSet (docs/architecture.md §5 Trust boundaries): how many more pods may be taken out
// of service this round. Every path that disrupts a pod — scale-down and podsToDelete, ReCreate
// updates, the InPlaceIfPossible fallback, in-place restarts, RestartContainer resizes and resize
// outcomes that recreate — draws from the same number, computed here as a Deployment computes it:
//
//   budget = available pods − (replicas − maxUnavailable)
//
// so pods already out of service (not ready, not yet available for minReadySeconds, mid in-place
// update, replacements that cannot be scheduled) and pods missing altogether (deleted, not yet
// replaced) use it up; surge pods above replicas add to it. Taking an available pod costs one;
// an unavailable pod costs nothing (it serves nobody).
// Pure. Must not: choose which pods to disrupt (the planner orders the candidates) or do I/O.
import { activePods, countsAsAvailable, type PodSummary } from './pod-state.js';

export interface BudgetInput {
  readonly replicas: number;
  /** updateStrategy.maxUnavailable resolved against replicas (resolveRolloutLimits). */
  readonly maxUnavailable: number;
  readonly pods: readonly PodSummary[];
}

/** Available pods beyond the floor replicas − maxUnavailable; never negative. */
export function disruptionBudget(input: BudgetInput): number {
  const available = activePods(input.pods).filter(countsAsAvailable).length;
  return Math.max(0, available - (input.replicas - input.maxUnavailable));
}

/** What taking `pod` out of service costs: one if it serves now, nothing otherwise. */
export const disruptionCost = (pod: PodSummary): number => (countsAsAvailable(pod) ? 1 : 0);

/**
 * Admits candidates in the order given while the budget lasts; a candidate that costs nothing is
 * always admitted. Returns the admitted and the held candidates and what is left.
 */
export function allocate<T>(
  remaining: number,
  candidates: readonly T[],
  summaryOf: (candidate: T) => PodSummary,
): { admitted: T[]; held: T[]; remaining: number } {
  const admitted: T[] = [];
  const held: T[] = [];
  let left = remaining;
  for (const candidate of candidates) {
    const cost = disruptionCost(summaryOf(candidate));
    if (cost > left) {
      held.push(candidate);
      continue;
    }
    left -= cost;
    admitted.push(candidate);
  }
  return { admitted, held, remaining: left };
}
