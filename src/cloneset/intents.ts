// The vocabulary between the planner (planner.ts, pure) and the executor (executor.ts, I/O): what
// one reconcile round means to do, as plain values a test can read. Owns the shapes only.
// Must not: import anything that performs I/O.
import type { CloneSetStatus, ConditionStatus, LifecycleHook, LifecycleState } from '../api/types.js';
import type { DeleteReason, EventType } from '../api/reasons.js';
import type { Pod, PodTemplate } from '../api/wire.js';
import type { ClaimPlan } from './claims.js';
import type { LifecycleWrites } from './lifecycle.js';
import type { InPlaceStep, Settlement } from '../inplace/plan.js';
import type { GateWrite } from '../inplace/readiness-gate.js';

/** Why a pod is deleted (the catalogue in src/api/reasons.ts). */

export type Intent =
  /** Create one pod from `revision`'s template. */
  | { kind: 'create'; revision: string; template: PodTemplate }
  /** Delete a pod (precondition: its UID). */
  | { kind: 'delete'; pod: Pod; reason: DeleteReason; message: string }
  /** Remove our owner reference from a pod that no longer matches the selector. */
  | { kind: 'release'; pod: Pod }
  /** Take a pod out of service before an in-place change restarts its containers. */
  | { kind: 'drain'; pod: Pod; message: string }
  /** Apply an in-place change (image, labels/annotations, resize) to a pod. */
  | { kind: 'patch'; pod: Pod; step: Extract<InPlaceStep, { kind: 'patch' }> }
  /** Finish (or withdraw) a pod's in-place update: InPlaceUpdateReady back to True. */
  | { kind: 'settle'; pod: Pod; settlement: Exclude<Settlement, 'pending' | 'none'> }
  /**
   * Move a pod to a lifecycle state (cloneset/lifecycle.ts) stamped `at` (RFC 3339), putting the
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
 * An Event the plan asks for: on the CloneSet itself, or on one of its pods. A CloneSet event
 * with `batchPod` is routine news about that pod: it is batched with the same news about other
 * pods (EventRecorder.batch), `message` saying what happened without naming the pod.
 */
export interface PlannedEvent {
  on: 'cloneset' | Pod;
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

export interface Plan {
  intents: Intent[];
  events: PlannedEvent[];
  /** The status this round leads to if every intent succeeds. */
  status: CloneSetStatus;
  /** When to look again although nothing changes (grace periods, timers, minReadySeconds). */
  wakeAt?: number;
  /** The disruption budget at the start of the round and what the intents take from it. */
  budget: { total: number; used: number };
  /** Seconds each resize that finished this round took, for the duration histogram. */
  resizeDurations: number[];
  /** Instance ids of every pod the CloneSet has (terminating ones too): a new pod takes none of them. */
  instanceIdsInUse: ReadonlySet<string>;
  /**
   * What happens to the CloneSet's claims this round (claims.ts): the ids new pods take back,
   * the claims deleted with each deleted pod or now. Absent without templates or claims. The
   * creates it holds back for a predecessor still terminating are already left out of `intents`.
   */
  claims?: ClaimPlan;
  /** Deferred revisions (PlanInput.revisions.deferred) of pods this round would move: fetched, then planned again. */
  templatesWanted?: string[];
}
