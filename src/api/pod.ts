// How every layer reads the same few facts off a pod: which of its containers a resize can touch
// (native sidecars, then regular containers), one of its conditions by type, and the names of its
// QoS classes. One home, so the controller, the node agent and the CLI cannot drift apart on what
// a "resizable container" is. Pure: wire types in, values out. Must not: do I/O, or decide what a
// fact means for a rollout or a resize.
import type * as k8s from '@kubernetes/client-node';
import type { Pod, Wire } from './wire.js';
import { LABEL_CONTROLLER_REVISION_HASH } from './types.js';

/** A pod's QoS class as Kubernetes names it (pod.status.qosClass; the kubelet's cgroup parent). */
export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** The container lists of a pod spec or of a revision's template spec. */
export interface ContainerLists<C extends { restartPolicy?: string }> {
  readonly initContainers?: readonly C[] | undefined;
  readonly containers?: readonly C[] | undefined;
}

/** A native sidecar: an init container with `restartPolicy: Always`, which keeps running beside the app. */
export const isSidecar = (c: { restartPolicy?: string }): boolean => c.restartPolicy === 'Always';

/** The native sidecars of a pod spec, in spec order. */
export function sidecarContainers<C extends { restartPolicy?: string }>(spec: ContainerLists<C> | undefined): C[] {
  return (spec?.initContainers ?? []).filter(isSidecar);
}

/**
 * The containers a resize can touch, sidecars first, then regular containers (the kubelet's
 * order); init containers that run to completion are never resized and are left out.
 */
export function resizableContainers<C extends { restartPolicy?: string }>(spec: ContainerLists<C> | undefined): C[] {
  return [...sidecarContainers(spec), ...(spec?.containers ?? [])];
}

/** A pod condition of the given type (Ready, PodScheduled, apps.tailor.dev/InPlaceUpdateReady, …), if the pod has it. */
export function podCondition(pod: Pod, type: string): Wire<k8s.V1PodCondition> | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/**
 * Finished: phase Succeeded or Failed. No container of such a pod runs again, and it holds no node
 * resources; the caches keep its identity only (docs/decisions/0074-ended-pods-cached-as-identity.md).
 */
/** The revision a pod runs, by its controller-revision-hash label ('' when it has none). */
export const podRevision = (pod: Pod): string => pod.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '';

export const hasEnded = (pod: Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** Neither terminating nor finished (Succeeded or Failed): a pod that still runs, or will. */
export const isLivePod = (pod: Pod): boolean => !pod.metadata?.deletionTimestamp && !hasEnded(pod);
