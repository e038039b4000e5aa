// The writes of one container batch of an in-place update (decision 0021): its images (a pod
// spec patch), its resize (pods/resize, or the node agent's request), its restart request (the
// running containers it restarts, by ID) and the inplace-update-state annotation with the batch
// recorded and the work of later batches kept under Kruise's names. plan.ts decides which batch
// goes and when; this module only spells out what that batch writes.
// Pure. Must not: perform I/O, read clocks, or decide when a batch goes (plan.ts does).
import type * as k8s from '@kubernetes/client-node';
import {
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_RESIZE_REQUEST,
  ANNOTATION_RESTART_REQUEST,
  type BatchResources,
  type ContainerRefMetadata,
  type InPlaceUpdateState,
} from '../../api/types.js';
import type { Pod, Wire } from '../../api/wire.js';
import { encodeResizeRequest, readResizeRequest } from '../../resize/agent-protocol.js';
import type { Backend } from '../../resize/backend.js';

export type PodPatch = Record<string, unknown>;

const listed = <T>(list: string, items: T[]): Record<string, T[]> => (items.length > 0 ? { [list]: items } : {});

/** Per-container entries of a spec patch, the pod's native sidecars under initContainers; lists left empty are left out. */
function byContainerList<T extends { name: string }>(pod: Pod, entries: T[]): Record<string, T[]> {
  const sidecars = new Set((pod.spec?.initContainers ?? []).map((c) => c.name));
  return {
    ...listed(
      'containers',
      entries.filter((c) => !sidecars.has(c.name)),
    ),
    ...listed(
      'initContainers',
      entries.filter((c) => sidecars.has(c.name)),
    ),
  };
}

export type Resources = Wire<k8s.V1ResourceRequirements>;
export type Container = Wire<k8s.V1Container>;

/** Containers and native sidecars by name (names are unique across both lists in a pod). */
export function containerNamed(pod: Pod, name: string): Container | undefined {
  return pod.spec?.containers?.find((c) => c.name === name) ?? pod.spec?.initContainers?.find((c) => c.name === name);
}

function pickResizable(values: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(values ?? {}).filter(([k]) => k === 'cpu' || k === 'memory'));
}

export const statusesOf = (pod: Pod): ContainerStatusOf[] => [
  ...(pod.status?.containerStatuses ?? []),
  ...(pod.status?.initContainerStatuses ?? []),
];

/**
 * What an update does to each container, the unit container priorities order (decision 0021):
 * new images, resizes, and restarts (with the changed metadata that restarts each). A container
 * whose spec already holds its target image (an update taken back between two batches) gets no
 * image change.
 */
export interface ContainerWork {
  images: Record<string, string>;
  resources: Record<string, BatchResources>;
  restarts: Record<string, ContainerRefMetadata>;
}

/** Every container the work touches, once. */
export const workNames = (work: ContainerWork): string[] => [
  ...new Set([...Object.keys(work.images), ...Object.keys(work.resources), ...Object.keys(work.restarts)]),
];

export const pick = <T>(values: Readonly<Record<string, T>>, names: readonly string[]): Record<string, T> =>
  Object.fromEntries(names.filter((name) => name in values).map((name) => [name, values[name]!]));

/** Sets `key` of `state` to `value`, or removes it when empty. */
function setOrDelete<K extends 'nextContainerImages' | 'nextContainerResources' | 'nextContainerRefMetadata'>(
  state: InPlaceUpdateState,
  key: K,
  value: NonNullable<InPlaceUpdateState[K]>,
): void {
  if (Object.keys(value).length > 0) state[key] = value;
  else delete state[key];
}

/**
 * The writes of one container batch: its images (spec patch), its resize (pods/resize spec, or
 * the node agent's request, which names every container resized so far so the agent keeps
 * applying them), its restart request (the running containers it restarts, by ID), and the update
 * state with the batch recorded and the work of `later` batches still to come, under Kruise's
 * names (nextContainerImages, nextContainerResources, nextContainerRefMetadata).
 */
