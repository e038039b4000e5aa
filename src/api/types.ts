// CloneSet API types (apps.tailor.dev/v1alpha1) and the pod-level names of docs/architecture.md
// §4.1 The CloneSet API, §4.3 Resize states and §4.5 Pod-level names. Owns names and shapes only:
// no logic, no I/O. The CRD in
// crds/apps.tailor.dev_clonesets.yaml is the source of truth for validation; these types mirror
// it field for field (OpenKruise CloneSet names). Times are RFC 3339 strings, as they arrive in
// the JSON of a custom object (the client does not turn them into Date for custom resources).
import type {
  V1LabelSelector,
  V1ObjectMeta,
  V1PersistentVolumeClaimSpec,
  V1PodTemplateSpec,
} from '@kubernetes/client-node';

// ---- API identity -------------------------------------------------------------------------

export const API_GROUP = 'apps.tailor.dev';
export const API_VERSION = 'v1alpha1';
export const CLONESET_KIND = 'CloneSet';
export const CLONESET_LIST_KIND = 'CloneSetList';
export const CLONESET_PLURAL = 'clonesets';
export const CLONESET_SINGULAR = 'cloneset';
export const CLONESET_SHORT_NAME = 'clone';
export const CLONESET_CRD_NAME = `${CLONESET_PLURAL}.${API_GROUP}`;

// ---- Pod-level names (docs/architecture.md §4.5) --------------------------------------------

/** Label: the name of the ControllerRevision a pod was created from or updated to. */
export const LABEL_CONTROLLER_REVISION_HASH = 'controller-revision-hash';
/** Label on a CloneSet's ControllerRevisions: the CloneSet's name (`kubectl tailor history`, the agent's revision cache). */
export const LABEL_CLONESET = 'apps.tailor.dev/cloneset';
/** Label: a pod's stable instance id within its CloneSet. */
export const LABEL_INSTANCE_ID = 'apps.tailor.dev/instance-id';
/** Label (any value; Kruise's specified-delete): the CloneSet deletes this pod and replaces it, like podsToDelete. */
export const LABEL_SPECIFIED_DELETE = 'apps.tailor.dev/specified-delete';
/**
 * CloneSet label, "true": pods in PreparingDelete do not count toward replicas when scaling, as
 * `scaleStrategy.excludePreparingDelete` says; Kruise's `apps.kruise.io/cloneset-scaling-exclude-preparing-delete`
 * in Tailor's domain, so a ported manifest that sets the label behaves as in Kruise.
 */
export const LABEL_SCALING_EXCLUDE_PREPARING_DELETE = 'apps.tailor.dev/cloneset-scaling-exclude-preparing-delete';
/**
 * Annotation: the hash of spec.volumeClaimTemplates a pod's claims were made from. In place cannot
 * change a pod's volumes, so a pod whose hash differs is recreated (docs/decisions/0018-volume-claim-templates.md).
 */
export const ANNOTATION_VOLUME_CLAIM_TEMPLATES_HASH = 'apps.tailor.dev/volume-claim-templates-hash';

/**
 * Label: where a pod is in its lifecycle (Kruise's states; see LifecycleState). Pods wait in the
 * Preparing* states while a CloneSet lifecycle hook holds them.
 */
export const LABEL_LIFECYCLE_STATE = 'lifecycle.apps.tailor.dev/state';
/** Annotation (RFC 3339): when the lifecycle state label last changed. */
export const ANNOTATION_LIFECYCLE_TIMESTAMP = 'lifecycle.apps.tailor.dev/timestamp';

const LIFECYCLE_PREFIX = 'lifecycle.apps.tailor.dev/';
const TAILOR_PREFIX = 'apps.tailor.dev/';

/**
 * Pod label keys only Tailor sets: a template's value for one is never copied to a pod, at
 * creation or in place (the CRD refuses them; a CloneSet stored before a rule may still hold one).
 * The lifecycle state decides which pods are deleted: copied, it would bypass the disruption budget.
 */
export const isTailorOwnedLabel = (key: string): boolean =>
  key === LABEL_CONTROLLER_REVISION_HASH ||
  key === LABEL_INSTANCE_ID ||
  key === LABEL_SPECIFIED_DELETE ||
  key.startsWith(LIFECYCLE_PREFIX);

