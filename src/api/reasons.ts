// The one catalogue of the reasons Tailor puts on Events, on CloneSet conditions (Kruise's
// Progressing reasons and messages included), on the pod conditions of an in-place update and in
// the node agent's `resize-status` answer; the condition types themselves are
// CloneSetConditionTypes in types.ts. Users' alerts and
// `kubectl get events --field-selector reason=…` depend on these spellings: add here, never inline
// a reason string elsewhere.
// Must not: import anything of ours or decide when a reason applies.

/** The two kinds of Kubernetes Event. */
export type EventType = 'Normal' | 'Warning';

/** Event reasons on CloneSets and their pods. */
export const EventReasons = {
  SuccessfulCreate: 'SuccessfulCreate',
  SuccessfulDelete: 'SuccessfulDelete',
  FailedCreate: 'FailedCreate',
  FailedDelete: 'FailedDelete',
  FailedUpdate: 'FailedUpdate',
  FailedRevision: 'FailedRevision',
  FailedStatusUpdate: 'FailedStatusUpdate',
  ScaleUpLimited: 'ScaleUpLimited',
  ReleasedPod: 'ReleasedPod',
  AdoptedPod: 'AdoptedPod',
  RecreateFallback: 'RecreateFallback',
  NotInPlaceUpdatable: 'NotInPlaceUpdatable',
  RolloutBlocked: 'RolloutBlocked',
  ResizeBlocked: 'ResizeBlocked',
  ResizeRecreate: 'ResizeRecreate',
  ResizeCompleted: 'ResizeCompleted',
  PodUnschedulable: 'PodUnschedulable',
  InPlaceUpdateCompleted: 'InPlaceUpdateCompleted',
  InPlaceUpdateCancelled: 'InPlaceUpdateCancelled',
  InvalidAnnotation: 'InvalidAnnotation',
  /** The stored spec cannot be planned (a value the CRD of today refuses, stored before it did). */
  InvalidSpec: 'InvalidSpec',
  /** A pod drained for a new image its node's agent failed to pull (decision 52). */
  ImagePrePullFailed: 'ImagePrePullFailed',
  /** A pod drained for a new image its node had not pulled within --image-prepull-timeout (decision 52). */
  ImagePrePullTimedOut: 'ImagePrePullTimedOut',
  /**
   * The node agent does not restart a container in place: its preStop hook is past what the agent
   * keeps of a pod's hooks, and it is never run in part or skipped (decision 74).
   */
  PreStopHookNotKept: 'PreStopHookNotKept',
  /** An update held because the canary driver cannot see its change (the UpdateHeld condition, decision 97). */
  UpdateHeld: 'UpdateHeld',
  /** A claim's storage request raised to its template's (volumeClaimUpdateStrategy InPlace, decision 98). */
  ClaimExpanding: 'ClaimExpanding',
} as const;

/** `Resize<State>` events, one per resize state a pod enters. */
export const resizeStateReason = (state: 'Proposed' | 'InProgress' | 'Deferred' | 'Infeasible'): string =>
  `Resize${state}`;

/** Condition reasons. */
export const ConditionReasons = {
  /** The API server refused a write; retried with backoff. */
  ApiRefused: 'ApiRefused',
  /** The API server refused a write that retrying cannot fix (invalid object, namespace terminating). */
  ApiRejected: 'ApiRejected',
  NotInPlaceUpdatable: 'NotInPlaceUpdatable',
  /** maxUnavailable pods are out of service; the rollout or a resize outcome waits. */
  MaxUnavailable: 'MaxUnavailable',
  Infeasible: 'Infeasible',
  Timeout: 'Timeout',
  /** The stored spec cannot be planned; fixed by editing the CloneSet. */
  InvalidSpec: 'InvalidSpec',
  /** Live pods run more revisions than a round holds templates for (RevisionsInUse, decision 81). */
  TooManyRevisions: 'TooManyRevisions',
  /** The template changed only in fields the canary driver's API types lack (UpdateHeld, decision 97). */
  ChangeInvisibleToDriver: 'ChangeInvisibleToDriver',
} as const;

/** Kruise's Progressing reasons and messages, word for word: its tooling and e2e compare them whole. */
export const ProgressingReasons = {
  Available: { status: 'True', reason: 'CloneSetAvailable', message: 'CloneSet is available' },
  Paused: { status: 'True', reason: 'CloneSetPaused', message: 'CloneSet is paused' },
  PartitionAvailable: {
    status: 'True',
    reason: 'ProgressPartitionAvailable',
    message: 'CloneSet has been paused due to partition ready',
  },
  Updated: { status: 'True', reason: 'CloneSetUpdated', message: 'CloneSet is progressing' },
  DeadlineExceeded: 'ProgressDeadlineExceeded',
} as const;

/**
 * Reasons of the kstatus conditions (workload/pure/readiness-conditions.ts, decision 22): Reconciling
 * True while work moves, False when done or held on purpose (or Stalled); Stalled False unless
 * something blocks for good, then its reason (the failure condition's type, ResizeInfeasible,
 * InfeasibleResizeNotAdmissible, or Kruise's ProgressDeadlineExceeded).
 */
