// The pod summary that every workload kind's rollout arithmetic reads, and the orderings over it.
// Owns: what "active", "ready", "available" and "specified for deletion" mean to scale/update
// decisions, Kubernetes' ActivePods order (update order) and the deletion-victim order.
// Must not: import @kubernetes/client-node or read clocks; a thin adapter elsewhere builds
// summaries from pods (and decides availability with its own clock and minReadySeconds).

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** What the arithmetic needs to know about one pod of a CloneSet. Times are epoch milliseconds. */
export interface PodSummary {
  readonly name: string;
  /** The pod's `controller-revision-hash` label. */
  readonly revision: string;
  /** `spec.nodeName`; empty while the pod is unscheduled. */
  readonly nodeName: string;
  readonly phase: PodPhase;
  /** The Ready condition is True. */
  readonly ready: boolean;
  /** Ready and has been for at least minReadySeconds. */
  readonly available: boolean;
  /** When the Ready condition last turned True; absent when unknown or not ready. */
  readonly readySince?: number;
  /** `metadata.deletionTimestamp` is set. */
  readonly terminating?: boolean;
  /** `controller.kubernetes.io/pod-deletion-cost` (see parseDeletionCost); 0 when absent. */
  readonly deletionCost?: number;
  /** The highest restartCount among the pod's containers. */
  readonly restarts?: number;
  /** `metadata.creationTimestamp`; 0 or absent when unknown. */
  readonly createdAt?: number;
  /** Named in `scaleStrategy.podsToDelete`, or marked for deletion (e.g. by a recreate update). */
  readonly specifiedDelete?: boolean;
  /**
   * An in-place update that takes the pod out of service is in flight (its
   * `apps.tailor.dev/InPlaceUpdateReady` condition is False). Such a pod is neither ready nor
   * available to the arithmetic, whatever its Ready condition says.
   */
  readonly inPlaceUpdating?: boolean;
  /**
   * Moving the pod to the update revision keeps it (in place, or held under InPlaceOnly) instead
   * of replacing it. Set by the planner for old pods while maxSurge is in use; absent: unknown,
   * and the surge arithmetic counts the move as a recreate, as Kruise does (workload/pure/update.ts).
   */
  readonly updatesInPlace?: boolean;
  /**
   * The resize strategy recreates the pod (its resize is Infeasible, or timed out, and the outcome
   * is Recreate): with surge usable, its replacement is created first (workload/pure/update.ts, decision 79).
   */
  readonly resizeRecreate?: boolean;
  /** The pod reached its revision by an in-place update: it kept its identity through one. */
  readonly updatedInPlace?: boolean;
  /** An in-place update is waiting out `inPlaceUpdateStrategy.gracePeriodSeconds`. */
  readonly inPlaceGracePending?: boolean;
  /** The `lifecycle.apps.tailor.dev/state` label (lifecycle.ts); absent on pods made before it. */
  readonly lifecycleState?: string;
  /** The CloneSet's preDelete hook holds the pod: deleting it means PreparingDelete first. */
  readonly preDeleteHooked?: boolean;
}

/**
 * Only a pod without a lifecycle state or in Normal may count as available: the other states
 * are pods on their way in, out, or through an update (Kruise's rule).
 */
export const lifecycleAllowsAvailable = (state: string | undefined): boolean => !state || state === 'Normal';

/** Waiting in PreparingDelete for its preDelete hook: out of the counts, not yet deleted. */
export const isPreparingDelete = (pod: PodSummary): boolean => pod.lifecycleState === 'PreparingDelete';

/** Pods that still count: not terminating, not finished (Succeeded/Failed). */
export function isActive(pod: PodSummary): boolean {
  return pod.terminating !== true && pod.phase !== 'Succeeded' && pod.phase !== 'Failed';
}

export function activePods(pods: readonly PodSummary[]): PodSummary[] {
  return pods.filter(isActive);
}

/** Ready as the delete limits see it: Running, Ready, and no disruptive in-place update in flight. */
export function countsAsReady(pod: PodSummary): boolean {
  return pod.phase === 'Running' && pod.ready && pod.inPlaceUpdating !== true;
}

/** Available as maxUnavailable sees it: counts as ready, ready for minReadySeconds, lifecycle Normal. */
export function countsAsAvailable(pod: PodSummary): boolean {
  return countsAsReady(pod) && pod.available && lifecycleAllowsAvailable(pod.lifecycleState);
}

/** Ready as the scale-down budget sees it: counts as ready and its lifecycle is Normal. */
export const countsAsReadyToDelete = (pod: PodSummary): boolean =>
  countsAsReady(pod) && lifecycleAllowsAvailable(pod.lifecycleState);

/** No pod names: the default of podsToDelete. */
export const NONE: ReadonlySet<string> = new Set();

