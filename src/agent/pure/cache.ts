// What the node agent keeps of the objects it caches: only the fields its decisions read, so a
// pod's env, volumes and foreign annotations, and a revision's template beyond its containers'
// images and resources, never sit in the agent's memory (a 1.4 MB template would otherwise be held
// once per revision). Of a pod, what it keeps depends on what reads it: an ended pod, its identity;
// a pod no CloneSet of ours controls, what admission and the node's evidence read; a CloneSet's,
// also what the resize, the restart and the pre-pull read; each field within a bound (POD_BOUNDS,
// decision 74). A field a reader (listed at trimPodForAgent) starts reading must be kept here.
// Pure. Must not: keep anything "just in case", or keep part of a value past its bound as if it
// were the whole (it is dropped where that decides the same, else kept as a marker its reader refuses).
import { workloadControllerOf } from '../../api/owner.js';
import { hasEnded } from '../../api/pod.js';
import { notKeptAnnotation } from '../../api/schemas.js';
import {
  ANNOTATION_RESIZE_REQUEST,
  ANNOTATION_RESIZE_STATUS,
  ANNOTATION_RESTART_REQUEST,
  LABEL_CONTROLLER_REVISION_HASH,
} from '../../api/types.js';
import type { ObjectMeta, Pod } from '../../api/wire.js';
import type { ControllerRevision } from '../../api/revision.js';
import type { LimitRange, ResourceQuota } from './namespace-limits.js';
import { hookChars, notKeptHook, PRESTOP_HOOKS_MAX_CHARS } from './prestop-plan.js';

type Spec = NonNullable<Pod['spec']>;
type Container = Spec['containers'][number];
type ContainerStatus = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];
type OwnerReference = NonNullable<ObjectMeta['ownerReferences']>[number];
type Resources = Container['resources'];

/**
 * What the agent keeps of a pod, field by field, beyond what the API server bounds itself (names,
 * label values, quantities in canonical form).
 */
export const POD_BOUNDS = {
  /**
   * Characters of each of Tailor's annotations, which only Tailor writes (decision 10): a resize
   * request or answer for 128 containers (the CRD's most) stays under 40 KB, a restart request
   * under about 21 KB (its schema). A longer one is kept as its length (notKeptAnnotation): a
   * request is then refused as unreadable, with that reason.
   */
  annotationChars: 64 * 1024,
  /**
   * Characters of an image reference: the CRD's bound on the template images the pre-pull compares
   * them with (agent/revision-templates.ts), so a longer one is different from every such image and is
   * dropped: the comparison decides the same.
   */
  imageChars: 1024,
  /** Characters of a container ID: a restart request names containers by IDs of at most 256 (its schema). */
  containerIdChars: 256,
  /** Image pull secrets a pre-pull tries, in the pod's order (the kubelet tries them all). */
  pullSecrets: 32,
  /** Characters of the pod IP an httpGet hook may go to: an IPv6 address is at most 45. */
  podIPChars: 64,
  /** preStop hooks: PRESTOP_HOOKS_MAX_CHARS of a pod's hooks in all (prestop-plan.ts). */
  preStopChars: PRESTOP_HOOKS_MAX_CHARS,
} as const;

const CPU_AND_MEMORY = ['cpu', 'memory'];

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

/** A string kept only within its bound; one past it is dropped (where dropping decides the same). */
const within = (value: string | undefined, bound: number): string | undefined =>
  value !== undefined && value.length <= bound ? value : undefined;

/** name, namespace, uid, resourceVersion, owners and deletion: a revision's, quota's or LimitRange's identity. */
const trimMeta = (meta: ObjectMeta | undefined): ObjectMeta | undefined =>
  meta && pick(meta, ['name', 'namespace', 'uid', 'resourceVersion', 'ownerReferences', 'deletionTimestamp']);

/** A pod's identity: what its key, its events and the reconciler's "of this node" read. */
function podIdentity(pod: Pod, owner: OwnerReference | undefined): Pod {
  const meta = pod.metadata ?? {};
  return {
    ...pick(pod, ['apiVersion', 'kind']),
    metadata: {
      ...pick(meta, ['name', 'namespace', 'uid', 'resourceVersion', 'deletionTimestamp']),
      // The only owner read: the CloneSet controller's (authorize.ts workloadOwner).
      ...(owner ? { ownerReferences: [pick(owner, ['apiVersion', 'kind', 'name', 'uid', 'controller'])] } : {}),
    },
    ...(pod.spec?.nodeName !== undefined ? { spec: { nodeName: pod.spec.nodeName, containers: [] } } : {}),
  };
}

