// The vocabulary between a workload kind's planner (pure) and its executor (I/O): what one
// reconcile round means to do to pods, the events it asks for and the conditions it sets, as plain
// values a test can read. Owns the shapes only; a kind's round plan carries them
// (workload/pure/round-plan.ts). Must not: import anything that performs I/O.
import type { ConditionStatus, LifecycleHook, LifecycleState } from '../../api/types.js';
import type { DeleteReason, EventType } from '../../api/reasons.js';
import type { Pod, PodTemplate } from '../../api/wire.js';
import type { LifecycleWrites } from './lifecycle.js';
import type { InPlaceStep, Settlement } from '../../inplace/pure/plan.js';
import type { GateWrite } from '../../inplace/pure/readiness-gate.js';

/** Why a pod is deleted (the catalogue in src/api/reasons.ts). */

export type Intent =
  /** Create one pod from `revision`'s template; named by `instanceId` when the kind gives identities. */
  | { kind: 'create'; revision: string; template: PodTemplate; instanceId?: string }
  /** Delete a pod (precondition: its UID). */
  | { kind: 'delete'; pod: Pod; reason: DeleteReason; message: string }
  /** Remove our owner reference from a pod that no longer matches the selector. */
  | { kind: 'release'; pod: Pod }
  /** Make the workload the controller of an orphan its selector matches (adoption.ts). */
  | { kind: 'adopt'; pod: Pod }
  /** Take a pod out of service before an in-place change restarts its containers. */
  | { kind: 'drain'; pod: Pod; message: string }
  /** Apply an in-place change (image, labels/annotations, resize) to a pod. */
  | { kind: 'patch'; pod: Pod; step: Extract<InPlaceStep, { kind: 'patch' }> }
  /** Finish (or withdraw) a pod's in-place update: InPlaceUpdateReady back to True. */
  | { kind: 'settle'; pod: Pod; settlement: Exclude<Settlement, 'pending' | 'none'> }
  /**
   * Move a pod to a lifecycle state (workload/pure/lifecycle.ts) stamped `at` (RFC 3339), putting the
   * hook's labels and finalizers back when `restoreHook` is given, and taking the pod out of
   * endpoints (InPlaceUpdateReady False) when `markNotReady`: the writes lifecycleWrites spells out.
   */
  | ({
      kind: 'lifecycle';
      pod: Pod;
      state: LifecycleState;
      at: string;
      restoreHook?: LifecycleHook;
      markNotReady?: boolean;
    } & LifecycleWrites)
  /**
   * Put InPlaceUpdateReady back to False (`notReady`) on a pod a markPodNotReady hook holds in
   * `state`, when it is not False (an earlier write failed, or someone set it): re-asserted every
   * round, as Kruise does.
   */
  | { kind: 'holdNotReady'; pod: Pod; state: LifecycleState; at: string; notReady: GateWrite }
  /** Set InPlaceUpdateReady True on a pod created with the readiness gate. */
  | { kind: 'markGateReady'; pod: Pod }
  /** Resize through the kubelet what was asked of the agent, then drop the agent annotations. */
  | { kind: 'reroute'; pod: Pod; resize?: Record<string, unknown> };

/**
 * An Event the plan asks for: on the workload itself (the CloneSet, say), or on one of its pods.
 * A workload event with `batchPod` is routine news about that pod: it is batched with the same
 * news about other pods (EventRecorder.batch), `message` saying what happened without naming the pod.
 */
export interface PlannedEvent {
  on: 'workload' | Pod;
  type: EventType;
  reason: string;
  message: string;
  batchPod?: string;
}

export interface ConditionWrite {
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** Condition type → what to set (null: remove). Types not named are left as they are. */
export type ConditionWrites = Record<string, ConditionWrite | null>;
