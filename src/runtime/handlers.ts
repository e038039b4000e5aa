// Event handlers: which work-queue keys a cache change wakes. Level-triggered: a handler adds
// keys, never events, and the reconcile reads the cache. Ready-made mappings in the manner of
// controller-runtime's handler package — the object's own key (EnqueueRequestForObject) and its
// controller owner's key (EnqueueRequestForOwner, old and new owner on an update) — plus the
// dispatch that shields the informer from a handler that throws.
// Must not: read the API, hold state, or decide anything about an object beyond its key.
import type { KubeObject } from '../api/wire.js';
import type { Logger } from './logger.js';
import { objectKey, type StoreChange } from './store.js';
import type { InformerHandler, KeyQueue } from '../api/handler.js';
import { controllerOf, ownedIndexValue, type OwnerKind } from '../api/owner.js';

// The handler and queue shapes live in src/api/handler.ts, so pure handlers name them without this module.

// Which owner controls an object is one rule, in src/api/owner.ts (the agent reads it too).

/** The key of `obj`'s controller owner of `owner`'s kind ("namespace/ownerName"), if it has one. */
export function ownerKey(obj: KubeObject, owner: OwnerKind): string | undefined {
  const ref = controllerOf(obj, owner);
  return ref ? `${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${ref.name}` : undefined;
}

/** An index function: the objects controlled by an owner of `owner`'s kind, by ownedIndexValue. */
export function byControllerOf(owner: OwnerKind): (obj: KubeObject) => string[] {
  return (obj) => {
    const ref = controllerOf(obj, owner);
    return ref ? [ownedIndexValue(obj.metadata?.namespace, ref.uid)] : [];
  };
}

/** Wakes the object's own key on every change. */
export function enqueueObject(queue: KeyQueue): InformerHandler<KubeObject> {
  const add = (obj: KubeObject): void => queue.add(objectKey(obj));
  return { onAdd: add, onUpdate: (_old, obj) => add(obj), onDelete: add };
}

/** Wakes the key of the object's controller owner of `owner`'s kind; on an update, of the old owner too. */
export function enqueueOwner(queue: KeyQueue, owner: OwnerKind): InformerHandler<KubeObject> {
  const add = (...objs: KubeObject[]): void => {
    for (const key of new Set(objs.map((o) => ownerKey(o, owner)))) if (key) queue.add(key);
  };
  return { onAdd: (obj) => add(obj), onUpdate: (old, obj) => add(old, obj), onDelete: (obj) => add(obj) };
}

/** Wakes the keys `keysOf` gives for the object (an index function); on an update, the old object's too. */
export function enqueueKeys(queue: KeyQueue, keysOf: (obj: KubeObject) => string[]): InformerHandler<KubeObject> {
  const add = (...objs: KubeObject[]): void => {
    for (const key of new Set(objs.flatMap(keysOf))) queue.add(key);
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
