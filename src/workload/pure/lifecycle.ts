// The pod lifecycle of a workload with hooks (spec.lifecycle: preNormal, preDelete, inPlaceUpdate),
// as OpenKruise's CloneSet and Advanced StatefulSet run it: the state label `lifecycle.apps.tailor.dev/state` a pod moves
// through, when a hook holds it (any of the hook's labels or finalizers still on the pod) and when
// it is released (an outside controller removed them), and what deleting or updating a held pod
// means. Owns: the state machine, the hook tests, and the writes of a move (lifecycleWrites: the
// executor only sends them). Pure; must not perform I/O, read clocks or count
// pods (the CloneSet's scale.ts and update.ts count them by the state read here).
import { lifecycleGateReason } from '../../api/reasons.js';
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  LABEL_LIFECYCLE_STATE,
  LABEL_SCALING_EXCLUDE_PREPARING_DELETE,
  LifecycleStates,
  type CloneSetLifecycle,
  type LifecycleHook,
  type LifecycleState,
} from '../../api/types.js';
import type { Pod } from '../../api/wire.js';
import type { PodPatch } from '../../inplace/pure/batch-writes.js';
import { readinessGateWrite, type GateWrite } from '../../inplace/pure/readiness-gate.js';

/** The pod's state label as written, '' when absent (a pod created before hooks existed). */
export const lifecycleStateOf = (pod: Pod): string => pod.metadata?.labels?.[LABEL_LIFECYCLE_STATE] ?? '';

/** The hook holds the pod: at least one of its finalizers or labels (with that value) is on it. */
export function isHooked(hook: LifecycleHook | undefined, pod: Pod): boolean {
  if (!hook) return false;
  const finalizers = pod.metadata?.finalizers ?? [];
  const labels = pod.metadata?.labels ?? {};
  return (
    (hook.finalizersHandler ?? []).some((f) => finalizers.includes(f)) ||
    Object.entries(hook.labelsHandler ?? {}).some(([key, value]) => labels[key] === value)
  );
}

/** Every finalizer and label of the hook is on the pod (false when there is no hook). */
export function isAllHooked(hook: LifecycleHook | undefined, pod: Pod): boolean {
  if (!hook) return false;
  const finalizers = pod.metadata?.finalizers ?? [];
  const labels = pod.metadata?.labels ?? {};
  return (
    (hook.finalizersHandler ?? []).every((f) => finalizers.includes(f)) &&
    Object.entries(hook.labelsHandler ?? {}).every(([key, value]) => labels[key] === value)
  );
}

/**
 * Some hook takes pods out of endpoints while it holds them. Then a pod once in PreparingDelete
 * is never taken back into service by a scale-up (the readiness it lost would not come back).
 */
/** Whether PreparingDelete pods are left out of replicas when scaling: the field, or Kruise's CloneSet label in Tailor's domain. */
export const excludesPreparingDelete = (cs: {
  readonly metadata?: { readonly labels?: Readonly<Record<string, string>> };
  readonly spec: { readonly scaleStrategy?: { readonly excludePreparingDelete?: boolean } };
}): boolean =>
  cs.spec.scaleStrategy?.excludePreparingDelete === true ||
  cs.metadata?.labels?.[LABEL_SCALING_EXCLUDE_PREPARING_DELETE] === 'true';

export const marksPodNotReady = (lifecycle: CloneSetLifecycle | undefined): boolean =>
  !!lifecycle?.preDelete?.markPodNotReady || !!lifecycle?.inPlaceUpdate?.markPodNotReady;

export interface RefreshFacts {
  /** The CloneSet's update revision. */
  readonly updateRevision: string;
  /** The pod's `controller-revision-hash`. */
  readonly revision: string;
  /** Scheduled to a node. */
  readonly scheduled: boolean;
  /** Its in-place update (if any) has finished: every changed container runs again. */
  readonly inPlaceUpdateDone: boolean;
}

/**
 * The state a pod moves to without anyone deleting or updating it, or undefined to stay:
 * PreparingNormal → Normal once scheduled (with no preNormal hook) or once every preNormal label
 * and finalizer is on it; PreparingUpdate of a pod already at the update revision (the update was
 * rolled back) and Updating once the in-place update is done → Updated while the inPlaceUpdate
 * hook is not all on the pod again, else Normal; Updated → Normal once it is.
 */
export function refreshedLifecycleState(
  lifecycle: CloneSetLifecycle | undefined,
  pod: Pod,
  facts: RefreshFacts,
): LifecycleState | undefined {
  const afterUpdate = (): LifecycleState =>
    lifecycle && !isAllHooked(lifecycle.inPlaceUpdate, pod) ? LifecycleStates.Updated : LifecycleStates.Normal;
  switch (lifecycleStateOf(pod)) {
    case LifecycleStates.PreparingNormal: {
      const ready = lifecycle?.preNormal ? isAllHooked(lifecycle.preNormal, pod) : facts.scheduled;
      return ready ? LifecycleStates.Normal : undefined;
    }
    case LifecycleStates.PreparingUpdate:
      return facts.revision === facts.updateRevision ? afterUpdate() : undefined;
    case LifecycleStates.Updating:
      return facts.inPlaceUpdateDone ? afterUpdate() : undefined;
    case LifecycleStates.Updated:
      return !lifecycle?.inPlaceUpdate || isAllHooked(lifecycle.inPlaceUpdate, pod)
        ? LifecycleStates.Normal
        : undefined;
    default:
      return undefined;
  }
}