/** Pod annotation keys only Tailor (or its agent) writes: control annotations, never taken from a template. */
export const isTailorOwnedAnnotation = (key: string): boolean =>
  key.startsWith(TAILOR_PREFIX) || key.startsWith(LIFECYCLE_PREFIX);

/** Readiness gate and pod condition type, False during an in-place update that restarts containers. */
export const CONDITION_INPLACE_UPDATE_READY = 'apps.tailor.dev/InPlaceUpdateReady';

/** Annotation (JSON, see InPlaceUpdateState): the last in-place update applied to a pod. */
export const ANNOTATION_INPLACE_UPDATE_STATE = 'apps.tailor.dev/inplace-update-state';
/** Annotation (agent backend): the cpu/memory the controller wants for a pod's containers. */
export const ANNOTATION_RESIZE_REQUEST = 'apps.tailor.dev/resize-request';
/** Annotation (agent backend): the node agent's resize state and actuated values. */
export const ANNOTATION_RESIZE_STATUS = 'apps.tailor.dev/resize-status';
/**
 * Annotation (JSON, controller → node agent): restart these containers in place, each named with
 * the ID of the container to stop (docs/decisions/0015-restart-in-place.md). Once the kubelet has
 * started a new container the ID no longer matches, so a request is carried out at most once.
 */
export const ANNOTATION_RESTART_REQUEST = 'apps.tailor.dev/restart-request';

// ---- Resize states (docs/architecture.md §4.3) ----------------------------------------------

/** KEP-1287 vocabulary; absent or "" means nothing is pending. */
export type ResizeState = 'Proposed' | 'InProgress' | 'Deferred' | 'Infeasible';
export const RESIZE_STATES: readonly ResizeState[] = ['Proposed', 'InProgress', 'Deferred', 'Infeasible'];

export const isResizeState = (value: unknown): value is ResizeState =>
  typeof value === 'string' && (RESIZE_STATES as readonly string[]).includes(value);

// ---- Spec ---------------------------------------------------------------------------------

/** A Kubernetes IntOrString as it appears in JSON: 5 or "20%". */
export type IntOrString = number | string;

/** OnDelete: running pods are never updated; a pod deleted by someone comes back at the update revision. */
export type UpdateStrategyType = 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly' | 'OnDelete';

/** What to do with a resize that timed out or can never fit (note: `Recreate`, not `ReCreate`). */
export type ResizeAction = 'Recreate' | 'Wait';

export interface CloneSetScaleStrategy {
  podsToDelete?: string[];
  maxUnavailable?: IntOrString;
  /** Pods in PreparingDelete do not count toward replicas when scaling (Kruise: a CloneSet label). */
  excludePreparingDelete?: boolean;
  /** A replacement pod gets new claims instead of those of the pod it replaces (workload/pure/claims.ts). */
  disablePVCReuse?: boolean;
}

/**
 * One entry of spec.volumeClaimTemplates: each pod gets a PersistentVolumeClaim
 * `<metadata.name>-<cloneset>-<instance id>` made from it, mounted as the volume `metadata.name`.
 */
export interface VolumeClaimTemplate {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: V1PersistentVolumeClaimSpec;
}

// ---- Lifecycle hooks (Kruise's CloneSet spec.lifecycle) ---------------------------------------

/** The values of LABEL_LIFECYCLE_STATE. */
export type LifecycleState =
  'PreparingNormal' | 'Normal' | 'PreparingUpdate' | 'Updating' | 'Updated' | 'PreparingDelete';
export const LifecycleStates = {
  PreparingNormal: 'PreparingNormal',
  Normal: 'Normal',
  PreparingUpdate: 'PreparingUpdate',
  Updating: 'Updating',
  Updated: 'Updated',
  PreparingDelete: 'PreparingDelete',
} as const satisfies Record<LifecycleState, LifecycleState>;

/**
 * A hook holds a pod while the pod carries any of its labels (with the value given) or
 * finalizers; an outside controller releases the pod by removing them.
 */