/** cpu and memory of requests and limits, the only resources the agent reads; absent stays absent. */
function cpuAndMemory(resources: Resources): Resources {
  if (resources === undefined) return undefined;
  const requests = pickEntries(resources.requests, CPU_AND_MEMORY);
  const limits = pickEntries(resources.limits, CPU_AND_MEMORY);
  return { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
}

/** Of any live pod's container: what admission adds up (its cpu/memory, whether it is a sidecar). */
function counted(c: Container): Container {
  const out: Container = pick(c, ['name', 'restartPolicy']);
  const resources = cpuAndMemory(c.resources);
  if (resources !== undefined) out.resources = resources;
  return out;
}

/** Of a status: whether it runs and whether its kubelet reports resources (resize/backend.ts evidence). */
function trimStatus(s: ContainerStatus, owned: boolean): ContainerStatus {
  const out = { name: s.name } as ContainerStatus;
  if (s.state?.running !== undefined) out.state = { running: {} };
  // Only that the kubelet reports them is read, never the values.
  if (s.resources !== undefined) out.resources = {};
  // containerID: the restart in place names the container to stop by it (agent/restart.ts); one past
  // the bound is never named by a request, and dropped.
  const containerID = owned ? within(s.containerID, POD_BOUNDS.containerIdChars) : undefined;
  if (containerID !== undefined) out.containerID = containerID;
  return out;
}

/** Tailor's annotations, each within its bound (notKeptAnnotation past it). */
function tailorAnnotations(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [ANNOTATION_RESIZE_REQUEST, ANNOTATION_RESIZE_STATUS, ANNOTATION_RESTART_REQUEST]) {
    const value = annotations?.[name];
    if (value === undefined) continue;
    const bound = POD_BOUNDS.annotationChars;
    out[name] = value.length <= bound ? value : notKeptAnnotation(value.length, bound);
  }
  return out;
}

/** What is left of a pod's preStop budget as its containers are trimmed, in spec order. */
interface HookBudget {
  left: number;
}

/**
 * A container's preStop hook within what is left of the pod's bound (notKeptHook past it), and the
 * one named port an httpGet hook may go to (the restart in place runs the hook: prestop-plan.ts).
 */
function preStopOf(c: Container, hooks: HookBudget): Pick<Container, 'lifecycle' | 'ports'> {
  const preStop = c.lifecycle?.preStop;
  if (preStop === undefined) return {};
  const chars = hookChars(preStop);
  if (chars > hooks.left) return { lifecycle: { preStop: notKeptHook(chars, POD_BOUNDS.preStopChars) } };
  hooks.left -= chars;
  const port = preStop.httpGet?.port;
  const named = typeof port === 'string' ? c.ports?.find((p) => p.name === port) : undefined;
  return {
    lifecycle: { preStop },
    ...(named !== undefined ? { ports: [{ name: named.name, containerPort: named.containerPort }] } : {}),
  };
}

/**
 * Of a CloneSet pod's container, besides what admission counts: its image (the pre-pull compares
 * it with the newest revision's), its resize policy (authorize.ts), its preStop hook (preStopOf).
 */
function ownedContainer(c: Container, hooks: HookBudget): Container {
  const out: Container = { ...counted(c), ...preStopOf(c, hooks) };
  const image = within(c.image, POD_BOUNDS.imageChars);
  if (image !== undefined) out.image = image;
  const resizePolicy = c.resizePolicy?.filter((p) => CPU_AND_MEMORY.includes(p.resourceName));
  if (resizePolicy !== undefined) out.resizePolicy = resizePolicy;
  return out;
}

/** The pod's image pull secrets, the first POD_BOUNDS.pullSecrets of them. */
const pullSecrets = (spec: Spec): Pick<Spec, 'imagePullSecrets'> =>
  spec.imagePullSecrets ? { imagePullSecrets: spec.imagePullSecrets.slice(0, POD_BOUNDS.pullSecrets) } : {};

/** What any live pod on the node keeps: what admission and the node's evidence read. */
function livePod(pod: Pod, owner: OwnerReference | undefined, container: (c: Container) => Container): Pod {
  const out = podIdentity(pod, owner);
  const spec = pod.spec;
  if (spec) {
    const overhead = pickEntries(spec.overhead, CPU_AND_MEMORY);
    out.spec = {
      ...pick(spec, ['nodeName']),
      ...(overhead ? { overhead } : {}),
      containers: spec.containers.map(container),
      ...(spec.initContainers ? { initContainers: spec.initContainers.map(container) } : {}),
    };
  }
  if (pod.status) {
    const owned = owner !== undefined;
    out.status = pick(pod.status, ['phase']);
    if (pod.status.containerStatuses)
      out.status.containerStatuses = pod.status.containerStatuses.map((s) => trimStatus(s, owned));
    if (pod.status.initContainerStatuses)
      out.status.initContainerStatuses = pod.status.initContainerStatuses.map((s) => trimStatus(s, owned));
  }
  return out;
}

/** A CloneSet pod's revision label and Tailor's annotations, on top of its identity. */
function ownedMeta(pod: Pod, meta: ObjectMeta | undefined): ObjectMeta {
  const revision = pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH];
  const annotations = tailorAnnotations(pod.metadata?.annotations);
  return {
    ...meta,
    ...(revision !== undefined ? { labels: { [LABEL_CONTROLLER_REVISION_HASH]: revision } } : {}),
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
}

