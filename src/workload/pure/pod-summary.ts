// A pod as every workload kind's rollout arithmetic reads it (docs/architecture.md §2.1): the
// summary built from the pod once per version (ready, available after minReadySeconds, mid
// in-place update, lifecycle state, deletion cost), and why a pod cannot come into service.
// Pure: the clock comes in as an argument. Must not: know which kind owns the pod, or call the API.
import { LABEL_CONTROLLER_REVISION_HASH, LABEL_SPECIFIED_DELETE, type CloneSetLifecycle } from '../../api/types.js';
import { perObject } from '../../api/memo.js';
import { podCondition } from '../../api/pod.js';
import type { Pod } from '../../api/wire.js';
import { readUpdateState } from '../../inplace/pure/plan.js';
import { heldByReadinessGate } from '../../inplace/pure/readiness-gate.js';
import { isHooked, lifecycleStateOf } from './lifecycle.js';
import { countsAsReady, parseDeletionCost, type PodPhase, type PodSummary } from './pod-state.js';

/** Container waiting reasons that mean the container will not start without someone's help. */
const CANNOT_START_REASONS = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'ErrImageNeverPull',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

/**
 * Why the pod will not come into service without a change, as a user should read it: no node fits
 * it, or one of its containers will not start (crash loop, image pull, bad config). Undefined
 * while nothing says so. The planner's RolloutBlocked and `kubectl tailor status` both use it.
 */
export function whyPodCannotStart(pod: Pod): string | undefined {
  const scheduled = podCondition(pod, 'PodScheduled');
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') {
    return `Unschedulable${scheduled.message ? `: ${scheduled.message}` : ''}`;
  }
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const waiting = s.state?.waiting;
    if (waiting?.reason && CANNOT_START_REASONS.has(waiting.reason)) {
      return `container ${s.name}: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`;
    }
  }
  return undefined;
}

export function isPodReady(pod: Pod): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

export function summarizePod(
  pod: Pod,
  options: { minReadySeconds: number; now: number; podsToDelete?: ReadonlySet<string>; lifecycle?: CloneSetLifecycle },
): PodSummary {
  const facts = podFacts(pod);
  const available =
    facts.ready &&
    (options.minReadySeconds <= 0 ||
      (facts.readySince !== undefined && options.now - facts.readySince >= options.minReadySeconds * 1000));
  const specifiedDelete = facts.specifiedDelete || (options.podsToDelete?.has(facts.name) ?? false);
  const preDeleteHooked = isHooked(options.lifecycle?.preDelete, pod);
  // The usual round (no minReadySeconds wait, no podsToDelete, no preDelete hook) reads the pod's own facts as they are.
  if (available === facts.available && specifiedDelete === facts.specifiedDelete && !preDeleteHooked) return facts;
  return { ...facts, available, specifiedDelete, ...(preDeleteHooked ? { preDeleteHooked } : {}) };
}

/** What a summary says from the pod alone, once per pod version: available as soon as Ready, deletion asked by label only. */
const podFacts = perObject((pod: Pod): PodSummary => {
  const lifecycleState = lifecycleStateOf(pod);
  const ready = isPodReady(pod);
  const readySince = readySinceOf(pod);
  const meta = pod.metadata ?? {};
  return Object.freeze({
    name: meta.name ?? '',
    revision: meta.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '',
    nodeName: pod.spec?.nodeName ?? '',
    phase: (pod.status?.phase as PodPhase | undefined) ?? 'Pending',
    ready,
    available: ready,
    ...(readySince !== undefined ? { readySince } : {}),
    terminating: !!meta.deletionTimestamp,
    deletionCost: parseDeletionCost(meta.annotations?.['controller.kubernetes.io/pod-deletion-cost']),
    restarts: Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0)),
    createdAt: meta.creationTimestamp ? Date.parse(meta.creationTimestamp) : 0,
    specifiedDelete: meta.labels?.[LABEL_SPECIFIED_DELETE] !== undefined,
    inPlaceUpdating: heldByReadinessGate(pod),
    updatedInPlace: updatedInPlace(pod),
    ...(lifecycleState ? { lifecycleState } : {}),
  });
});

/** The pod's revision label names the revision its last in-place update moved it to. */
function updatedInPlace(pod: Pod): boolean {
  const revision = pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH];
  return revision !== undefined && readUpdateState(pod)?.revision === revision;
}

/**
 * Ready as status.readyReplicas counts it: Running, Ready, and no disruptive in-place update in
 * flight. The one definition the controller and `kubectl tailor status` share.
 */
export const podCountsAsReady = (pod: Pod): boolean => countsAsReady(summarizePod(pod, { minReadySeconds: 0, now: 0 }));

/** When the Ready condition last turned True, for a ready pod. */
function readySinceOf(pod: Pod): number | undefined {
  const since = isPodReady(pod) ? podCondition(pod, 'Ready')?.lastTransitionTime : undefined;
  return since ? Date.parse(since) : undefined;
}

/** When a not-yet-available ready pod becomes available; for requeueing after minReadySeconds. */
export function availableAt(pod: Pod, minReadySeconds: number): number | undefined {
  const since = podCondition(pod, 'Ready')?.lastTransitionTime;
  if (!isPodReady(pod) || !since || minReadySeconds <= 0) return undefined;
  return Date.parse(since) + minReadySeconds * 1000;
}
