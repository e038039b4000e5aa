// What the node agent keeps of the objects it caches: only the fields its decisions read, so a
// pod's env, volumes and foreign annotations, and a revision's template beyond its containers'
// images and resources, never sit in the agent's memory (a 1.4 MB template would otherwise be held
// once per revision). A field a reader (listed at trimPodForAgent) starts reading must be kept here.
// Pure. Must not: keep anything "just in case".
import {
  ANNOTATION_RESIZE_REQUEST,
  ANNOTATION_RESIZE_STATUS,
  ANNOTATION_RESTART_REQUEST,
  LABEL_CONTROLLER_REVISION_HASH,
} from '../api/types.js';
import type { KubeObject, ObjectMeta, Pod } from '../api/wire.js';
import type { ControllerRevision } from './authorize.js';
import type { LimitRange, ResourceQuota } from './namespace-limits.js';

type Container = NonNullable<NonNullable<Pod['spec']>['containers']>[number];
type ContainerStatus = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];

const pick = <T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> => {
  const out = {} as Pick<T, K>;
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return out;
};

const pickEntries = (
  from: Readonly<Record<string, string>> | undefined,
  keys: readonly string[],
): Record<string, string> | undefined => {
  if (from === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k];
  return Object.keys(out).length > 0 ? out : undefined;
};

/** name, namespace, uid, resourceVersion, owners, deletion, and the given labels and annotations. */
function trimMeta(
  meta: ObjectMeta | undefined,
  labels: readonly string[],
  annotations: readonly string[],
): ObjectMeta | undefined {
  if (meta === undefined) return undefined;
  const out: ObjectMeta = pick(meta, [
    'name',
    'namespace',
    'uid',
    'resourceVersion',
    'ownerReferences',
    'deletionTimestamp',
  ]);
  const keptLabels = pickEntries(meta.labels, labels);
  const keptAnnotations = pickEntries(meta.annotations, annotations);
  if (keptLabels) out.labels = keptLabels;
  if (keptAnnotations) out.annotations = keptAnnotations;
  return out;
}

// image: the pre-pull compares it with the newest revision's (prepull-plan.ts). The preStop hook
// and the named ports it may refer to: the restart in place runs the hook (prestop-plan.ts); the
// postStart hook and unnamed ports are not read.
const trimContainer = (c: Container): Container => {
  const out: Container = pick(c, ['name', 'image', 'resources', 'resizePolicy', 'restartPolicy']);
  const preStop = c.lifecycle?.preStop;
  if (preStop !== undefined) out.lifecycle = { preStop };
  const named = (c.ports ?? [])
    .filter((p) => p.name !== undefined)
    .map((p) => ({ name: p.name, containerPort: p.containerPort }));
  if (preStop?.httpGet !== undefined && named.length > 0) out.ports = named;
  return out;
};

/** Whether a container runs, and whether its kubelet reports its resources (resize/backend.ts evidence). */
const trimStatus = (s: ContainerStatus): ContainerStatus => {
  // containerID: the restart in place names the container to stop by it (restart.ts).
  const out = pick(s, ['name', 'resources', 'containerID']) as ContainerStatus;
  if (s.state?.running !== undefined) out.state = { running: {} };
  return out;
};

/**
 * A pod as the agent caches it. Its readers: decide.ts and reconciler.ts (annotations, labels,
 * owner, phase, node), admission.ts (every container's resources, overhead), authorize.ts (owner
 * references, revision containers' resources, resize and restart policies, QoS class), order.ts
 * (pod-level resources), resize/backend.ts (which containers run and report resources),
 * prepull-plan.ts (images, pull secrets, revision numbers), restart.ts (the restart request,
 * running container IDs, the grace period), prestop-plan.ts (containers' preStop hooks, the named
 * ports an httpGet hook may use, the pod IP), namespace-limits.ts (a quota's hard amounts, a
 * LimitRange's items), and the event recorder (name, namespace, uid, resourceVersion, kind).
 */
