// The PersistentVolumeClaims of spec.volumeClaimTemplates, as Kruise's CloneSet keeps them
// (docs/decisions/0018-volume-claim-templates.md): one claim per template per pod, named
// `<template>-<cloneset>-<instance id>` and labelled with the instance id; the pod mounts each as
// the volume named after its template. Owns the pure decisions: the claims and volumes a new pod
// gets, which instance ids a new pod takes back (its claims with it), which claims go with a pod
// the CloneSet deletes, which claims disablePVCReuse drops, and when changed templates force a
// recreate. Must not: perform I/O (the executor and pod-control create and delete).
import type * as k8s from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { canonicalJSON } from '../../api/json.js';
import {
  ANNOTATION_VOLUME_CLAIM_TEMPLATES_HASH,
  LABEL_INSTANCE_ID,
  type VolumeClaimTemplate,
} from '../../api/types.js';
import type { Pod, Wire, WireCloneSet } from '../../api/wire.js';
import { isLivePod } from '../../api/pod.js';
import { controllerRef } from './pods.js';

export type Claim = Wire<k8s.V1PersistentVolumeClaim>;

/** An owner reference as a claim carries it. */
export type ClaimOwner = NonNullable<NonNullable<Claim['metadata']>['ownerReferences']>[number];

export const claimName = (templateName: string, cloneSetName: string, instanceId: string): string =>
  `${templateName}-${cloneSetName}-${instanceId}`;

const templatesOf = (cs: WireCloneSet): readonly VolumeClaimTemplate[] => cs.spec?.volumeClaimTemplates ?? [];

const instanceIdOf = (obj: { metadata?: { labels?: Record<string, string> } }): string =>
  obj.metadata?.labels?.[LABEL_INSTANCE_ID] ?? '';

/**
 * The hash of the templates' names and specs ('' when there are none), independent of their
 * order; labels and annotations are left out, as Kruise leaves them out.
 */
export function claimTemplatesHash(templates: readonly VolumeClaimTemplate[]): string {
  if (templates.length === 0) return '';
  const named = templates
    .map((t) => ({ name: t.metadata.name, spec: t.spec }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  return createHash('sha256').update(canonicalJSON(named)).digest('hex').slice(0, 16);
}

/** The claims of the pod with this instance id: owned by the CloneSet, so they outlive the pod. */
export function claimsForPod(cs: WireCloneSet, instanceId: string): Claim[] {
  const selectorLabels = cs.spec?.selector?.matchLabels ?? {};
  return templatesOf(cs).map((t) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(t.metadata.name, cs.metadata?.name ?? '', instanceId),
      namespace: cs.metadata?.namespace,
      labels: { ...t.metadata.labels, ...selectorLabels, [LABEL_INSTANCE_ID]: instanceId },
      ...(t.metadata.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
      ownerReferences: [controllerRef(cs)],
    },
    spec: structuredClone(t.spec),
  }));
}

/**
 * The pod with a volume per template (replacing a template volume of the same name) and the
 * templates' hash, so a later change of the templates is seen (claimTemplatesChanged).
 */
export function withClaimVolumes(pod: Pod, cs: WireCloneSet): Pod {
  const templates = templatesOf(cs);
  if (templates.length === 0) return pod;
  const instanceId = instanceIdOf(pod);
  const names = new Set(templates.map((t) => t.metadata.name));
  const claimVolumes = templates.map((t) => ({
    name: t.metadata.name,
    persistentVolumeClaim: { claimName: claimName(t.metadata.name, cs.metadata?.name ?? '', instanceId) },
  }));
  const others = (pod.spec?.volumes ?? []).filter((v) => !names.has(v.name));
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      annotations: {
        ...pod.metadata?.annotations,
        [ANNOTATION_VOLUME_CLAIM_TEMPLATES_HASH]: claimTemplatesHash(templates),
      },
    },
    spec: { containers: [], ...pod.spec, volumes: [...claimVolumes, ...others] },
  };
}

/**
 * The pod's claims were made from other templates than the CloneSet has now. In place cannot
 * change volumes, so its next update recreates it (with new claims), except under InPlaceOnly,
 * which never recreates and keeps the claims it has, as Kruise does.
 */
export function claimTemplatesChanged(pod: Pod, cs: WireCloneSet): boolean {
  const podHash = pod.metadata?.annotations?.[ANNOTATION_VOLUME_CLAIM_TEMPLATES_HASH] ?? '';
  return podHash !== claimTemplatesHash(templatesOf(cs));
}

