// An informer: a local cache of one kind of object kept current by list + watch, with indexes
// and change handlers. It is written as an explicit loop over states (list → watch → re-watch or
// relist) because watches in Node can end or stall without an error:
//  - every failure restarts with jittered backoff (800 ms doubling to 30 s), reset once healthy;
//  - a watch that delivers nothing (not even a bookmark) for `noEventTimeoutMs` is abandoned;
//  - 410 Gone, a stall, and the periodic `relistIntervalMs` each trigger a full relist, whose diff
//    against the cache is delivered as add/update/delete so nothing is missed;
//  - `hasSynced()` turns true after the first complete list and stays true.
// Must not: interpret objects or call reconcilers directly; handlers map changes to queue keys.
import { StringDecoder } from 'node:string_decoder';
import { Backoff } from './backoff.js';
import type { KubeClient, KubeList, KubeObject, RequestOptions } from './kube-client.js';
import { KubeApiError, isGone } from './kube-client.js';
import type { Logger } from './logger.js';

export interface InformerOptions {
  /** Shown in logs, e.g. "pods". */
  name: string;
  client: KubeClient;
  /** Collection path, e.g. /api/v1/pods or /apis/apps.tailor.dev/v1alpha1/namespaces/ns/clonesets. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  pageSize?: number;
  relistIntervalMs?: number;
  noEventTimeoutMs?: number;
  /** A watch lasting at least this long resets the restart backoff. */
  healthyAfterMs?: number;
  backoff?: Backoff;
  logger: Logger;
}

export interface InformerHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export type IndexFunc<T> = (obj: T) => string[];

type WatchOutcome = 'closed' | 'relist';

interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export const objectKey = (obj: KubeObject): string =>
  obj.metadata?.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : `${obj.metadata?.name}`;