/**
 * What deleting the pod means now: `delete` it; `prepare` it (label it PreparingDelete and let
 * the preDelete hook's owner act); or `wait`, already PreparingDelete and still held.
 */
export type DeletionStep = 'delete' | 'prepare' | 'wait';

export function deletionStep(lifecycle: CloneSetLifecycle | undefined, pod: Pod): DeletionStep {
  if (!isHooked(lifecycle?.preDelete, pod)) return 'delete';
  return lifecycleStateOf(pod) === LifecycleStates.PreparingDelete ? 'wait' : 'prepare';
}

/**
 * Whether the pod's in-place update may start: `proceed` (the state becomes Updating with it);
 * `prepare` (label it PreparingUpdate first, adding the hook's labels and finalizers back when it
 * comes from Updated); `hold` while the inPlaceUpdate hook holds a PreparingUpdate pod, and for a
 * PreparingDelete pod, which is never updated.
 */
export type InPlaceGate = { kind: 'proceed' } | { kind: 'prepare'; restoreHook: boolean } | { kind: 'hold' };

export function inPlaceUpdateGate(lifecycle: CloneSetLifecycle | undefined, pod: Pod): InPlaceGate {
  const hook = lifecycle?.inPlaceUpdate;
  switch (lifecycleStateOf(pod)) {
    case '':
    case LifecycleStates.PreparingNormal:
    case LifecycleStates.Normal:
      return isHooked(hook, pod) ? { kind: 'prepare', restoreHook: false } : { kind: 'proceed' };
    case LifecycleStates.Updated:
      return hook ? { kind: 'prepare', restoreHook: true } : { kind: 'proceed' };
    case LifecycleStates.PreparingUpdate:
      return isHooked(hook, pod) ? { kind: 'hold' } : { kind: 'proceed' };
    case LifecycleStates.Updating:
      return { kind: 'proceed' };
    default:
      return { kind: 'hold' };
  }
}

/**
 * markPodNotReady of the hook that put the pod in `state`: PreparingDelete → preDelete's,
 * PreparingUpdate and the states after it → inPlaceUpdate's.
 */
export function heldNotReady(lifecycle: CloneSetLifecycle | undefined, state: string): boolean {
  if (state === LifecycleStates.PreparingDelete) return !!lifecycle?.preDelete?.markPodNotReady;
  if (state === LifecycleStates.PreparingUpdate) return !!lifecycle?.inPlaceUpdate?.markPodNotReady;
  return false;
}

/** How a lifecycle move treats the hook: put its labels and finalizers back, take the pod out of endpoints. */
export interface MoveOptions {
  restoreHook?: LifecycleHook;
  markNotReady?: boolean;
}

/** The writes of a lifecycle move, in the order the executor sends them. */
export interface LifecycleWrites {
  /** InPlaceUpdateReady False, to the pod's status first, when the hook marks the pod not ready. */
  notReady?: GateWrite;
  /** The strategic merge patch of the state label, its timestamp and the hook's labels and finalizers put back. */
  patch: PodPatch;
}

/**
 * The writes that move `pod` to `state` at `at` (RFC 3339): when the hook marks the pod not
 * ready, InPlaceUpdateReady False first, so endpoints drop it (Kruise's order: a pod is never in
 * a held state while still serving); then one strategic merge patch of the state label, its
 * timestamp and any hook labels and finalizers put back (finalizers merge into the list, none is
 * removed).
 */
export function lifecycleWrites(pod: Pod, state: LifecycleState, at: string, options: MoveOptions): LifecycleWrites {
  const patch = lifecyclePatch(pod, state, at, options.restoreHook);
  return options.markNotReady ? { notReady: notReadyWrite(state, at), patch } : { patch };
}

/** InPlaceUpdateReady False with the reason of the hook holding the pod in `state`. */
export const notReadyWrite = (state: string, at: string): GateWrite =>
  readinessGateWrite('False', at, { reason: lifecycleGateReason(state) });

/** The pod patch of a lifecycle move: finalizers merge into the pod's list, none is removed. */
function lifecyclePatch(pod: Pod, state: LifecycleState, at: string, restoreHook: LifecycleHook | undefined): PodPatch {
  const finalizers = restoreHook?.finalizersHandler ?? [];
  return {
    metadata: {
      uid: pod.metadata?.uid,
      labels: { ...restoreHook?.labelsHandler, [LABEL_LIFECYCLE_STATE]: state },
      annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: at },
      ...(finalizers.length > 0 ? { finalizers } : {}),
    },
  };
}
