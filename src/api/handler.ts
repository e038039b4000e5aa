// The two shapes an event handler is written against: the cache changes it is called with and the
// work queue it adds keys to. Here, not in src/runtime/, so a pure handler (one that only maps a
// change to keys, like cloneset/pure/refusal-handlers.ts) names them without importing the machinery
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