export function isSpecifiedDelete(pod: PodSummary, podsToDelete: ReadonlySet<string> = NONE): boolean {
  return pod.specifiedDelete === true || podsToDelete.has(pod.name);
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * Reads a pod-deletion-cost annotation the way Kubernetes does: a base-10 int32 with no '+'
 * sign and no leading zeros; anything else (or absent) costs 0.
 */
export function parseDeletionCost(annotation: string | undefined): number {
  if (annotation === undefined || !/^(0|-?[1-9]\d*)$/.test(annotation)) {
    return 0;
  }
  const value = Number(annotation);
  return value < INT32_MIN || value > INT32_MAX ? 0 : value;
}

/** Negative when `a` sorts before `b`, positive after, 0 when the rule cannot tell them apart. */
type Comparator = (a: PodSummary, b: PodSummary) => number;

const PHASE_ORDINAL: Readonly<Record<PodPhase, number>> = {
  Pending: 0,
  Unknown: 1,
  Running: 2,
  // Finished pods are not active and never reach these orders; rank them with Pending.
  Succeeded: 0,
  Failed: 0,
};

const byBool =
  (first: (p: PodSummary) => boolean): Comparator =>
  (a, b) =>
    Number(first(b)) - Number(first(a));

const unscheduledFirst = byBool((p) => p.nodeName === '');
const earlierPhaseFirst: Comparator = (a, b) => PHASE_ORDINAL[a.phase] - PHASE_ORDINAL[b.phase];
// The orders read the Ready condition itself, as Kubernetes does (not countsAsReady).
const notReadyFirst = byBool((p) => !p.ready);
const notAvailableFirst = byBool((p) => !countsAsAvailable(p));
const lowerCostFirst: Comparator = (a, b) => (a.deletionCost ?? 0) - (b.deletionCost ?? 0);
/**
 * Not a Kubernetes rule: when either pod was updated in place, its ready time tells when the
 * update ended, not how established the pod is; the newer creation goes first, so the surge pods
 * of an in-place rollout are what leaves at its end (decision 72).
 */
const newerFirstAfterInPlace: Comparator = (a, b) =>
  a.updatedInPlace === true || b.updatedInPlace === true ? laterOrUnknownFirst(a.createdAt, b.createdAt) : 0;
const moreRestartsFirst: Comparator = (a, b) => (b.restarts ?? 0) - (a.restarts ?? 0);

/** Later time first; an unknown time (0/absent) counts as the latest of all. */
function laterOrUnknownFirst(a: number | undefined, b: number | undefined): number {
  const ta = a ?? 0;
  const tb = b ?? 0;
  if (ta === tb) return 0;
  if (ta === 0) return -1;
  if (tb === 0) return 1;
  return tb - ta;
}

/** Only decides between two ready pods: the one ready for the shorter time comes first. */
const readyShorterFirst: Comparator = (a, b) =>
  a.ready && b.ready ? laterOrUnknownFirst(a.readySince, b.readySince) : 0;
const newerFirst: Comparator = (a, b) => laterOrUnknownFirst(a.createdAt, b.createdAt);
/** Not a Kubernetes rule: makes ties deterministic. */
const byName: Comparator = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function chain(...rules: Comparator[]): Comparator {
  return (a, b) => {
    for (const rule of rules) {
      const c = rule(a, b);
      if (c !== 0) return c;
    }
    return 0;
  };
}

/**
 * Kubernetes' ActivePods order (controller_utils.go), least established first: unscheduled
 * before scheduled; Pending before Unknown before Running; not ready before ready; among ready
 * pods the one ready for less time; more container restarts; newer creation. Kruise sorts pods
 * waiting for an update with exactly this order, so the least useful pods are updated first.
 */
export const compareActivePods: Comparator = chain(
  unscheduledFirst,
  earlierPhaseFirst,
  notReadyFirst,
  readyShorterFirst,
  moreRestartsFirst,
  newerFirst,
  byName,
);

/** The order Kruise's same-node ranker uses inside one node (ActivePods plus deletion cost). */
const withinNode: Comparator = chain(
  unscheduledFirst,
  earlierPhaseFirst,
  notReadyFirst,
  lowerCostFirst,
  readyShorterFirst,
  moreRestartsFirst,
  newerFirst,
  byName,
);

/**
 * Kruise's same-node rank: on a node holding k > 1 of these pods, the k-1 weakest (by
 * `withinNode`) get ranks k-1 … 1 and the strongest 0; pods alone on their node get 0. A higher
 * rank is deleted first, so doubled-up pods go before pods that are alone on their node.
 */
function sameNodeRanks(pods: readonly PodSummary[]): Map<string, number> {
  const byNode = new Map<string, PodSummary[]>();
  for (const pod of pods) {
    if (pod.nodeName === '') continue;
    const group = byNode.get(pod.nodeName) ?? [];
    group.push(pod);
    byNode.set(pod.nodeName, group);
  }
  const ranks = new Map<string, number>();
  for (const group of byNode.values()) {
    if (group.length <= 1) continue;
    const weakest = [...group].sort(withinNode).slice(0, -1);
    weakest.forEach((pod, i) => ranks.set(pod.name, weakest.length - i));
  }
  return ranks;
}

/**
 * Orders pods for scale-down, first victim first. Kruise's ActivePodsWithRanks (itself
 * Kubernetes' ActivePods with deletion cost and ranks): unscheduled; Pending < Unknown <
 * Running; not available < available and not ready < ready; lower pod-deletion-cost; then,
 * Tailor's own rule, newer creation when either pod was updated in place (newerFirstAfterInPlace);
 * doubled up on a node (same-node rank); ready for a shorter time; more restarts; newer creation.
 * Returns a new array; ties end in name order.
 */
export function rankForDeletion(pods: readonly PodSummary[]): PodSummary[] {
  const ranks = sameNodeRanks(pods);
  const higherRankFirst: Comparator = (a, b) => (ranks.get(b.name) ?? 0) - (ranks.get(a.name) ?? 0);
  return [...pods].sort(
    chain(
      unscheduledFirst,
      earlierPhaseFirst,
      notAvailableFirst,
      notReadyFirst,
      lowerCostFirst,
      newerFirstAfterInPlace,
      higherRankFirst,
      readyShorterFirst,
      moreRestartsFirst,
      newerFirst,
      byName,
    ),
  );
}