export const ReconcilingReasons = {
  /** Pods are still to be moved to the update revision. */
  RolloutInProgress: 'RolloutInProgress',
  /** Pods are created or deleted (or wait for a preDelete hook) toward spec.replicas. */
  Scaling: 'Scaling',
  /** Every pod exists at the right revision, some are not yet available. */
  PodsUnavailable: 'PodsUnavailable',
  /** The spec's latest generation has not been acted on yet (observedGeneration behind). */
  SpecNotObserved: 'SpecNotObserved',
  /** Resizes are underway (Proposed, InProgress or Deferred), or Infeasible ones are to be recreated. */
  Resizing: 'Resizing',
  /** False: every desired pod runs the update revision and is available. */
  Complete: 'Complete',
  /** False: updateStrategy.paused holds pods back. */
  Paused: 'Paused',
  /** False: updateStrategy.partition holds pods back. */
  PartitionHeld: 'PartitionHeld',
  /** False: the UpdateHeld condition holds every pod back (decision 97). */
  UpdateHeld: 'UpdateHeld',
  /** False: updateStrategy.type OnDelete: pods move when someone deletes them. */
  OnDelete: 'OnDelete',
  /** False: the CloneSet is Stalled. */
  Stalled: 'Stalled',
} as const;

export const StalledReasons = {
  /** False: nothing blocks for good. */
  NotStalled: 'NotStalled',
  /** A resize is Infeasible and the strategy waits (InPlaceOnly, onInfeasible Wait). */
  ResizeInfeasible: 'ResizeInfeasible',
  /**
   * A resize is Infeasible and the strategy recreates it, but the budget can never admit the
   * recreate: maxUnavailable resolves to 0 and no surge is usable (decision 79).
   */
  InfeasibleResizeNotAdmissible: 'InfeasibleResizeNotAdmissible',
} as const;

/**
 * Reasons the agent answers with instead of resizing (state Infeasible). Each is a verdict, so a
 * request is always answered: the controller reads KubeletResizes as "this node's kubelet resizes
 * in place; remove the request and use pods/resize" (resize/backend.ts).
 */
export const AgentVerdicts = {
  /** The agent's evidence says the node's kubelet resizes in place; it never touches such a pod. */
  KubeletResizes: 'KubeletResizes',
  /** The request is not what the pod's CloneSet revision asks for. */
  NotInRevision: 'NotInRevision',
  /** The new resources would change the pod's QoS class (the kubelet and API server refuse that too). */
  QoSClassChange: 'QoSClassChange',
  /** A changed resource has resizePolicy RestartContainer, which the agent does not carry out live. */
  RestartContainerUnsupported: 'RestartContainerUnsupported',
  /** The new resources break a LimitRange of the namespace (the API server would refuse such a pod). */
  OutsideLimitRange: 'OutsideLimitRange',
  /** The request grows past the pod spec that a ResourceQuota of the namespace charged (decision 51). */
  GrowthNotChargedToQuota: 'GrowthNotChargedToQuota',
} as const;

/** Reasons the agent writes in resize-status besides its verdicts: what stopped an admitted resize. */
export const AgentReasons = {
  InvalidRequest: 'InvalidRequest',
  MemoryLimitBelowUsage: 'MemoryLimitBelowUsage',
  ContainerNotRunning: 'ContainerNotRunning',
  NotActuated: 'NotActuated',
  Error: 'Error',
} as const;

/** Reasons the agent's node admission defers or refuses a resize with (agent/pure/admission.ts). */
export const AdmissionReasons = {
  /** The new request is larger than the node's allocatable. */
  ExceedsAllocatable: 'ExceedsAllocatable',
  /** The new total limit of the pod is larger than the node's allocatable. */
  LimitExceedsAllocatable: 'LimitExceedsAllocatable',
  /** The new request fits the node but not what the other pods leave now. */
  InsufficientNodeResources: 'InsufficientNodeResources',
  /** A quantity in the request or a pod could not be read. */
  InvalidRequest: 'InvalidRequest',
} as const;

/**
 * Reasons of a pod's resize view (status.resize.pods[].reason, the ResizeBlocked message) when the
 * node has said nothing about the latest resize yet, or the agent's answer cannot be read.
 */
export const ResizeViewReasons = {
  /** metadata.generation is ahead of what the kubelet reports having seen, or the agent answered an older revision. */
  NotObserved: 'NotObserved',
  /** The kubelet has seen the spec and reports no verdict, but the container resources differ. */
  NotActuated: 'NotActuated',
  /** The controller's resize-request annotation does not parse. */
  InvalidRequest: 'InvalidRequest',
  /** The agent's resize-status annotation does not parse. */
  InvalidStatus: 'InvalidStatus',
  /** No agent has answered the resize request. */
  NoAgentResponse: 'NoAgentResponse',
} as const;

/** Why the resize strategy recreates a pod or blocks on it (resize/outcome.ts). */
export const ResizeOutcomeReasons = {
  Infeasible: 'Infeasible',
  ProposedTimeout: 'ProposedTimeout',
  DeferredTimeout: 'DeferredTimeout',
  InProgressTimeout: 'InProgressTimeout',
} as const;

/** Reasons on the pod conditions the in-place engine writes (InPlaceUpdateReady, and Ready while draining). */
export const PodConditionReasons = {
  InPlaceUpdateStarted: 'InPlaceUpdateStarted',
  InPlaceUpdateCompleted: 'InPlaceUpdateCompleted',
  InPlaceUpdateCancelled: 'InPlaceUpdateCancelled',
} as const;

/** `Lifecycle<State>`: the reason of the gate a lifecycle hook with markPodNotReady holds False (decision 19). */
export const lifecycleGateReason = (state: string): string => `Lifecycle${state}`;

/** Why the planner deletes a pod; named in the SuccessfulDelete event's message ("deleted (ScaleDown): …"). */
export type DeleteReason =
  | 'ScaleDown'
  | 'PodsToDelete'
  | 'RecreateUpdate'
  | 'RecreateFallback'
  | 'ResizeRecreate'
  | 'ReplaceUnscheduled'
  /** A pod of a kind with identities ended (Failed or Succeeded): its name comes back as a new pod. */
  | 'ReplaceEnded';
