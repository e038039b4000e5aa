// The one disruption budget of a workload, whatever its kind (docs/architecture.md §5 Trust boundaries): how many more pods may be taken out
// of service this round. Every path that disrupts a pod — scale-down and podsToDelete, ReCreate
// updates, the InPlaceIfPossible fallback, in-place restarts, RestartContainer resizes and resize
// outcomes that recreate — draws from the same number, computed here as a Deployment computes it:
//
//   budget = available pods − (replicas − maxUnavailable)
//
// so pods already out of service (not ready, not yet available for minReadySeconds, mid in-place
// update, replacements that cannot be scheduled) and pods missing altogether (deleted, not yet
// replaced) use it up; surge pods above replicas add to it. Taking an available pod costs one;
// an unavailable pod costs nothing (it serves nobody). Across nodes the budget is shared out:
// each node may have out of service at once only its share of maxUnavailable, in proportion to the
// pods it holds (nodeShares), so an update spreads over the nodes instead of emptying one.
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

/**
 * Available pods beyond replicas: the capacity surge pods add. A recreate whose replacement the
 * surge creates first takes only this much (never less than replicas serve meanwhile).
 */
export const surgeRoom = (input: BudgetInput): number => disruptionBudget({ ...input, maxUnavailable: 0 });

/**
 * Whether the budget can ever admit a pod's recreate, read from the spec alone (the limits
 * resolved against replicas): some pod may go out of service, or surge may create its
 * replacement first. Not from the pods: a budget used up now frees itself as pods come back.
 */
export const recreateEverAdmitted = (limits: { maxUnavailable: number; maxSurge: number }): boolean =>
  limits.maxUnavailable > 0 || limits.maxSurge > 0;

/**
 * How many more available pods each node may lose now: its share of maxUnavailable,
 * ⌈maxUnavailable × pods on the node ÷ pods on all nodes⌉ (at least 1), minus its pods out of
 * service already. A node whose pods all went out of service (lost, drained) takes nothing from
 * the others' shares. With the pods on one node (or none) there is nothing to share out: no entry,
 * the budget alone decides. Unscheduled pods belong to no node and are not counted. Decision 61.
 */
export function nodeShares(input: BudgetInput): Map<string, number> {
  const byNode = new Map<string, { pods: number; unavailable: number }>();
  for (const pod of activePods(input.pods)) {
    if (pod.nodeName === '') continue;
    const node = byNode.get(pod.nodeName) ?? { pods: 0, unavailable: 0 };
    node.pods += 1;
    if (!countsAsAvailable(pod)) node.unavailable += 1;
    byNode.set(pod.nodeName, node);
  }
  const shares = new Map<string, number>();
  if (byNode.size < 2) return shares;
  const scheduled = [...byNode.values()].reduce((sum, node) => sum + node.pods, 0);
  for (const [name, node] of byNode) {
    const share = Math.max(1, Math.ceil((input.maxUnavailable * node.pods) / scheduled));
    shares.set(name, Math.max(0, share - node.unavailable));
  }
  return shares;
}

/** What taking `pod` out of service costs: one if it serves now, nothing otherwise. */
export const disruptionCost = (pod: PodSummary): number => (countsAsAvailable(pod) ? 1 : 0);

/** What is left of the budget this round: in all, and per node (a node without an entry has no share of its own). */
export interface BudgetLeft {
  total: number;
  readonly byNode: Map<string, number>;
}

/** The whole budget and every node's share of it (disruptionBudget and nodeShares). */
export function budgetFor(input: BudgetInput): BudgetLeft {
  return { total: disruptionBudget(input), byNode: nodeShares(input) };
}

/**
 * Takes `pod` out of `left` when both the budget and its node's share still cover its cost
 * (disruptionCost, unless the path counts otherwise), and says whether it did. A pod that costs
 * nothing (not serving) is always taken.
 */
export function take(left: BudgetLeft, pod: PodSummary, costOf: (pod: PodSummary) => number = disruptionCost): boolean {
  const cost = costOf(pod);
  if (cost === 0) return true;
  const nodeLeft = left.byNode.get(pod.nodeName) ?? Infinity;
  if (cost > left.total || cost > nodeLeft) return false;
  left.total -= cost;
  if (left.byNode.has(pod.nodeName)) left.byNode.set(pod.nodeName, nodeLeft - cost);
  return true;
}

/**
 * Admits candidates in the order given while the budget and their node's share last (take); a
 * candidate that costs nothing is always admitted. Every path that takes pods out of service
 * admits them here or through take: the update, scale-down and specified deletes, resize
 * outcomes. `left` is what remains afterwards. `cap` narrows what this call may spend of it (a
 * path that may use only part of the budget, such as surgeRoom), never widens it.
 */
export function allocate<T>(
  left: BudgetLeft,
  candidates: readonly T[],
  summaryOf: (candidate: T) => PodSummary,
  cap = Infinity,
): { admitted: T[]; held: T[] } {
  const admitted: T[] = [];
  const held: T[] = [];
  let room = cap;
  for (const candidate of candidates) {
    const pod = summaryOf(candidate);
    const cost = disruptionCost(pod);
    const fits = cost <= room && take(left, pod);
    if (fits) room -= cost;
    (fits ? admitted : held).push(candidate);
  }
  return { admitted, held };
}