export function batchWrites(
  pod: Pod,
  work: ContainerWork,
  { batch, later }: { batch: readonly string[]; later: readonly string[][] },
  base: InPlaceUpdateState,
  { via, timestamp }: { via: Backend | undefined; timestamp: string },
): { annotations: Record<string, string>; spec?: PodPatch; resize: PodPatch } {
  const statuses = statusesOf(pod).filter((s) => batch.includes(s.name));
  // Only a running container is restarted; one that has not started yet reads the new env when it does.
  const toStop = runningContainerIds(
    statuses,
    batch.filter((name) => name in work.restarts),
  );
  const images = pick(work.images, batch);
  const resources = pick(work.resources, batch);
  const changed: Record<string, string[]> = { ...base.changed };
  for (const name of batch) {
    const fields = [
      ...(name in images ? ['image'] : []),
      ...(name in toStop ? ['restart'] : []),
      ...(name in resources ? ['resources'] : []),
    ];
    if (fields.length > 0) changed[name] = fields;
  }
  const rest = later.flat();
  const record = [
    ...(base.containerBatchesRecord ?? []),
    ...(batch.length > 0 ? [{ timestamp, containers: [...batch] }] : []),
  ];
  const state: InPlaceUpdateState = {
    ...base,
    lastContainerImageIDs: {
      ...base.lastContainerImageIDs,
      ...Object.fromEntries(statuses.filter((s) => s.name in images).map((s) => [s.name, s.imageID ?? ''])),
    },
    lastRestartCounts: {
      ...base.lastRestartCounts,
      ...Object.fromEntries(
        statuses.filter((s) => s.name in images || s.name in toStop).map((s) => [s.name, s.restartCount ?? 0]),
      ),
    },
    changed,
  };
  if (record.length > 0) state.containerBatchesRecord = record;
  setOrDelete(state, 'nextContainerImages', pick(work.images, rest));
  setOrDelete(state, 'nextContainerResources', pick(work.resources, rest));
  setOrDelete(state, 'nextContainerRefMetadata', pick(work.restarts, rest));
  const annotations: Record<string, string> = {
    [ANNOTATION_INPLACE_UPDATE_STATE]: JSON.stringify(state),
    ...restartRequest(toStop, base.revision),
  };
  const resized = Object.entries(resources).map(([name, r]) => ({ name, resources: withRequests(r) }));
  if (resized.length > 0 && via === 'agent') {
    // The node's kubelet cannot resize: the request rides in the same pod patch, for the agent.
    const before = readResizeRequest(pod);
    const earlier = before.ok && before.value.revision === base.revision ? before.value.containers : {};
    annotations[ANNOTATION_RESIZE_REQUEST] = encodeResizeRequest({
      revision: base.revision,
      containers: { ...earlier, ...Object.fromEntries(resized.map((c) => [c.name, c.resources])) },
    });
  }
  const resize = via === 'agent' ? {} : byContainerList(pod, resized);
  return { annotations, ...imageSpec(pod, Object.keys(images), images), resize };
}

/**
 * A pod's missing request was defaulted from its limit at creation; a resize does not default,
 * so send the request explicitly or a limit-only template would silently change the QoS class.
 */
export function withRequests<R extends Resources>(r: R): R {
  return { ...r, requests: { ...pickResizable(r.limits), ...(r.requests ?? {}) } };
}

/** The pod spec patch that sets these containers' images, sidecars under initContainers. */
function imageSpec(pod: Pod, names: readonly string[], images: Readonly<Record<string, string>>): { spec?: PodPatch } {
  const spec = byContainerList(
    pod,
    names.map((name) => ({ name, image: images[name] ?? '' })),
  );
  return Object.keys(spec).length > 0 ? { spec } : {};
}

export type ContainerStatusOf = NonNullable<NonNullable<Pod['status']>['containerStatuses']>[number];

/** Of `names`, the containers running now, by the ID of the running container. */
function runningContainerIds(statuses: readonly ContainerStatusOf[], names: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    names.flatMap((name) => {
      const s = statuses.find((c) => c.name === name);
      return s?.state?.running !== undefined && s.containerID ? [[name, s.containerID]] : [];
    }),
  );
}

/** The request that has the node agent stop each of these running containers once (none when there are none). */
function restartRequest(containers: Record<string, string>, revision: string): Record<string, string> {
  if (Object.keys(containers).length === 0) return {};
  return { [ANNOTATION_RESTART_REQUEST]: JSON.stringify({ revision, containers }) };
}