/** A CloneSet pod's grace period, pod-level resources and pull secrets, on top of what any pod keeps. */
function ownedSpec(spec: Spec, kept: Spec): Spec {
  const resources = cpuAndMemory(spec.resources);
  return {
    ...kept,
    ...pick(spec, ['terminationGracePeriodSeconds']),
    ...(resources !== undefined ? { resources } : {}),
    ...pullSecrets(spec),
  };
}

/** A CloneSet pod's QoS class and IP (an httpGet preStop hook without a host goes to it: prestop-plan.ts). */
function ownedStatus(status: NonNullable<Pod['status']>, kept: NonNullable<Pod['status']>): NonNullable<Pod['status']> {
  const podIP = within(status.podIP, POD_BOUNDS.podIPChars);
  return { ...kept, ...pick(status, ['qosClass']), ...(podIP !== undefined ? { podIP } : {}) };
}

/**
 * A CloneSet pod adds what the resize, the restart in place and the pre-pull read of it: its
 * revision label and Tailor's annotations; pod-level resources, grace period and pull secrets;
 * its containers' images, resize policies and preStop hooks; its QoS class and IP.
 */
function cloneSetPod(pod: Pod, owner: OwnerReference): Pod {
  const hooks: HookBudget = { left: POD_BOUNDS.preStopChars };
  const out = livePod(pod, owner, (c) => ownedContainer(c, hooks));
  out.metadata = ownedMeta(pod, out.metadata);
  if (pod.spec && out.spec) out.spec = ownedSpec(pod.spec, out.spec);
  if (pod.status && out.status) out.status = ownedStatus(pod.status, out.status);
  return out;
}

/**
 * A pod as the agent caches it. Its readers: decide.ts and agent/reconciler.ts (annotations, labels,
 * owner, phase, node), admission.ts (every container's resources, overhead), authorize.ts (owner
 * references, revision containers' resources, resize and restart policies, QoS class), order.ts
 * (pod-level resources), resize/backend.ts (which containers run and report resources),
 * prepull-plan.ts (images, pull secrets, revision numbers), agent/restart.ts (the restart request,
 * running container IDs, the grace period), prestop-plan.ts (containers' preStop hooks, the named
 * port an httpGet hook uses, the pod IP), namespace-limits.ts (a quota's hard amounts, a
 * LimitRange's items), and the event recorder (name, namespace, uid, resourceVersion, kind).
 * An ended pod (Succeeded or Failed) is read by none of them beyond its identity, owner and phase:
 * it holds nothing on the node and runs nothing again (decision 74). A pod no CloneSet of ours
 * controls is read by admission and the node's evidence only.
 */
export function trimPodForAgent(pod: Pod): Pod {
  const owner = workloadControllerOf(pod);
  if (hasEnded(pod)) return { ...podIdentity(pod, owner), status: { phase: pod.status?.phase } };
  return owner ? cloneSetPod(pod, owner) : livePod(pod, undefined, counted);
}

type TemplateContainer = NonNullable<
  NonNullable<NonNullable<NonNullable<ControllerRevision['data']>['template']>['spec']>['containers']
>[number];

/**
 * A revision's container as the agent keeps it: name, image (the CRD bounds both and their count)
 * and only the cpu/memory of its resources and resize policy, the only ones the agent reads, so a
 * template's other resource names cannot grow every agent's cache.
 */
const trimTemplateContainer = (c: TemplateContainer): TemplateContainer => {
  const out: TemplateContainer = pick(c, ['name', 'restartPolicy']);
  // The pre-pull pulls it: one past the CRD's bound is a revision the CRD never checked (a forged one).
  const image = within(c.image, POD_BOUNDS.imageChars);
  if (image !== undefined) out.image = image;
  if (c.resources !== undefined) {
    const requests = pickEntries(c.resources.requests, CPU_AND_MEMORY);
    const limits = pickEntries(c.resources.limits, CPU_AND_MEMORY);
    out.resources = { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
  }
  const resizePolicy = c.resizePolicy?.filter((p) => CPU_AND_MEMORY.includes(p.resourceName));
  if (resizePolicy !== undefined) out.resizePolicy = resizePolicy;
  return out;
};

/** A fetched ControllerRevision as the agent keeps it: its owner and its containers' resources and policies. */
export function trimRevisionForAgent(revision: ControllerRevision): ControllerRevision {
  const spec = revision.data?.template?.spec;
  const metadata = trimMeta(revision.metadata);
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
  const metadata = trimMeta(quota.metadata);
  return { ...(metadata ? { metadata } : {}), ...(quota.spec?.hard ? { spec: { hard: quota.spec.hard } } : {}) };
}

/** A LimitRange as the agent caches it: its items' type and cpu/memory bounds (defaults apply only at pod creation). */
export function trimLimitRangeForAgent(range: LimitRange): LimitRange {
  const metadata = trimMeta(range.metadata);
  return {
    ...(metadata ? { metadata } : {}),
    spec: {
      limits: (range.spec?.limits ?? []).map((item) => pick(item, ['type', 'min', 'max', 'maxLimitRequestRatio'])),
    },
  };
}
