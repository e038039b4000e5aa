// The informer's cache: objects by key ("namespace/name") with named indexes kept current on
// every write. Writes return the change they made (added, updated, deleted, or nothing) so the
// informer can tell the handlers; `replace` applies a full list as the set of changes from the
// old contents to the new, so a relist delivers exactly what was missed.
// Must not: do I/O, call handlers, or interpret objects beyond the index functions it is given.
import type { KubeObject } from '../api/wire.js';

export type IndexFunc<T> = (obj: T) => string[];

export type StoreChange<T> =
  | { readonly type: 'added'; readonly obj: T }
  | { readonly type: 'updated'; readonly old: T; readonly obj: T }
  | { readonly type: 'deleted'; readonly obj: T };

export const objectKey = (obj: KubeObject): string =>
  obj.metadata?.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : `${obj.metadata?.name}`;

export class Store<T extends KubeObject> {
  private readonly objects = new Map<string, T>();

  /** `transform` trims each object on its way in (keep only what the owner reads). */
  constructor(private readonly transform?: (obj: T) => T) {}

  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  /** Adds an index and fills it from what the store holds now. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`store: index "${name}" exists`);
    this.indexers.set(name, fn);
    this.indexes.set(name, new Map());
    for (const [key, obj] of this.objects) this.reindexOne(name, key, undefined, obj);
  }

  hasIndex(name: string): boolean {
    return this.indexers.has(name);
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  size(): number {
    return this.objects.size;
  }

  /** How many objects byIndex would return, without building the list; throws for an unknown index. */
  countByIndex(index: string, value: string): number {
    const index_ = this.indexes.get(index);
    if (!index_) throw new Error(`store: no index "${index}"`);
    return index_.get(value)?.size ?? 0;
  }

  /** Objects whose index function returned `value`; throws for an unknown index. */
  byIndex(index: string, value: string): T[] {
    const index_ = this.indexes.get(index);
    if (!index_) throw new Error(`store: no index "${index}"`);
    const keys = index_.get(value);
    return keys ? [...keys].map((k) => this.objects.get(k)).filter((o): o is T => o !== undefined) : [];
  }

  /**
   * The object as the cache keeps it: without managedFields (server-side apply bookkeeping, often
   * a third of an object, read by no controller decision) and trimmed by the transform. The
   * informer prepares each page of a list as it arrives, so a 10,000-object list never has every
   * object's full form in memory at once.
   */
  prepare(received: T): T {
    if (received.metadata?.managedFields) delete received.metadata.managedFields;
    return this.transform ? this.transform(received) : received;
  }

  /** Adds or replaces; nothing changes when the resourceVersion is the one already held. */
  upsert(received: T): StoreChange<T> | undefined {
    return this.put(this.prepare(received));
  }

  private put(obj: T): StoreChange<T> | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (old && old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return undefined;
    this.objects.set(key, obj);
    this.reindex(key, old, obj);
    return old ? { type: 'updated', old, obj } : { type: 'added', obj };
  }

  /** Removes the object with `obj`'s key; the change carries `obj` (the last state seen). */
  remove(obj: T): StoreChange<T> | undefined {
    const key = objectKey(obj);
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.objects.delete(key);
    this.reindex(key, old, undefined);
    return { type: 'deleted', obj };
  }

  /**
   * Makes the contents equal `fresh`, objects that already went through `prepare` (the informer
   * prepares each page of its list as it arrives); returns deletions first, then additions and
   * updates.
   */
  replace(fresh: T[]): StoreChange<T>[] {
    const keep = new Set(fresh.map(objectKey));
    const changes: StoreChange<T>[] = [];
    for (const [key, old] of [...this.objects]) {
      if (keep.has(key)) continue;
      const change = this.remove(old);
      if (change) changes.push(change);
    }
    for (const obj of fresh) {
      const change = this.put(obj);
      if (change) changes.push(change);
    }
    return changes;
  }

  private reindex(key: string, oldObj: T | undefined, newObj: T | undefined): void {
    for (const name of this.indexers.keys()) this.reindexOne(name, key, oldObj, newObj);
  }

  private reindexOne(name: string, key: string, oldObj: T | undefined, newObj: T | undefined): void {
    const fn = this.indexers.get(name)!;
    const index = this.indexes.get(name)!;
    for (const value of oldObj ? fn(oldObj) : []) {
      const keys = index.get(value);
      keys?.delete(key);
      if (keys?.size === 0) index.delete(value);
    }
    for (const value of newObj ? fn(newObj) : []) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }
}