export class Informer<T extends KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  private readonly handlers: InformerHandler<T>[] = [];
  private readonly backoff: Backoff;
  private readonly stopController = new AbortController();
  private resourceVersion = '';
  private synced = false;
  private loop: Promise<void> | undefined;
  private syncWaiters: (() => void)[] = [];
  private lastEventAt = 0;
  private completedRelists = 0;

  constructor(private readonly options: InformerOptions) {
    this.backoff = options.backoff ?? new Backoff();
  }

  addHandler(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.loop) throw new Error(`informer ${this.options.name}: add index "${name}" before start()`);
    this.indexers.set(name, fn);
    this.indexes.set(name, new Map());
  }

  /** Full lists applied after the first one (after a 410 Gone, a stalled watch or the periodic relist). */
  get relists(): number {
    return this.completedRelists;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has been applied (or when the informer is stopped). */
  async waitForSync(): Promise<void> {
    if (this.synced || this.stopController.signal.aborted) return;
    await new Promise<void>((resolve) => this.syncWaiters.push(resolve));
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return [...this.store.values()];
  }

  size(): number {
    return this.store.size;
  }

  byIndex(index: string, value: string): T[] {
    const keys = this.indexes.get(index)?.get(value);
    if (!this.indexers.has(index)) throw new Error(`informer ${this.options.name}: no index "${index}"`);
    return keys ? [...keys].map((k) => this.store.get(k)).filter((o): o is T => o !== undefined) : [];
  }

  /** Milliseconds since the watch last delivered anything; for health checks. */
  sinceLastEventMs(now = Date.now()): number {
    return this.lastEventAt === 0 ? 0 : now - this.lastEventAt;
  }

  start(): void {
    if (this.loop) return;
    this.loop = this.run();
  }

  /** Stops watching and resolves when the loop has ended. Stopping is not an error. */
  async stop(): Promise<void> {
    this.stopController.abort();
    this.releaseSyncWaiters();
    await this.loop;
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private async run(): Promise<void> {
    const log = this.options.logger;
    let needList = true;
    let lastRelist = 0;
    const relistEvery = this.options.relistIntervalMs ?? 10 * 60_000;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.relist();
          lastRelist = Date.now();
          needList = false;
        }
        const startedAt = Date.now();
        const untilRelist = relistEvery > 0 ? Math.max(1, lastRelist + relistEvery - startedAt) : 0;
        const outcome = await this.watchOnce(untilRelist);
        if (Date.now() - startedAt >= (this.options.healthyAfterMs ?? 60_000)) this.backoff.reset();
        if (outcome === 'relist') needList = true;
      } catch (err) {
        if (this.stopped) break;
        if (isGone(err)) {
          log.info({ informer: this.options.name }, 'resourceVersion expired (410 Gone); relisting');
          needList = true;
          continue;
        }
        const delayMs = this.backoff.next();
        log.warn({ informer: this.options.name, err, delayMs }, 'list/watch failed; retrying');
        await sleep(delayMs, this.stopController.signal);
      }
    }
  }

  private query(extra: RequestOptions['query'] = {}): RequestOptions['query'] {
    return { labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector, ...extra };
  }

  /** Lists every page, then replaces the cache, delivering the difference as events. */
  private async relist(): Promise<void> {
    const fresh = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page: KubeList<T> = await this.options.client.list<T>(
        this.options.path,
        this.query({ limit: this.options.pageSize ?? 500, continue: continueToken }),
      );
      // List items arrive without apiVersion/kind; watch events carry them. Fill them in so the
      // cache holds one shape whichever way an object arrived.
      const kind = page.kind?.replace(/List$/, '');
      for (const item of page.items) {
        if (page.apiVersion && item.apiVersion === undefined) item.apiVersion = page.apiVersion;
        if (kind && item.kind === undefined) item.kind = kind;
        fresh.set(objectKey(item), item);
      }
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (continueToken && !this.stopped);
    if (this.stopped) return;
    for (const [key, old] of this.store) {
      if (!fresh.has(key)) this.remove(key, old);
    }
    for (const [key, obj] of fresh) this.upsert(key, obj);
    this.resourceVersion = resourceVersion;
    this.lastEventAt = Date.now();
    if (!this.synced) {
      this.synced = true;
      this.releaseSyncWaiters();
    } else {
      this.completedRelists += 1;
    }
  }

  /** One watch request from the current resourceVersion; resolves when it ends. */
  private async watchOnce(untilRelistMs: number): Promise<WatchOutcome> {
    const abort = new AbortController();
    const onStop = (): void => abort.abort();
    this.stopController.signal.addEventListener('abort', onStop);
    let outcome: WatchOutcome = 'closed';
    const stallAfter = this.options.noEventTimeoutMs ?? 5 * 60_000;
    let stallTimer: NodeJS.Timeout | undefined;
    const armWatchdog = (): void => {
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => {
        this.options.logger.warn({ informer: this.options.name, stallAfter }, 'watch delivered nothing; relisting');
        outcome = 'relist';
        abort.abort();
      }, stallAfter);
    };
    const relistTimer =
      untilRelistMs > 0
        ? setTimeout(() => {
            outcome = 'relist';
            abort.abort();
          }, untilRelistMs)
        : undefined;
    try {
      armWatchdog();
      const response = await this.options.client.request('GET', this.options.path, {
        query: this.query({
          watch: true,
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          // Like client-go: the server ends each watch after 5-10 min and we resume from the last RV.
          timeoutSeconds: 300 + Math.floor(Math.random() * 300),
        }),
        signal: abort.signal,
      });
      // Chunks split multi-byte UTF-8 characters; the decoder carries partial ones over.
      const decoder = new StringDecoder('utf8');
      if (response.statusCode !== 200) {
        let text = '';
        for await (const chunk of response.body) text += decoder.write(chunk as Buffer);
        throw new KubeApiError('WATCH', this.options.path, response.statusCode, safeParse(text + decoder.end()));
      }
      let buffered = '';
      for await (const chunk of response.body) {
        buffered += decoder.write(chunk as Buffer);
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (!line.trim()) continue;
          armWatchdog();
          this.lastEventAt = Date.now();
          this.apply(JSON.parse(line) as WatchEvent<T>);
        }
      }
      return outcome;
    } catch (err) {
      if (abort.signal.aborted) return outcome;
      throw err;
    } finally {
      clearTimeout(stallTimer);
      clearTimeout(relistTimer);
      this.stopController.signal.removeEventListener('abort', onStop);
      abort.abort();
    }
  }

  private apply(event: WatchEvent<T>): void {
    const obj = event.object;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.upsert(objectKey(obj), obj);
        break;
      case 'DELETED': {
        const key = objectKey(obj);
        if (this.store.has(key)) this.remove(key, obj);
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR': {
        const status = obj as unknown as { code?: number; reason?: string; message?: string };
        throw new KubeApiError('WATCH', this.options.path, status.code ?? 500, status);
      }
    }
    const rv = obj.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
  }

  private upsert(key: string, obj: T): void {
    // managedFields (server-side apply bookkeeping) are often a third of an object and no
    // controller decision reads them: the cache never holds them.
    if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
    const old = this.store.get(key);
    if (old && old.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
    this.store.set(key, obj);
    this.reindex(key, old, obj);
    for (const h of this.handlers) {
      if (old) h.onUpdate?.(old, obj);
      else h.onAdd?.(obj);
    }
  }

  private remove(key: string, last: T): void {
    const old = this.store.get(key);
    this.store.delete(key);
    this.reindex(key, old, undefined);
    for (const h of this.handlers) h.onDelete?.(last);
  }

  private reindex(key: string, oldObj: T | undefined, newObj: T | undefined): void {
    for (const [name, fn] of this.indexers) {
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

  private releaseSyncWaiters(): void {
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w();
  }
}

/** Pods by the UID of their controller owner. */
export const byControllerUid: IndexFunc<KubeObject> = (obj) =>
  (obj.metadata?.ownerReferences ?? []).filter((o) => o.controller).map((o) => o.uid);

/** Pods by the node they are bound to. */
export const byNodeName: IndexFunc<{ spec?: { nodeName?: string } }> = (obj) => (obj.spec?.nodeName ? [obj.spec.nodeName] : []);

function safeParse(text: string): { message?: string } {
  try {
    return JSON.parse(text) as { message?: string };
  } catch {
    return { message: text.slice(0, 300) };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
