// The order in which a rolling update takes the pods waiting for it: updateStrategy.priorityStrategy
// (weight or order priorities) and updateStrategy.scatterStrategy, applied in OpenKruise's order
// on top of the default ActivePods order (docs/decisions/0017-update-order.md).
// Owns: the priority comparison, the scatter interleaving, and the labels they read.
// Must not: choose how many pods move or what they cost the disruption budget: it only permutes
// the candidates, keeping where the pods already out of service stand, and a kind's rollout arithmetic caps them
// exactly as it does without an order.
import type { Labels, Pod } from '../../api/wire.js';
import type { CloneSetUpdateStrategy, UpdatePriorityStrategy, UpdateScatterTerm } from '../../api/types.js';
import { disruptionCost } from './budget.js';
import type { PodSummary } from './pod-state.js';
import { matchesSelector } from './selector.js';

/** What reorders the update's candidates; `labelsOf` answers for every active pod by name. */
export interface UpdateOrder {
  readonly priorityStrategy?: UpdatePriorityStrategy;
  readonly scatterStrategy?: readonly UpdateScatterTerm[];
  readonly labelsOf: (podName: string) => Labels;
}

const NO_LABELS: Labels = {};

/** The update order of a CloneSet's strategy, or undefined when it sets none (the default order stands). */
export function updateOrderOf(
  strategy: Pick<CloneSetUpdateStrategy, 'priorityStrategy' | 'scatterStrategy'>,
  pods: readonly Pod[],
): UpdateOrder | undefined {
  const { priorityStrategy, scatterStrategy } = strategy;
  if (!hasPriorities(priorityStrategy) && (scatterStrategy?.length ?? 0) === 0) return undefined;
  const labelsByName = new Map(pods.map((p) => [p.metadata?.name ?? '', p.metadata?.labels ?? NO_LABELS]));
  return {
    ...(priorityStrategy ? { priorityStrategy } : {}),
    ...(scatterStrategy ? { scatterStrategy } : {}),
    labelsOf: (name) => labelsByName.get(name) ?? NO_LABELS,
  };
}

const hasPriorities = (strategy: UpdatePriorityStrategy | undefined): strategy is UpdatePriorityStrategy =>
  (strategy?.weightPriority?.length ?? 0) > 0 || (strategy?.orderPriority?.length ?? 0) > 0;

/** The sum of the weights of the terms whose selector matches. */
export function weightOf(strategy: UpdatePriorityStrategy, labels: Labels): number {
  let weight = 0;
  for (const term of strategy.weightPriority ?? [])
    if (matchesSelector(labels, term.matchSelector)) weight += term.weight;
  return weight;
}

/**
 * The first orderedKey the pod carries (its position in the list: its level) and the integer that
 * ends the label's value (`sts-10` reads 10; no trailing digits read 0). A pod with none of the
 * keys has level -1, so it comes before every pod that has one.
 */
export function orderOf(strategy: UpdatePriorityStrategy, labels: Labels): { level: number; order: number } {
  const terms = strategy.orderPriority ?? [];
  for (const [level, term] of terms.entries()) {
    const value = labels[term.orderedKey];
    if (value !== undefined) return { level, order: trailingInteger(value) };
  }
  return { level: -1, order: 0 };
}

/** The run of digits that ends `value`, as a number; 0 when there is none or it overflows an int64. */
export function trailingInteger(value: string): number {
  const digits = /\d+$/.exec(value)?.[0];
  if (digits === undefined) return 0;
  const parsed = BigInt(digits);
  return parsed > 9223372036854775807n ? 0 : Number(parsed);
}

/**
 * Negative when the pod labelled `a` goes first, positive when `b` does, 0 when the priorities
 * tie (the earlier order then stands). Higher weight first; with order priorities a lower level
 * first, then a higher trailing integer.
 */
export function comparePriority(strategy: UpdatePriorityStrategy, a: Labels, b: Labels): number {
  if ((strategy.weightPriority?.length ?? 0) > 0) return weightOf(strategy, b) - weightOf(strategy, a);
  if ((strategy.orderPriority?.length ?? 0) > 0) {
    const oa = orderOf(strategy, a);
    const ob = orderOf(strategy, b);
    if (oa.level !== ob.level) return oa.level - ob.level;
    return Math.sign(ob.order - oa.order);
  }
  return 0;
}

/** `candidates` stably sorted by priority. */
export function sortByPriority<T>(
  candidates: readonly T[],
  strategy: UpdatePriorityStrategy,
  labelsOf: (item: T) => Labels,
): T[] {
  return [...candidates].sort((a, b) => comparePriority(strategy, labelsOf(a), labelsOf(b)));
}

const matches = (labels: Labels, term: UpdateScatterTerm): boolean => (labels[term.key] ?? '') === term.value;
const termId = (term: UpdateScatterTerm): string => `${term.key}:${term.value}`;

/**
 * The scatter terms in the order they are applied: the terms some candidate matches, the one
 * matched by more candidates first, ties in the order written. A single term is applied as is.
 */
export function scatterTerms<T>(
  terms: readonly UpdateScatterTerm[],
  candidates: readonly T[],
  labelsOf: (item: T) => Labels,
): UpdateScatterTerm[] {
  if (terms.length === 1) return [...terms];
  const counts = new Map<string, { term: UpdateScatterTerm; count: number }>();
  for (const term of terms) {
    for (const candidate of candidates) {
      if (labelsOf(candidate)[term.key] !== term.value) continue;
      const seen = counts.get(termId(term));
      if (seen) seen.count++;
      else counts.set(termId(term), { term: { key: term.key, value: term.value }, count: 1 });
    }
  }
  return [...counts.values()].sort((a, b) => b.count - a.count).map((entry) => entry.term);
}

