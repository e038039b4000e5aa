// Which CloneSet keys a change of the controller's caches wakes, and what the change tells the
// expectations (docs/architecture.md §3.1): a CloneSet's own change (not a status-only write,
// which must not start the next round by itself), and a pod's add, update and delete for its
// controlling CloneSet, and an orphan's for the workloads whose selector matches it. Built on the runtime's owner mapping (runtime/handlers.ts); the wakers
// for refused CloneSets are refusal-handlers.ts. Must not: read the API, decide anything about a
// CloneSet, or wake a key for an object that is not a CloneSet's.
import type { InformerHandler, KeyQueue } from '../api/handler.js';
import type { KubeObject, Pod, WireCloneSet } from '../api/wire.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.js';
import { ownerKey } from '../runtime/handlers.js';
import { objectKey } from '../runtime/store.js';
import { hasNoController, type OwnerKind } from '../api/owner.js';

/**
 * True when an update changed the status and nothing a reconcile reacts to: spec changes bump
 * metadata.generation; labels, annotations, finalizers and deletion are compared. A resync
 * (same resourceVersion) is not a status change.
 */
export function onlyStatusChanged(old: KubeObject, next: KubeObject): boolean {
  const a = old.metadata;
  const b = next.metadata;
  if (a?.resourceVersion === b?.resourceVersion) return false;
  const watched = (m: typeof a): string =>
    JSON.stringify([
      m?.generation,
      m?.labels ?? {},
      m?.annotations ?? {},
      m?.finalizers ?? [],
      m?.deletionTimestamp ?? null,
    ]);
  return watched(a) === watched(b);
}

/**
 * A CloneSet's own changes wake its key, except a status-only write (ours, mostly), unless a
 * round waits to see it (it would otherwise sleep out its 200 ms cache-lag poll).
 */
export function cloneSetHandler(
  queue: KeyQueue,
  podExpectations: Pick<ResourceVersionExpectations, 'observe'>,
): InformerHandler<WireCloneSet> {
  return {
    onAdd: (cs) => queue.add(objectKey(cs)),
    onUpdate: (old, cs) => {
      const awaitedRoundSeesIt = podExpectations.observe(cs.metadata?.uid ?? '', cs.metadata?.resourceVersion ?? '');
      if (awaitedRoundSeesIt || !onlyStatusChanged(old, cs)) queue.add(objectKey(cs));
    },
    onDelete: (cs) => queue.add(objectKey(cs)),
  };
}

/** The window of a CloneSet's pod changes grows by this much per pod (decision 33). */
export const POD_EVENT_WINDOW_PER_POD_MS = 0.05;
/** ... up to this: 1,000 pods and more. */
export const POD_EVENT_WINDOW_MAX_MS = 50;

/**
 * How long a pod's change waits for the changes that follow it before its CloneSet's round. A
 * round reads every pod of the CloneSet, so a big CloneSet gathers more changes into each round:
 * nothing to speak of at 10 pods (0.5 ms), 50 ms at 1,000.
 */
export const podEventWindowMs = (pods: number): number =>
  Math.min(POD_EVENT_WINDOW_MAX_MS, pods * POD_EVENT_WINDOW_PER_POD_MS);

/**
 * A pod's changes wake its controlling CloneSet (old and new owner on an update) and tell the
 * expectations what the cache has now seen: a creation, a deletion (a pod that starts terminating
 * counts as deleted for scale decisions), and the pod's resourceVersion.
 */
export function podHandler(
  queue: KeyQueue,
  scale: Pick<ScaleExpectations, 'observeCreation' | 'observeDeletion'>,
  resourceVersions: Pick<ResourceVersionExpectations, 'observe' | 'delete'>,
  owner: OwnerKind,
): InformerHandler<Pod> {
  const ownerOf = (pod: Pod): string | undefined => ownerKey(pod, owner);
  return {
    onAdd: (pod) => {
      const key = ownerOf(pod);
      if (!key) return;
      scale.observeCreation(key, pod.metadata?.name ?? '');
      queue.add(key);
    },
    onUpdate: (oldPod, pod) => {
      resourceVersions.observe(pod.metadata?.uid ?? '', pod.metadata?.resourceVersion ?? '');
      const key = ownerOf(pod);
      if (key && pod.metadata?.deletionTimestamp && !oldPod.metadata?.deletionTimestamp)
        scale.observeDeletion(key, pod.metadata.name ?? '');
      for (const owner of new Set([ownerOf(oldPod), key])) if (owner) queue.add(owner);
    },
    onDelete: (pod) => {
      resourceVersions.delete(pod.metadata?.uid ?? '');
      const key = ownerOf(pod);
      if (!key) return;
      scale.observeDeletion(key, pod.metadata?.name ?? '');
      queue.add(key);
    },
  };
}

/** The index of the pods no controller owns, by namespace: the orphans a workload may adopt (pure/adoption.ts). */
export const ORPHAN_INDEX = 'orphans';

export const byOrphanNamespace = (pod: Pod): string[] => (hasNoController(pod) ? [pod.metadata?.namespace ?? ''] : []);

/**
 * An orphan's change wakes the workloads of its namespace whose selector matches its labels (they
 * may adopt it); `matching` names them. A pod with a controller is podHandler's.
 */
export function orphanHandler(queue: KeyQueue, matching: (pod: Pod) => string[]): InformerHandler<Pod> {
  const wake = (pod: Pod): void => {
    if (hasNoController(pod)) for (const key of matching(pod)) queue.add(key);
  };
  return { onAdd: wake, onUpdate: (_old, pod) => wake(pod), onDelete: () => undefined };
}

/** The index of the claims labelled with a workload's name (its kind's revision label), by namespace/name. */
export const WORKLOAD_LABEL_INDEX = 'workloadLabel';

export const byWorkloadLabel =
  (label: string) =>
  (claim: KubeObject): string[] => {
    const name = claim.metadata?.labels?.[label];
    return name ? [`${claim.metadata?.namespace ?? ''}/${name}`] : [];
  };