export interface ClaimPlanInput {
  cloneSet: WireCloneSet;
  /** Every pod the CloneSet owns, terminating and finished ones included. */
  pods: readonly Pod[];
  /** Every claim the CloneSet owns. */
  claims: readonly Claim[];
  /** The pods this round deletes: their claims go with them. */
  deletedPods: readonly Pod[];
}

export interface ClaimPlan {
  /** Instance ids whose claims no pod has: new pods take these first, and so their claims. */
  reuseIds: string[];
  /** Ids of every claim, deleting ones too: a new pod with a fresh id must take none of them. */
  claimIds: ReadonlySet<string>;
  /**
   * Creates to hold back: claims waiting for a pod whose predecessor of the same id (and name)
   * is still terminating. Its deletion wakes the CloneSet, and the replacement takes the id then.
   */
  heldCreates: number;
  /** Pod name → the claims to delete once that pod's deletion is accepted. */
  deleteWithPod: Map<string, string[]>;
  /** Claims to delete now: disablePVCReuse drops the claims of ids no live pod has. */
  deleteNow: string[];
}

/**
 * What happens to the CloneSet's claims this round, as Kruise decides it: a pod the CloneSet
 * deletes (scale-down, specified delete, recreate update) takes its claims along; a pod that
 * disappears otherwise (deleted by someone, evicted) leaves them for its replacement, unless
 * scaleStrategy.disablePVCReuse, which deletes them instead.
 */
export function planClaims(input: ClaimPlanInput): ClaimPlan {
  const claims = input.claims.filter((c) => !c.metadata?.deletionTimestamp);
  const claimIds = new Set(input.claims.map(instanceIdOf).filter((id) => id !== ''));
  const liveIds = new Set(input.pods.filter(isLivePod).map(instanceIdOf));
  const podIds = new Set(input.pods.map(instanceIdOf));
  const terminatingIds = new Set(input.pods.filter((p) => p.metadata?.deletionTimestamp).map(instanceIdOf));
  const deleteWithPod = new Map<string, string[]>();
  for (const pod of input.deletedPods) {
    const id = instanceIdOf(pod);
    const names = claims.filter((c) => id !== '' && instanceIdOf(c) === id).map((c) => c.metadata?.name ?? '');
    if (names.length > 0) deleteWithPod.set(pod.metadata?.name ?? '', names);
  }
  const orphaned = claims.filter((c) => instanceIdOf(c) !== '' && !liveIds.has(instanceIdOf(c)));
  if (input.cloneSet.spec?.scaleStrategy?.disablePVCReuse === true) {
    return {
      reuseIds: [],
      claimIds,
      heldCreates: 0,
      deleteWithPod,
      deleteNow: orphaned.map((c) => c.metadata?.name ?? '').sort(),
    };
  }
  const freeIds = [...new Set(orphaned.map(instanceIdOf))].sort();
  return {
    reuseIds: freeIds.filter((id) => !podIds.has(id)),
    claimIds,
    // A finished pod not being deleted may stay for long: its replacement takes a new id instead.
    heldCreates: freeIds.filter((id) => terminatingIds.has(id)).length,
    deleteWithPod,
    deleteNow: [],
  };
}

/**
 * A claim as the controller's cache keeps it: what planClaims and claim-owners.ts read (the
 * instance id, and `workloadLabel`, the label naming a workload of a kind with identities), and
 * for such a kind the storage it requests and has, which claim expansion reads
 * (inplacestatefulset/pure/claim-expansion.ts); nothing else of its spec or status.
 */
export function trimClaim(claim: Claim, workloadLabel?: string): Claim {
  const { name, namespace, uid, resourceVersion, labels, ownerReferences, deletionTimestamp } = claim.metadata ?? {};
  const kept: Record<string, string> = {};
  for (const key of [LABEL_INSTANCE_ID, workloadLabel ?? LABEL_INSTANCE_ID])
    if (labels?.[key] !== undefined) kept[key] = labels[key];
  return {
    metadata: {
      name,
      namespace,
      uid,
      resourceVersion,
      ...(Object.keys(kept).length > 0 ? { labels: kept } : {}),
      ...(ownerReferences ? { ownerReferences } : {}),
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
    },
    ...(workloadLabel === undefined ? {} : storageOf(claim)),
  };
}

/** The storage a claim requests and the storage it has, alone (the API server bounds a quantity's length). */
function storageOf(claim: Claim): Pick<Claim, 'spec' | 'status'> {
  const requested = claim.spec?.resources?.requests?.['storage'];
  const capacity = claim.status?.capacity?.['storage'];
  return {
    ...(requested === undefined ? {} : { spec: { resources: { requests: { storage: requested } } } }),
    ...(capacity === undefined ? {} : { status: { capacity: { storage: capacity } } }),
  };
}