interface ScatterGroups {
  groups: number;
  matchedPerGroup: number;
  unmatchedPerGroup: number;
  /** Unmatched candidates placed before the first group. */
  unmatchedLead: number;
}

/** Groups of one matched and one unmatched share each, as many as the smaller side has members. */
function evenGroups(matched: number, unmatched: number): ScatterGroups {
  const groups = Math.min(matched, unmatched);
  return {
    groups,
    matchedPerGroup: Math.round(matched / groups),
    unmatchedPerGroup: Math.round(unmatched / groups),
    unmatchedLead: 0,
  };
}

/**
 * The group sizes follow the candidates' own mix, unless the CloneSet as a whole has fewer
 * unmatched pods per matched one than the candidates: then the whole CloneSet's sizes are used,
 * and the unmatched candidates those groups leave over go first.
 */
function scatterGroups(
  totalMatched: number,
  totalUnmatched: number,
  candidateMatched: number,
  candidateUnmatched: number,
): ScatterGroups {
  const candidateGroups = evenGroups(candidateMatched, candidateUnmatched);
  // Compared in single precision, as Kruise compares them, so a tie is decided alike.
  if (Math.fround(totalUnmatched / totalMatched) >= Math.fround(candidateUnmatched / candidateMatched))
    return candidateGroups;
  const whole = evenGroups(totalMatched, totalUnmatched);
  const groups = Math.min(
    Math.trunc(candidateMatched / whole.matchedPerGroup),
    Math.trunc(candidateUnmatched / whole.unmatchedPerGroup),
  );
  return { ...whole, groups, unmatchedLead: candidateUnmatched - groups * whole.unmatchedPerGroup };
}

/**
 * Spreads the candidates matching `term` through the order: all but the last of them are
 * interleaved in groups with the others, and the last matched candidate goes to the very end.
 * Left alone when either side has fewer than two candidates. `all` is every active pod.
 */
export function scatterByTerm<T>(
  term: UpdateScatterTerm,
  all: readonly T[],
  candidates: readonly T[],
  labelsOf: (item: T) => Labels,
): T[] {
  const matched = candidates.filter((c) => matches(labelsOf(c), term));
  const unmatched = candidates.filter((c) => !matches(labelsOf(c), term));
  if (matched.length <= 1 || unmatched.length <= 1) return [...candidates];
  const totalMatched = all.filter((p) => matches(labelsOf(p), term)).length;
  const totalUnmatched = all.length - totalMatched;

  const last = matched.pop()!;
  const plan = scatterGroups(totalMatched - 1, totalUnmatched, matched.length, unmatched.length);
  const ordered: T[] = [];
  const take = (from: readonly T[], at: number, count: number): number => {
    const end = Math.min(at + Math.max(count, 0), from.length);
    for (let i = at; i < end; i++) ordered.push(from[i]!);
    return end;
  };
  let u = take(unmatched, 0, plan.unmatchedLead);
  let m = 0;
  for (let group = 0; group < plan.groups; group++) {
    m = take(matched, m, plan.matchedPerGroup);
    u = take(unmatched, u, plan.unmatchedPerGroup);
  }
  take(matched, m, matched.length);
  take(unmatched, u, unmatched.length);
  ordered.push(last);
  return ordered;
}

/** Applies every scatter term, the most matched first (scatterTerms). */
export function scatter<T>(
  terms: readonly UpdateScatterTerm[],
  all: readonly T[],
  candidates: readonly T[],
  labelsOf: (item: T) => Labels,
): T[] {
  if (terms.length === 0 || candidates.length <= 1) return [...candidates];
  let ordered = [...candidates];
  for (const term of scatterTerms(terms, ordered, labelsOf)) ordered = scatterByTerm(term, all, ordered, labelsOf);
  return ordered;
}

/**
 * The update order. `candidates` arrive in the default order (ActivePods: the pods serving least
 * first); priorities sort them stably and scatter spreads them, as Kruise does. The result then
 * keeps the default order's pattern of free and costly places: a pod already out of service
 * (disruptionCost 0) still goes where the default order put one, so an order changes which
 * serving pods the budget is spent on, never how many pods move or what they cost
 * (docs/decisions/0017-update-order.md). `all` is every active pod, candidates included.
 */
export function orderForUpdate(
  candidates: readonly PodSummary[],
  all: readonly PodSummary[],
  order: UpdateOrder | undefined,
): PodSummary[] {
  if (order === undefined) return [...candidates];
  const labelsOf = (pod: PodSummary): Labels => order.labelsOf(pod.name);
  let ordered = hasPriorities(order.priorityStrategy)
    ? sortByPriority(candidates, order.priorityStrategy, labelsOf)
    : [...candidates];
  if (order.scatterStrategy && order.scatterStrategy.length > 0)
    ordered = scatter(order.scatterStrategy, all, ordered, labelsOf);
  const free = ordered.filter((p) => disruptionCost(p) === 0);
  const costly = ordered.filter((p) => disruptionCost(p) !== 0);
  let nextFree = 0;
  let nextCostly = 0;
  return candidates.map((p) => (disruptionCost(p) === 0 ? free[nextFree++]! : costly[nextCostly++]!));
}