export interface LifecycleHook {
  labelsHandler?: Record<string, string>;
  finalizersHandler?: string[];
  /** Take the pod out of endpoints while the hook holds it (preDelete and inPlaceUpdate only). */
  markPodNotReady?: boolean;
}

export interface CloneSetLifecycle {
  preDelete?: LifecycleHook;
  inPlaceUpdate?: LifecycleHook;
  preNormal?: LifecycleHook;
}

export interface InPlaceUpdateStrategy {
  gracePeriodSeconds?: number;
}

/** Tailor extension: how unfinished resizes are resolved. */
export interface ResizeStrategy {
  deferredTimeoutSeconds?: number;
  inProgressTimeoutSeconds?: number;
  onTimeout?: ResizeAction;
  onInfeasible?: ResizeAction;
}

/** Pods matching `matchSelector` add `weight` (0–100) to their update priority. */
export interface UpdatePriorityWeightTerm {
  weight: number;
  matchSelector: V1LabelSelector;
}

/** Pods carrying the label `orderedKey` are ordered by the integer that ends its value, highest first. */
export interface UpdatePriorityOrderTerm {
  orderedKey: string;
}

/** Which pods a rolling update takes first: exactly one of the two lists (Kruise's UpdatePriorityStrategy). */
export interface UpdatePriorityStrategy {
  weightPriority?: UpdatePriorityWeightTerm[];
  orderPriority?: UpdatePriorityOrderTerm[];
}

/** Pods labelled `key=value` are spread across the update order instead of moving together. */
export interface UpdateScatterTerm {
  key: string;
  value: string;
}

export interface CloneSetUpdateStrategy {
  type?: UpdateStrategyType;
  partition?: IntOrString;
  maxUnavailable?: IntOrString;
  maxSurge?: IntOrString;
  paused?: boolean;
  priorityStrategy?: UpdatePriorityStrategy;
  scatterStrategy?: UpdateScatterTerm[];
  inPlaceUpdateStrategy?: InPlaceUpdateStrategy;
  resizeStrategy?: ResizeStrategy;
}

export interface CloneSetSpec {
  replicas?: number;
  selector: V1LabelSelector;
  template: V1PodTemplateSpec;
  scaleStrategy?: CloneSetScaleStrategy;
  updateStrategy?: CloneSetUpdateStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  progressDeadlineSeconds?: number;
  lifecycle?: CloneSetLifecycle;
  volumeClaimTemplates?: VolumeClaimTemplate[];
}

// ---- Status -------------------------------------------------------------------------------

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** Condition types a CloneSet reports (Kruise's, kstatus's Reconciling and Stalled, and Tailor's). */
export const CloneSetConditionTypes = {
  /** Kruise: creating or deleting pods failed. */
  FailedScale: 'FailedScale',
  /** Kruise: updating pods failed. */
  FailedUpdate: 'FailedUpdate',
  /** Tailor: a resize is Infeasible or timed out and the strategy waits (InPlaceOnly, Wait, or the budget). */
  ResizeBlocked: 'ResizeBlocked',
  /** Tailor: creating or finding the ControllerRevision of the template failed. */
  FailedRevision: 'FailedRevision',
  /** Tailor: maxUnavailable pods are out of service and the rollout waits for them. */
  RolloutBlocked: 'RolloutBlocked',
  /** Tailor: live pods run more revisions than a round holds templates for; the others' pods wait (decision 81). */
  RevisionsInUse: 'RevisionsInUse',
  /** Tailor: no pod is updated because the canary driver cannot see the change and let it through (decision 97). */
  UpdateHeld: 'UpdateHeld',
  /** Deployment's: the rollout moves, completed, is paused, or missed progressDeadlineSeconds. */
  Progressing: 'Progressing',
  /** kstatus's: True while a rollout, a scale or a resize moves; False when done or held on purpose. */
  Reconciling: 'Reconciling',
  /** kstatus's: True when the CloneSet cannot reach its spec without someone acting. */
  Stalled: 'Stalled',
} as const;

export interface CloneSetCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  /** RFC 3339. */
  lastTransitionTime?: string;
  /** RFC 3339. */
  lastUpdateTime?: string;
}

