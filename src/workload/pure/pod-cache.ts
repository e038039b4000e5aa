// What of a pod the CloneSet controller keeps in its cache: the fields its decisions read
// (identity, labels and annotations, owner, the containers' names, images, resources and resize
// policies, readiness gates, node, and the status the kubelet reports about them) and nothing
// else. Env, commands, probes, volumes, affinity and the like are most of a pod's bytes and no
// decision reads them; the patches Tailor sends never need them either. Parts that many pods repeat
// by value (resources, resize policies, readiness gates, conditions, owner references) are kept
// once and frozen, so a cached pod must be read, never written (decision 32).
// A pod another controller controls keeps its identity only (identityOnly); an orphan, its identity,
// phase and bounded labels, which adoption reads (orphanIdentity); an ended one (Succeeded or
// Failed), its identity, controller reference and the few labels still read of it (endedIdentity,
// decision 74).
// Pure. Must not: drop anything a planner, the in-place step machine or the resize view reads.
import type * as k8s from '@kubernetes/client-node';
import {
  CLONESET_OWNER,
  controllerOf,
  hasNoController,
  type OwnerKind,
  type OwnerReferenceLike,
} from '../../api/owner.js';
import { hasEnded } from '../../api/pod.js';
import { LABEL_CONTROLLER_REVISION_HASH, LABEL_INSTANCE_ID } from '../../api/types.js';
import type { Pod } from '../../api/wire.js';

/**
 * One copy of each string that many pods repeat (namespace, owner, revision, node, image, condition
 * types, reasons and second-precision timestamps): JSON.parse gives every pod its own copies, which
 * were a fifth of a cached pod. Names, UIDs and resourceVersions are unique and never pooled; the
 * pool is cleared when full, which only costs sharing, never correctness.
 */
const pool = new Map<string, string>();
const POOL_MAX = 50_000;
function shared<S extends string | undefined>(s: S): S {
  if (s === undefined) return s;
  const known = pool.get(s);
  if (known !== undefined) return known as S;
  if (pool.size >= POOL_MAX) pool.clear();
  pool.set(s, s);
  return s;
}
/**
 * One frozen copy of each small JSON value many pods repeat: most of a kwok-shaped pod's cached
 * heap was these few objects repeated per pod. Bounded and cleared when full like the strings.
 */
