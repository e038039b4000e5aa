// The InPlaceStatefulSet kind (apps.tailor.dev/v1alpha1): its names, the labels its pods and
// revisions carry, its defaults and its spec, a superset of apps/v1 StatefulSet with Advanced
// StatefulSet's extensions (docs/decisions/0087-the-stateful-kind-is-named-inplacestatefulset.md).
// crds/apps.tailor.dev_inplacestatefulsets.yaml is the source of truth for validation; these
// types mirror it. Pure. Must not: import anything but api/ and client-node types.
import type { V1LabelSelector, V1PodTemplateSpec } from '@kubernetes/client-node';
import type {
  CloneSetLifecycle,
  CloneSetStatus,
  InPlaceUpdateStrategy,
  IntOrString,
  ResizeStrategy,
  UpdatePriorityStrategy,
  VolumeClaimTemplate,
} from './types.js';

export const INPLACESTATEFULSET_KIND = 'InPlaceStatefulSet';
export const INPLACESTATEFULSET_LIST_KIND = 'InPlaceStatefulSetList';
export const INPLACESTATEFULSET_PLURAL = 'inplacestatefulsets';
export const INPLACESTATEFULSET_SINGULAR = 'inplacestatefulset';
export const INPLACESTATEFULSET_SHORT_NAME = 'ipsts';
export const INPLACESTATEFULSET_CRD_NAME = 'inplacestatefulsets.apps.tailor.dev';

/** The native StatefulSet's pod labels, which users and tools select on. */
export const LABEL_STATEFULSET_POD_NAME = 'statefulset.kubernetes.io/pod-name';
export const LABEL_POD_INDEX = 'apps.kubernetes.io/pod-index';
/** The set's name, on its pods, claims and ControllerRevisions (what its controller's caches select). */
export const LABEL_INPLACESTATEFULSET = 'apps.tailor.dev/inplacestatefulset';

export type PodManagementPolicy = 'OrderedReady' | 'Parallel';
export type PodUpdatePolicy = 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly';
export type ClaimRetention = 'Retain' | 'Delete';

export const DEFAULT_STATEFUL_REPLICAS = 1;
export const DEFAULT_POD_MANAGEMENT_POLICY: PodManagementPolicy = 'OrderedReady';
export const DEFAULT_STATEFUL_UPDATE_TYPE: NonNullable<StatefulUpdateStrategy['type']> = 'RollingUpdate';
/** Not Advanced StatefulSet's ReCreate: the kind exists to update in place (decision 88). */
export const DEFAULT_POD_UPDATE_POLICY: PodUpdatePolicy = 'InPlaceIfPossible';
export const DEFAULT_STATEFUL_MAX_UNAVAILABLE = 1;
export const DEFAULT_STATEFUL_PARTITION = 0;
export const DEFAULT_STATEFUL_REVISION_HISTORY_LIMIT = 10;
export const DEFAULT_ORDINALS_START = 0;

/** What a RollingUpdate's `rollingUpdate` holds when it does not say. */
export const ROLLING_UPDATE_DEFAULTS = {
  partition: DEFAULT_STATEFUL_PARTITION,
  maxUnavailable: DEFAULT_STATEFUL_MAX_UNAVAILABLE,
  podUpdatePolicy: DEFAULT_POD_UPDATE_POLICY,
} as const;
export const DEFAULT_CLAIM_RETENTION: ClaimRetention = 'Retain';

export interface StatefulRollingUpdate {
  partition?: number;
  maxUnavailable?: IntOrString;
  podUpdatePolicy?: PodUpdatePolicy;
  paused?: boolean;
  unorderedUpdate?: { priorityStrategy?: UpdatePriorityStrategy };
  inPlaceUpdateStrategy?: InPlaceUpdateStrategy;
  minReadySeconds?: number;
}

export interface StatefulUpdateStrategy {
  type?: 'RollingUpdate' | 'OnDelete';
  rollingUpdate?: StatefulRollingUpdate;
  /** Tailor: how unfinished resizes are resolved, as for CloneSets. */
  resizeStrategy?: ResizeStrategy;
}

export interface InPlaceStatefulSetSpec {
  replicas?: number;
  selector: V1LabelSelector;
  template: V1PodTemplateSpec;
  serviceName?: string;
  podManagementPolicy?: PodManagementPolicy;
  updateStrategy?: StatefulUpdateStrategy;
  volumeClaimTemplates?: VolumeClaimTemplate[];
  persistentVolumeClaimRetentionPolicy?: { whenDeleted?: ClaimRetention; whenScaled?: ClaimRetention };
  ordinals?: { start?: number };
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  reserveOrdinals?: IntOrString[];
  scaleStrategy?: { maxUnavailable?: IntOrString };
  lifecycle?: CloneSetLifecycle;
  volumeClaimUpdateStrategy?: { type?: 'OnClaimDelete' | 'InPlace' };
  progressDeadlineSeconds?: number;
}

export interface InPlaceStatefulSet {
  apiVersion?: string;
  kind?: string;
  metadata?: import('@kubernetes/client-node').V1ObjectMeta;
  spec: InPlaceStatefulSetSpec;
  /** The CloneSet's status fields (Advanced StatefulSet's are a subset), written by the same engine. */
  status?: CloneSetStatus;
}

/** The set with the CRD's defaults applied (what the API server stores); never mutates its input. */
export function withStatefulDefaults<T extends { spec: InPlaceStatefulSetSpec }>(set: T): T {
  const { spec } = set;
  return {
    ...set,
    spec: {
      ...spec,
      replicas: spec.replicas ?? DEFAULT_STATEFUL_REPLICAS,
      podManagementPolicy: spec.podManagementPolicy ?? DEFAULT_POD_MANAGEMENT_POLICY,
      revisionHistoryLimit: spec.revisionHistoryLimit ?? DEFAULT_STATEFUL_REVISION_HISTORY_LIMIT,
      ordinals: { ...spec.ordinals, start: spec.ordinals?.start ?? DEFAULT_ORDINALS_START },
      persistentVolumeClaimRetentionPolicy: retentionDefaults(spec.persistentVolumeClaimRetentionPolicy),
      updateStrategy: updateStrategyDefaults(spec.updateStrategy),
    },
  };
}

function retentionDefaults(
  policy: InPlaceStatefulSetSpec['persistentVolumeClaimRetentionPolicy'],
): NonNullable<InPlaceStatefulSetSpec['persistentVolumeClaimRetentionPolicy']> {
  return {
    whenDeleted: policy?.whenDeleted ?? DEFAULT_CLAIM_RETENTION,
    whenScaled: policy?.whenScaled ?? DEFAULT_CLAIM_RETENTION,
  };
}

function updateStrategyDefaults(strategy: StatefulUpdateStrategy | undefined): StatefulUpdateStrategy {
  const type = strategy?.type ?? DEFAULT_STATEFUL_UPDATE_TYPE;
  if (type !== 'RollingUpdate') return { ...strategy, type };
  return { ...strategy, type, rollingUpdate: { ...ROLLING_UPDATE_DEFAULTS, ...strategy?.rollingUpdate } };
}