export interface CloneSetResizePod {
  name: string;
  state: ResizeState;
  reason?: string;
  message?: string;
  /** RFC 3339: when the pod entered this state. */
  since?: string;
}

/** Bound on status.resize.pods (the CRD's maxItems). */
export const MAX_RESIZE_STATUS_PODS = 50;

export interface CloneSetResizeStatus {
  /** proposed + inProgress + deferred: resizes that may still finish (the RESIZING column). */
  resizing: number;
  proposed: number;
  inProgress: number;
  deferred: number;
  infeasible: number;
  /** Oldest first, at most MAX_RESIZE_STATUS_PODS entries. */
  pods?: CloneSetResizePod[];
}

export interface CloneSetStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  updatedReplicas?: number;
  updatedReadyReplicas?: number;
  updatedAvailableReplicas?: number;
  expectedUpdatedReplicas?: number;
  /** Pods at currentRevision: apps/v1's, the InPlaceStatefulSet's only (its kind's status, workload/pure/kind.ts). */
  currentReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
  labelSelector?: string;
  conditions?: CloneSetCondition[];
  resize?: CloneSetResizeStatus;
  /** Per claim template, the pods whose claim has the template's storage: the InPlaceStatefulSet's only (Advanced StatefulSet's names). */
  volumeClaims?: VolumeClaimStatus[];
}

export interface VolumeClaimStatus {
  /** The template's name. */
  volumeClaimName: string;
  /** Pods whose claim of this template requests at least the template's storage. */
  compatibleReplicas: number;
  /** Of those, the pods whose claim also has that capacity (its resize finished). */
  compatibleReadyReplicas: number;
}

// ---- Object -------------------------------------------------------------------------------

export interface CloneSet {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec: CloneSetSpec;
  status?: CloneSetStatus;
}

// ---- Pod annotation payloads --------------------------------------------------------------

/** JSON of ANNOTATION_INPLACE_UPDATE_STATE. */
export interface InPlaceUpdateState {
  /** The ControllerRevision name the pod was updated to. */
  revision: string;
  /** RFC 3339. */
  updateTimestamp: string;
  /** Container name -> imageID reported before the update (to detect the restart with the new image). */
  lastContainerImageIDs?: Record<string, string>;
  /** Container name -> restartCount before the update (a new tag with the same imageID still restarts). */
  lastRestartCounts?: Record<string, number>;
  /** What changed: container name -> the fields that changed ("image", "resources"). */
  changed?: Record<string, string[]>;
  /**
   * metadata.generation the resize of this update produced (the pods/resize answer): a kubelet
   * verdict observed at or after it is about this resize, even once a later patch (the image)
   * raised the generation again.
   */
  resizeGeneration?: number;
  /** The API server refused this update's resize at admission (Kubernetes ≥ 1.36): never retried. */
  resizeRefused?: ResizeRefusal;
  /** The container batches patched so far for this revision, in order (decision 0021). */
  containerBatchesRecord?: ContainerBatch[];
  /** Container name -> image still to come in a later batch, once the batches before are ready. */
  nextContainerImages?: Record<string, string>;
  /** Container name -> cpu/memory (its template's resources) still to come in a later batch. */
  nextContainerResources?: Record<string, BatchResources>;
  /**
   * Container name -> the changed labels/annotations that restart it (env from pod metadata, or a
   * rolling restart's annotation) in a later batch: its restart request waits for that batch.
   */
  nextContainerRefMetadata?: Record<string, ContainerRefMetadata>;
}

/** A container's resources as a later batch sends them (the template's requirements). */
export interface BatchResources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  claims?: { name: string; request?: string }[];
}

/** Pod metadata a container reads, as Kruise records it: labels and annotations, new values. */
export interface ContainerRefMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** One batch of an ordered in-place update: when it was patched, and which containers. */
export interface ContainerBatch {
  /** RFC 3339. */
  timestamp: string;
  containers: string[];
}

/** A resize the API server refused for good (its cause: NodeCapacity, UnsupportedPlatform). */
export interface ResizeRefusal {
  cause: string;
  message: string;
  /** RFC 3339: when it was refused (the Infeasible state's since). */
  at: string;
}
