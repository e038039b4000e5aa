// Event handlers: which work-queue keys a cache change wakes. Level-triggered: a handler adds
// keys, never events, and the reconcile reads the cache. Ready-made mappings in the manner of
// controller-runtime's handler package — the object's own key (EnqueueRequestForObject) and its
// controller owner's key (EnqueueRequestForOwner, old and new owner on an update) — plus the
// dispatch that shields the informer from a handler that throws.
// Must not: read the API, hold state, or decide anything about an object beyond its key.
import type { KubeObject } from './kube-client.js';
import type { Logger } from './logger.js';
import { objectKey, type StoreChange } from './store.js';

/**
 * Called for each change to the cache. A periodic resync re-delivers every cached object as
 * onUpdate(obj, obj) (same object, same resourceVersion), as client-go does.
 */
export interface InformerHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

/** What a handler needs of a work queue. */
export interface KeyQueue {
  add(key: string): void;
}

/** The key of `obj`'s controller owner of `kind` ("namespace/ownerName"), if it has one. */
export function ownerKey(obj: KubeObject, kind: string): string | undefined {
  const ref = obj.metadata?.ownerReferences?.find((o) => o.controller && o.kind === kind);
  return ref ? `${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${ref.name}` : undefined;
}

/** Wakes the object's own key on every change. */
export function enqueueObject(queue: KeyQueue): InformerHandler<KubeObject> {
  const add = (obj: KubeObject): void => queue.add(objectKey(obj));
  return { onAdd: add, onUpdate: (_old, obj) => add(obj), onDelete: add };
}

/** Wakes the key of the object's controller owner of `kind`; on an update, of the old owner too. */
export function enqueueOwner(queue: KeyQueue, kind: string): InformerHandler<KubeObject> {
  const add = (...objs: KubeObject[]): void => {
    for (const key of new Set(objs.map((o) => ownerKey(o, kind)))) if (key) queue.add(key);
  };
  return { onAdd: (obj) => add(obj), onUpdate: (old, obj) => add(old, obj), onDelete: (obj) => add(obj) };
}

/** Tells every handler about one change; a handler that throws is logged and the rest still run. */
export function dispatch<T extends KubeObject>(
  handlers: readonly InformerHandler<T>[],
  change: StoreChange<T>,
  logger: Logger,
  informer: string,
): void {
  for (const h of handlers) {
    try {
      if (change.type === 'added') h.onAdd?.(change.obj);
      else if (change.type === 'updated') h.onUpdate?.(change.old, change.obj);
      else h.onDelete?.(change.obj);
    } catch (err) {
      logger.error({ err, informer, change: change.type, key: objectKey(change.obj) }, 'informer handler threw');
    }
  }
}
