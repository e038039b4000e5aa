// Pods as the CloneSet controller sees them: the summary the rollout arithmetic reads, and the
// pod a CloneSet creates for a revision (labels, owner reference, the in-place readiness gate).
// Pure: the clock comes in as an argument. Must not: call the API.
import type * as k8s from '@kubernetes/client-node';
import {
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_INSTANCE_ID,
  LABEL_LIFECYCLE_STATE,
  LABEL_SPECIFIED_DELETE,
  LifecycleStates,
  isTailorOwnedAnnotation,
  isTailorOwnedLabel,
  type CloneSetLifecycle,
} from '../api/types.js';
import { withDefaults, type DefaultedCloneSet } from '../api/defaults.js';
import { perObject } from '../api/memo.js';
import { podCondition } from '../api/pod.js';
import type { Pod, Wire, WireCloneSet } from '../api/wire.js';
import { readUpdateState } from '../inplace/plan.js';
import { heldByReadinessGate, withReadinessGate } from '../inplace/readiness-gate.js';
import { isHooked, lifecycleStateOf } from './lifecycle.js';
import { countsAsReady, parseDeletionCost, type PodPhase, type PodSummary } from './pod-state.js';

export type DefaultedWireCloneSet = Wire<DefaultedCloneSet>;

/** Defaults applied to a CloneSet as read from the API (defaulting touches only spec fields, none of them dates). */
export const defaulted = (cs: WireCloneSet): DefaultedWireCloneSet => withDefaults(cs);

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

/** The alphabet of instance ids: lowercase consonants and digits, so no id spells a word. */
const INSTANCE_ID_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** Kruise's length: 27^5 ≈ 14.3 million ids; at 100,000 pods a random draw is taken 0.7% of the time. */
const INSTANCE_ID_LENGTH = 5;

/**
 * `count` Kruise-style instance ids (also the pod name suffix), distinct from each other and from
 * `inUse`: a random id that is taken is drawn again, so ids never collide however many pods
 * exist (drawn blindly, 100,000 ids held ~380 duplicates). `random(n)` gives n random bytes.
 */
export function newInstanceIds(count: number, inUse: ReadonlySet<string>, random: (n: number) => Uint8Array): string[] {
  const taken = new Set(inUse);
  const ids: string[] = [];
  while (ids.length < count) {
    const id = Array.from(
      random(INSTANCE_ID_LENGTH),
      (b) => INSTANCE_ID_ALPHABET[b % INSTANCE_ID_ALPHABET.length],
    ).join('');
    if (taken.has(id)) continue;
    taken.add(id);
    ids.push(id);
  }
  return ids;
}

/**
 * The template's labels and annotations without Tailor's own: the CRD refuses them in a template,
 * but a CloneSet stored before a rule may still hold them, and a pod must not be born with a forged
 * resize request, update state or lifecycle state.
 */
const withoutKeys = (
  map: Record<string, string> | undefined,
  owned: (key: string) => boolean,
): Record<string, string> => Object.fromEntries(Object.entries(map ?? {}).filter(([key]) => !owned(key)));

export function newPod(
  cloneSet: WireCloneSet,
  revisionName: string,
  template: Wire<k8s.V1PodTemplateSpec>,
  instanceId: string,
): Pod {
  const name = `${cloneSet.metadata?.name}-${instanceId}`;
  const spec = withReadinessGate(structuredClone<NonNullable<Pod['spec']>>(template.spec ?? { containers: [] }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: cloneSet.metadata?.namespace,
      labels: {
        ...withoutKeys(template.metadata?.labels, isTailorOwnedLabel),
        [LABEL_CONTROLLER_REVISION_HASH]: revisionName,
        [LABEL_INSTANCE_ID]: instanceId,
        // Every new pod starts here, as in Kruise; the controller moves it to Normal (lifecycle.ts).
        [LABEL_LIFECYCLE_STATE]: LifecycleStates.PreparingNormal,
      },
      annotations: withoutKeys(template.metadata?.annotations, isTailorOwnedAnnotation),
      ownerReferences: [controllerRef(cloneSet)],
    },
    spec,
  };
}

export function controllerRef(cloneSet: WireCloneSet): Wire<k8s.V1OwnerReference> {
  return {
    apiVersion: cloneSet.apiVersion ?? 'apps.tailor.dev/v1alpha1',
    kind: cloneSet.kind ?? 'CloneSet',
    name: cloneSet.metadata?.name ?? '',
    uid: cloneSet.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
