// The shapes an event handler and a reconcile are written against: the cache changes a handler is
// called with, the work queue it adds keys to, and what a reconcile asks for next. Here, not in src/runtime/, so a pure handler (one that only maps a
// change to keys, like workload/pure/refusal-handlers.ts) names them without importing the machinery
// that runs it. Types only. Must not: hold an implementation.

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

/**
 * What reconcile asks for next. `requeueAfterMs > 0`: run again after that delay (backoff reset).
 * `requeue: true`: run again after the key's rate-limited backoff (controller-runtime's Requeue).
 * Nothing: done until the key is added again.
 */
export type ReconcileResult = { requeueAfterMs?: number; requeue?: boolean } | void;