export function trimPodForAgent(pod: Pod): Pod {
  const out: Pod = pick(pod, ['apiVersion', 'kind']);
  // restart-request: the agent's side of decision 15 (restart in place) reads it.
  const meta = trimMeta(
    pod.metadata,
    [LABEL_CONTROLLER_REVISION_HASH],
    [ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS, ANNOTATION_RESTART_REQUEST],
  );
  if (meta) out.metadata = meta;
  if (pod.spec) {
    out.spec = {
      ...pick(pod.spec, ['nodeName', 'overhead', 'resources', 'terminationGracePeriodSeconds', 'imagePullSecrets']),
      containers: pod.spec.containers.map(trimContainer),
      ...(pod.spec.initContainers ? { initContainers: pod.spec.initContainers.map(trimContainer) } : {}),
    };
  }
  if (pod.status) {
    // podIP: an httpGet preStop hook without a host goes to it (prestop-plan.ts).
    out.status = pick(pod.status, ['phase', 'qosClass', 'podIP']);
    if (pod.status.containerStatuses) out.status.containerStatuses = pod.status.containerStatuses.map(trimStatus);
    if (pod.status.initContainerStatuses)
      out.status.initContainerStatuses = pod.status.initContainerStatuses.map(trimStatus);
  }
  return out;
}

type TemplateContainer = NonNullable<
  NonNullable<NonNullable<NonNullable<ControllerRevision['data']>['template']>['spec']>['containers']
>[number];

const CPU_AND_MEMORY = ['cpu', 'memory'];

/**
 * A revision's container as the agent keeps it: name, image (the CRD bounds both and their count)
 * and only the cpu/memory of its resources and resize policy, the only ones the agent reads, so a
 * template's other resource names cannot grow every agent's cache.
 */
const trimTemplateContainer = (c: TemplateContainer): TemplateContainer => {
  const out: TemplateContainer = pick(c, ['name', 'image', 'restartPolicy']);
  if (c.resources !== undefined) {
    const requests = pickEntries(c.resources.requests, CPU_AND_MEMORY);
    const limits = pickEntries(c.resources.limits, CPU_AND_MEMORY);
    out.resources = { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
  }
  const resizePolicy = c.resizePolicy?.filter((p) => CPU_AND_MEMORY.includes(p.resourceName));
  if (resizePolicy !== undefined) out.resizePolicy = resizePolicy;
  return out;
};

/**
 * A ControllerRevision as the agent's informer keeps it: identity, owner and number, no template.
 * The containers of the revisions this node's pods need are fetched when needed (revision-templates.ts).
 */
export function trimRevisionIdentity(revision: ControllerRevision & KubeObject): ControllerRevision & KubeObject {
  const metadata = trimMeta(revision.metadata, [], []);
  return { ...pick(revision, ['apiVersion', 'kind', 'revision']), ...(metadata ? { metadata } : {}) };
}

/** A fetched ControllerRevision as the agent keeps it: its owner and its containers' resources and policies. */
export function trimRevisionForAgent(revision: ControllerRevision & KubeObject): ControllerRevision & KubeObject {
  const spec = revision.data?.template?.spec;
  const metadata = trimMeta(revision.metadata, [], []);
  return {
    ...pick(revision, ['apiVersion', 'kind', 'revision']),
    ...(metadata ? { metadata } : {}),
    data: {
      template: {
        spec: {
          containers: (spec?.containers ?? []).map(trimTemplateContainer),
          ...(spec?.initContainers ? { initContainers: spec.initContainers.map(trimTemplateContainer) } : {}),
        },
      },
    },
  };
}

/** A ResourceQuota as the agent caches it: its name and hard amounts (the charged usage changes often and is not read). */
export function trimQuotaForAgent(quota: ResourceQuota): ResourceQuota {
  const metadata = trimMeta(quota.metadata, [], []);
  return { ...(metadata ? { metadata } : {}), ...(quota.spec?.hard ? { spec: { hard: quota.spec.hard } } : {}) };
}

/** A LimitRange as the agent caches it: its items' type and cpu/memory bounds (defaults apply only at pod creation). */
export function trimLimitRangeForAgent(range: LimitRange): LimitRange {
  const metadata = trimMeta(range.metadata, [], []);
  return {
    ...(metadata ? { metadata } : {}),
    spec: {
      limits: (range.spec?.limits ?? []).map((item) => pick(item, ['type', 'min', 'max', 'maxLimitRequestRatio'])),
    },
  };
}