const values = new Map<string, unknown>();
// Smaller than the strings' bound: a value seen once (a condition stamped at a second no other pod
// shares) costs its key here and saves nothing.
const VALUES_MAX = 10_000;
function sharedValue<V>(value: V): V {
  if (value === undefined || value === null || typeof value !== 'object') return value;
  const key = JSON.stringify(value);
  const known = values.get(key);
  if (known !== undefined) return known as V;
  if (values.size >= VALUES_MAX) values.clear();
  const frozen = deepFreeze(value);
  values.set(key, frozen);
  return frozen;
}
function deepFreeze<V>(value: V): V {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const sharedValues = (record: Record<string, string> | undefined): Record<string, string> | undefined =>
  record && Object.fromEntries(Object.entries(record).map(([k, v]) => [k, shared(v)]));

type Spec = NonNullable<Pod['spec']>;
type Status = NonNullable<Pod['status']>;
type ContainerStatus = NonNullable<Status['containerStatuses']>[number];

const container = (c: Spec['containers'][number]): Spec['containers'][number] => ({
  name: c.name,
  ...(c.image !== undefined ? { image: shared(c.image) } : {}),
  ...(c.resources !== undefined ? { resources: sharedValue(c.resources) } : {}),
  ...(c.resizePolicy !== undefined ? { resizePolicy: sharedValue(c.resizePolicy) } : {}),
  ...(c.restartPolicy !== undefined ? { restartPolicy: c.restartPolicy } : {}),
});

const containerStatus = (s: ContainerStatus): ContainerStatus => ({
  name: s.name,
  ready: s.ready,
  restartCount: s.restartCount,
  image: shared(s.image),
  imageID: shared(s.imageID),
  ...(s.containerID !== undefined ? { containerID: s.containerID } : {}),
  ...(s.started !== undefined ? { started: s.started } : {}),
  ...(s.state !== undefined ? { state: s.state } : {}),
  ...(s.resources !== undefined ? { resources: sharedValue(s.resources) } : {}),
  ...(s.allocatedResources !== undefined ? { allocatedResources: sharedValue(s.allocatedResources) } : {}),
});

function podLevelStatus(status: Status): Partial<Status> {
  const resources = (status as { resources?: unknown }).resources;
  return resources !== undefined ? ({ resources } as Partial<Status>) : {};
}

/** Annotations of other domains that a decision reads. */
const READ_ANNOTATIONS: ReadonlySet<string> = new Set(['controller.kubernetes.io/pod-deletion-cost']);
const isTailorKey = (key: string): boolean => {
  const domain = key.slice(0, Math.max(0, key.indexOf('/')));
  return domain === 'apps.tailor.dev' || domain.endsWith('.apps.tailor.dev');
};

/**
 * Only the annotations some decision reads: Tailor's own and the deletion cost. Anyone who may
 * create a pod can give it 256 KiB of annotations; the cache must not keep them.
 */
function readAnnotations(annotations: Record<string, string>): Record<string, string> | undefined {
  const kept = Object.entries(annotations).filter(([key]) => isTailorKey(key) || READ_ANNOTATIONS.has(key));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/**
 * A pod no CloneSet of ours controls, as the cache keeps it: its identity alone. The informer
 * selects pods by the instance-id label, which anyone who creates pods can set; such a pod is
 * read by no decision (it wakes no CloneSet and testifies for no node), so its labels, spec and
 * status, up to an object's full size, stay out of the controller's memory.
 */
function identityOnly(pod: Pod): Pod {
  const { name, namespace, uid, resourceVersion, deletionTimestamp } = pod.metadata ?? {};
  return {
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: {
      name,
      namespace: shared(namespace),
      uid,
      resourceVersion,
      ...(deletionTimestamp !== undefined ? { deletionTimestamp } : {}),
    },
  };
}

/** What the cache keeps of an orphan's labels, keys and values together (characters). */
export const ORPHAN_LABELS_MAX_CHARS = 4096;

/**
 * A pod no controller owns, as the cache keeps it: its identity, phase and labels, which adoption
 * reads (adoption.ts). Labels past ORPHAN_LABELS_MAX_CHARS are not kept, so such a pod matches no
 * selector and is never adopted: an orphan is anyone's pod until adopted, and its labels are
 * bounded here as a live pod's are by the pods its own workloads make.
 */
function orphanIdentity(pod: Pod): Pod {
  const identity = identityOnly(pod);
  const labels = pod.metadata?.labels ?? {};
  const chars = Object.entries(labels).reduce((n, [k, v]) => n + k.length + v.length, 0);
  return {
    ...identity,
    metadata: { ...identity.metadata, ...(chars <= ORPHAN_LABELS_MAX_CHARS ? { labels: sharedValues(labels) } : {}) },
    ...(pod.status?.phase !== undefined ? { status: { phase: pod.status.phase } } : {}),
  };
}

/**
 * The selector of the CloneSet an owner reference names, when the controller knows it: a
 * CloneSet's selector is immutable (the CRD), so the labels it reads of a pod are known for good.
 * `unknown`: the CloneSets are not listed yet; undefined: listed, and there is no such CloneSet.
 */
export type SelectorOf = (
  namespace: string | undefined,
  owner: OwnerReferenceLike,
) => k8s.V1LabelSelector | 'unknown' | undefined;

/** Tailor's own labels read of an ended pod: the revision it ran (kept in history) and its instance id (its name and claims, taken). */
const ENDED_POD_LABELS: readonly string[] = [LABEL_CONTROLLER_REVISION_HASH, LABEL_INSTANCE_ID];

/**
 * The labels an ended pod keeps. Nothing plans for it any more, but the planner still releases a
 * controlled pod that does not match its CloneSet's selector (planner.ts observe), so the labels
 * that selector names are kept with Tailor's own: never more than the selector's 96 keys (the
 * CRD's bound) and two. A pod whose CloneSet is gone keeps Tailor's own only; one read before the
 * CloneSets were listed keeps them all, as before, until its next change, rather than be released
 * for labels the cache dropped.
 */
function endedLabels(labels: Record<string, string>, selector: ReturnType<SelectorOf>): Record<string, string> {
  if (selector === 'unknown') return sharedValues(labels) ?? {};
  const keys = [
    ...ENDED_POD_LABELS,
    ...Object.keys(selector?.matchLabels ?? {}),
    ...(selector?.matchExpressions ?? []).map((e) => e.key),
  ];
  const kept: Record<string, string> = {};
  for (const key of keys) if (Object.hasOwn(labels, key)) kept[key] = shared(labels[key]!);
  return kept;
}

/**
 * An ended pod (Succeeded or Failed) of a CloneSet of ours, as the cache keeps it: its identity,
 * its controller reference, deletion, phase and the labels still read of it (endedLabels). No
 * decision reads more of it: it is not active (pod-state.ts isActive), holds no node resources and
 * runs no container again; its name, instance id and claims stay taken and its revision in use
 * until it is deleted. A kubelet's or anyone's writes to its spec, status and annotations, up to
 * an object's full size, stay out of the controller's memory (decision 74).
 */
function endedIdentity(pod: Pod, owner: OwnerReferenceLike, selectorOf: SelectorOf | undefined): Pod {
  const identity = identityOnly(pod);
  const selector = selectorOf ? selectorOf(pod.metadata?.namespace, owner) : 'unknown';
  const labels = endedLabels(pod.metadata?.labels ?? {}, selector);
  return {
    ...identity,
    metadata: {
      ...identity.metadata,
      ownerReferences: sharedValue([owner]),
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
    },
    status: { phase: pod.status?.phase },
  };
}

/**
 * The cache's transform: trimPod, with `selectorOf` telling the selector of an ended pod's
 * CloneSet (endedLabels).
 */
export const podTrimmer =
  (selectorOf: SelectorOf, kind: OwnerKind = CLONESET_OWNER): ((pod: Pod) => Pod) =>
  (pod) =>
    trim(pod, selectorOf, kind);

/** The pod as the controller's cache keeps it; an ended one keeps every label (podTrimmer keeps fewer). */
export const trimPod = (pod: Pod, kind: OwnerKind = CLONESET_OWNER): Pod => trim(pod, undefined, kind);

function trim(pod: Pod, selectorOf: SelectorOf | undefined, kind: OwnerKind): Pod {
  const owner = controllerOf(pod, kind);
  if (owner === undefined) return hasNoController(pod) ? orphanIdentity(pod) : identityOnly(pod);
  if (hasEnded(pod)) return endedIdentity(pod, owner, selectorOf);
  return trimControlled(pod);
}

/** A live pod of a CloneSet of ours: what its decisions read. */
function trimControlled(pod: Pod): Pod {
  const { metadata, spec, status } = pod;
  const trimmed: Pod = { apiVersion: pod.apiVersion, kind: pod.kind };
  if (metadata) {
    const { managedFields: _managed, annotations, ...kept } = metadata;
    const read = annotations && readAnnotations(annotations);
    trimmed.metadata = {
      ...kept,
      ...(read ? { annotations: read } : {}),
      ...(kept.namespace !== undefined ? { namespace: shared(kept.namespace) } : {}),
      ...(kept.labels ? { labels: sharedValues(kept.labels) } : {}),
      ...(kept.ownerReferences ? { ownerReferences: sharedValue(kept.ownerReferences) } : {}),
    };
  }
  if (spec) {
    trimmed.spec = {
      containers: spec.containers.map(container),
      ...(spec.initContainers ? { initContainers: spec.initContainers.map(container) } : {}),
      ...(spec.nodeName !== undefined ? { nodeName: shared(spec.nodeName) } : {}),
      ...(spec.readinessGates ? { readinessGates: sharedValue(spec.readinessGates) } : {}),
      ...(spec.resources !== undefined ? { resources: sharedValue(spec.resources) } : {}),
    };
  }
  if (status) {
    trimmed.status = {
      ...(status.phase !== undefined ? { phase: status.phase } : {}),
      ...(status.conditions ? { conditions: status.conditions.map(sharedValue) } : {}),
      ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
      ...(status.resize !== undefined ? { resize: status.resize } : {}),
      ...(status.qosClass !== undefined ? { qosClass: status.qosClass } : {}),
      // Pod-level resources as the kubelet applied them (Kubernetes >= 1.36; not yet in client-node's types).
      ...podLevelStatus(status),
      ...(status.containerStatuses ? { containerStatuses: status.containerStatuses.map(containerStatus) } : {}),
      ...(status.initContainerStatuses
        ? { initContainerStatuses: status.initContainerStatuses.map(containerStatus) }
        : {}),
    };
  }
  return trimmed;
}
