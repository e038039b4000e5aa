// The RolloutBlocked diagnosis (docs/architecture.md §4.2): a rollout that cannot move because
// maxUnavailable pods are out of service and stuck there says so, naming the pods and why each is
// stuck, and says when to look again while pods are still on their way into service.
// Pure. Must not: plan intents, draw from the disruption budget, or perform I/O.
import { ConditionReasons } from '../../api/reasons.js';
import { isLivePod, podCondition } from '../../api/pod.js';
import type { Pod } from '../../api/wire.js';
import { restartOverdue } from '../../inplace/pure/plan.js';
import type { ConditionWrites } from './intents.js';
import { movesNoPod, nameOf } from './plan-input.js';
import { countsAsAvailable, type PodSummary } from './pod-state.js';
import type { DefaultedWireCloneSet } from './pods.js';
import { whyPodCannotStart } from './pod-summary.js';
import type { UpdatePlan } from './update.js';

/** What the diagnosis reads of the round being planned. */
export interface BlockedRound {
  readonly input: { readonly now: number };
  readonly cs: DefaultedWireCloneSet;
  readonly replicas: number;
  readonly limits: { readonly maxUnavailable: number };
  /** The CloneSet's pods, released ones left out. */
  readonly pods: readonly Pod[];
  readonly summaryOf: (pod: Pod) => PodSummary;
  readonly update: UpdatePlan;
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
  const since = Date.parse(
    (ready?.status === 'False' ? ready.lastTransitionTime : undefined) ?? pod.metadata?.creationTimestamp ?? '',
  );
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
export function rolloutBlocked(round: BlockedRound): { condition: ConditionWrites[string]; wakeAt?: number } {
  const { update, replicas } = round;
  const { maxUnavailable } = round.limits;
  // Neither terminating nor ended: an ended pod is out of the rollout for good, and replaced.
  const live = round.pods.filter(isLivePod);
  const onTarget = (p: Pod): boolean => round.summaryOf(p).revision === update.targetRevision;
  const pending = live.filter((p) => !onTarget(p)).length;
  const wanted = update.expectedUpdatedReplicas - live.filter(onTarget).length;
  if (movesNoPod(round.cs.spec.updateStrategy) || update.toUpdate.length > 0 || pending === 0 || wanted <= 0)
    return { condition: null };
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
  const names = [
    ...described,
    ...(more > 0 ? [`${more} more`] : []),
    ...(missing > 0 ? [`${missing} pod(s) not yet created`] : []),
  ];
  return {
    condition: {
      status: 'True',
      reason: ConditionReasons.MaxUnavailable,
      message: `${out.length + missing} pod(s) out of service (maxUnavailable ${maxUnavailable}), stuck: ${names.join(', ')}; the rollout waits for them`,
    },
  };
}
