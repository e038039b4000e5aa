// An informer: a local cache of one kind of object kept current by list + watch, the driver of
// the watcher state machine (watcher.ts decides what happens next), the store (store.ts holds the
// objects and their indexes) and the handlers (handlers.ts turn each change into queue keys).
// Owns: performing the watcher's effects (the list and watch requests, the timers, the backoff)
// and feeding it what happened.
// Must not: interpret objects or call reconcilers directly; handlers map changes to queue keys.
import { StringDecoder } from 'node:string_decoder';
import { Backoff, ServerPacedBackoff } from './backoff.js';
import { dispatch } from './handlers.js';
import type { InformerHandler } from '../api/handler.js';
import type { KubeClient, RequestOptions } from './kube-client.js';
import type { KubeList, KubeObject } from '../api/wire.js';
import { KubeApiError, serverRetryAfterMs, withRetryAfterHeader, type KubeStatus } from './pure/api-error.js';
import { isGone } from './kube-client.js';
import type { Logger } from './logger.js';
import { Store, type IndexFunc, type StoreChange } from './store.js';
import { step, type WatcherEffect, type WatcherInput, type WatcherPhase, type WatcherState } from './pure/watcher.js';

/**
 * The longest a list holds the event loop while it trims a page's objects (issue 47: a page of 20
 * revisions of 1.37 MB held it for seconds, against a 10 s lease renew deadline).
 */
const LIST_SLICE_MS = 20;

export interface InformerOptions<T extends KubeObject = KubeObject> {
  /** Shown in logs, e.g. "pods". */
  name: string;
  client: Pick<KubeClient, 'list' | 'request'>;
  /** Collection path, e.g. /api/v1/pods or /apis/apps.tailor.dev/v1alpha1/namespaces/ns/clonesets. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  pageSize?: number;
  /** Full relist this often; 0 disables. Default 10 min. */
  relistIntervalMs?: number;
  /** Re-deliver every cached object to the handlers this often; 0 disables (default). */
  resyncPeriodMs?: number;
  /** Abandon a watch that delivered nothing for this long, and relist. Default 5 min. */
  noEventTimeoutMs?: number;
  /** A watch lasting at least this long resets the restart backoff. Default 60 s. */
  healthyAfterMs?: number;
  backoff?: Backoff;
  logger: Logger;
  /** Trims each object before it is cached (and handed to the handlers): a smaller cache. */
  transform?: (obj: T) => T;
}

interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** A watch the server closes sooner than this counts as a failure. */
const MIN_WATCH_MS = 1_000;
/**
 * - every failure restarts with jittered backoff (800 ms doubling to 30 s), reset once healthy,
 *   except that a 429 or 5xx naming a wait (Retry-After) waits that (ServerPacedBackoff): after a
 *   restart the server says when its caches serve;
 * - a watch that delivers nothing (not even a bookmark) for `noEventTimeoutMs` is abandoned and
 *   the informer relists (the watchdog); so do a 410 Gone and the periodic `relistIntervalMs`,
 *   and a relist's difference from the cache is delivered as add/update/delete;
 * - every `resyncPeriodMs` each cached object is re-delivered to the handlers as an update;
 * - `hasSynced()` turns true after the first complete list and stays true.
 */
export class Informer<T extends KubeObject> {
  private readonly store: Store<T>;
  private readonly handlers: InformerHandler<T>[] = [];
  private readonly backoff: ServerPacedBackoff;
  private readonly stopController = new AbortController();
  private state: WatcherState = { phase: 'idle' };
  private watchAbort: AbortController | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** The attempt a pending retry resumes, while one waits out its backoff. */
  private pendingRetry: number | undefined;
  private relistTimer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private readonly tasks = new Set<Promise<void>>();
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private lastEventAt = 0;
  private completedRelists = 0;
  private completedResyncs = 0;
  /** A list or watch failed since the API server last answered one. */
  private failedSinceAnswered = false;
  /** The failure the watcher is handling now, while its effects are performed. */
  private currentFailure: unknown;
  private readonly reconnectListeners: (() => void)[] = [];

  constructor(private readonly options: InformerOptions<T>) {
    this.store = new Store<T>(options.transform);
    this.backoff = new ServerPacedBackoff(options.backoff ?? new Backoff());
  }

  addHandler(handler: InformerHandler<T>): void {
    this.handlers.push(handler);
  }

  /**
   * Calls `listener` each time the API server answers a list or watch again after one failed (an
   * outage, a restart): what failed meanwhile may succeed now.
   */
  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  /**
   * A restart waiting out its backoff starts now: another informer found the API server answering
   * again, so this one's wait, grown through the outage, only delays its cache (decision 77). The
   * backoff itself stays where it is, so a server that still refuses is not retried faster.
   */
  retryNow(): void {
    const attempt = this.pendingRetry;
    if (attempt === undefined) return;
    clearTimeout(this.retryTimer);
    this.pendingRetry = undefined;
    this.send({ type: 'retryDue', attempt, now: Date.now() });
  }

  /** The server answered: after a failure, tell the listeners. */
  private answered(): void {
    if (!this.failedSinceAnswered) return;
    this.failedSinceAnswered = false;
    for (const listener of this.reconnectListeners) listener();
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.state.phase !== 'idle')
      throw new Error(`informer ${this.options.name}: add index "${name}" before start()`);
    this.store.addIndex(name, fn);
  }

  /** Full lists applied after the first one (after a 410 Gone, a stalled watch or the periodic relist). */
  get relists(): number {
    return this.completedRelists;
  }

  /** Periodic resyncs delivered so far. */
  get resyncs(): number {
    return this.completedResyncs;
  }

  /** Where the watcher is now: idle, listing, watching, backingOff or stopped. */
  get phase(): WatcherPhase {
    return this.state.phase;
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
    return this.store.list();
  }

  size(): number {
    return this.store.size();
  }

  byIndex(index: string, value: string): T[] {
    if (!this.store.hasIndex(index)) throw new Error(`informer ${this.options.name}: no index "${index}"`);
    return this.store.byIndex(index, value);
  }

  countByIndex(index: string, value: string): number {
    if (!this.store.hasIndex(index)) throw new Error(`informer ${this.options.name}: no index "${index}"`);
    return this.store.countByIndex(index, value);
  }

  /** Milliseconds since the watch last delivered anything; for health checks. */
  sinceLastEventMs(now = Date.now()): number {
    return this.lastEventAt === 0 ? 0 : now - this.lastEventAt;
  }

  start(): void {
    if (this.state.phase !== 'idle') return;
    const resyncMs = this.options.resyncPeriodMs ?? 0;
    if (resyncMs > 0) this.resyncTimer = setInterval(() => this.send({ type: 'resyncDue' }), resyncMs);
    this.send({ type: 'start', now: Date.now() });
  }

  /** Stops watching, clears every timer, and resolves when no request is left running. */
  async stop(): Promise<void> {
    this.send({ type: 'stop' });
    this.stopController.abort();
    this.releaseSyncWaiters();
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }

  /** Feeds the state machine one input and performs what it asks for. */
  private send(input: WatcherInput): void {
    const { state, effects } = step(this.state, input, {
      healthyAfterMs: this.options.healthyAfterMs ?? 60_000,
      minWatchMs: MIN_WATCH_MS,
    });
    this.state = state;
    this.currentFailure = input.type === 'listFailed' || input.type === 'watchFailed' ? input.error : undefined;
    for (const effect of effects) this.perform(effect);
    this.currentFailure = undefined;
  }

  private perform(effect: WatcherEffect): void {
    const log = this.options.logger;
    switch (effect.kind) {
      case 'list':
        this.track(this.list_(effect.attempt));
        return;
      case 'watch':
        this.track(this.watch(effect.attempt, effect.resourceVersion));
        return;
      case 'abortWatch':
        this.watchAbort?.abort();
        return;
      case 'armWatchdog':
        clearTimeout(this.watchdogTimer);
        this.watchdogTimer = setTimeout(
          () => this.send({ type: 'watchdogFired', attempt: effect.attempt }),
          this.options.noEventTimeoutMs ?? 5 * 60_000,
        );
        return;
      case 'disarmWatchdog':
        clearTimeout(this.watchdogTimer);
        return;
      case 'scheduleRetry': {
        this.failedSinceAnswered = true;
        const delayMs = this.backoff.next(serverRetryAfterMs(this.currentFailure));
        clearTimeout(this.retryTimer);
        this.pendingRetry = effect.attempt;
        this.retryTimer = setTimeout(() => {
          this.pendingRetry = undefined;
          this.send({ type: 'retryDue', attempt: effect.attempt, now: Date.now() });
        }, delayMs);
        log.debug({ informer: this.options.name, delayMs }, 'backing off');
        return;
      }
      case 'resetBackoff':
        this.backoff.reset();
        return;
      case 'armRelist': {
        const every = this.options.relistIntervalMs ?? 10 * 60_000;
        clearTimeout(this.relistTimer);
        if (every > 0) this.relistTimer = setTimeout(() => this.send({ type: 'relistDue' }), every);
        return;
      }
      case 'markSynced':
        this.synced = true;
        this.releaseSyncWaiters();
        return;
      case 'resync':
        for (const obj of this.store.list()) this.deliver({ type: 'updated', old: obj, obj });
        this.completedResyncs += 1;
        return;
      case 'shutdown':
        this.pendingRetry = undefined;
        for (const t of [this.watchdogTimer, this.retryTimer, this.relistTimer]) clearTimeout(t);
        clearInterval(this.resyncTimer);
        this.watchAbort?.abort();
        return;
      case 'log':
        log[effect.level](
          { informer: this.options.name, ...(effect.error === undefined ? {} : { err: effect.error }) },
          effect.msg,
        );
        return;
    }
  }

  private track(task: Promise<void>): void {
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
  }

  private isCurrent(attempt: number): boolean {
    return 'attempt' in this.state && this.state.attempt === attempt;
  }

  private deliver(change: StoreChange<T> | undefined): void {
    if (change) dispatch(this.handlers, change, this.options.logger, this.options.name);
  }

  private query(extra: RequestOptions['query'] = {}): RequestOptions['query'] {
    return { labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector, ...extra };
  }

  /** Adds a page's objects, trimmed, to `fresh`; false when a newer list took over meanwhile. */
  private async preparePage(page: KubeList<T>, fresh: T[], attempt: number): Promise<boolean> {
    // List items arrive without apiVersion/kind; watch events carry them. Fill them in so the
    // cache holds one shape whichever way an object arrived.
    const kind = page.kind?.replace(/List$/, '');
    let sliceStartedAt = performance.now();
    for (const item of page.items) {
      if (page.apiVersion && item.apiVersion === undefined) item.apiVersion = page.apiVersion;
      if (kind && item.kind === undefined) item.kind = kind;
      // Trimmed now, page by page: the full objects of a 10,000-pod list are never all held
      // at once (that peak, not the cache, set the process's resident size).
      fresh.push(this.store.prepare(item));
      // Trimming large objects (a revision's template is hashed) takes tens of ms each: the
      // lease renewal and the watches get the event loop between slices.
      if (performance.now() - sliceStartedAt > LIST_SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (!this.isCurrent(attempt)) return false;
        sliceStartedAt = performance.now();
      }
    }
    return true;
  }

  /** Lists every page, then replaces the cache, delivering the difference as changes. */
  private async list_(attempt: number): Promise<void> {
    const fresh: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    try {
      do {
        const page: KubeList<T> = await this.options.client.list<T>(
          this.options.path,
          this.query({ limit: this.options.pageSize ?? 500, continue: continueToken }),
          { signal: this.stopController.signal },
        );
        if (!(await this.preparePage(page, fresh, attempt))) return;
        continueToken = page.metadata?.continue || undefined;
        resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      } while (continueToken && this.isCurrent(attempt));
    } catch (error) {
      if (this.isCurrent(attempt)) this.send({ type: 'listFailed', attempt, error });
      return;
    }
    if (!this.isCurrent(attempt)) return;
    const wasSynced = this.synced;
    for (const change of this.store.replace(fresh)) this.deliver(change);
    this.lastEventAt = Date.now();
    if (wasSynced) this.completedRelists += 1;
    this.answered();
    this.send({ type: 'listed', attempt, resourceVersion, now: Date.now() });
  }

  /** One watch request from `resourceVersion`; feeds each event and how the watch ended. */
  private async watch(attempt: number, resourceVersion: string): Promise<void> {
    const abort = new AbortController();
    this.watchAbort = abort;
    const onStop = (): void => abort.abort();
    this.stopController.signal.addEventListener('abort', onStop);
    try {
      const response = await this.options.client.request('GET', this.options.path, {
        query: this.query({
          watch: true,
          resourceVersion,
          allowWatchBookmarks: true,
          // Like client-go: the server ends each watch after 5-10 min and we resume from the last RV.
          timeoutSeconds: 300 + Math.floor(Math.random() * 300),
        }),
        timeoutMs: 0,
        signal: abort.signal,
      });
      // Chunks split multi-byte UTF-8 characters; the decoder carries partial ones over.
      const decoder = new StringDecoder('utf8');
      if (response.statusCode !== 200) {
        let text = '';
        for await (const chunk of response.body) text += decoder.write(chunk);
        throw new KubeApiError(
          'WATCH',
          this.options.path,
          response.statusCode,
          withRetryAfterHeader(safeParse(text + decoder.end()), response.headers['retry-after']),
        );
      }
      this.answered(); // even an abandoned attempt's 200 says the server answers
      let buffered = '';
      for await (const chunk of response.body) {
        buffered += decoder.write(chunk);
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (!line.trim()) continue;
          if (!this.isCurrent(attempt)) return;
          this.lastEventAt = Date.now();
          const rv = this.apply(JSON.parse(line) as WatchEvent<T>);
          this.send({ type: 'watchEvent', attempt, ...(rv ? { resourceVersion: rv } : {}) });
        }
      }
      if (this.isCurrent(attempt)) this.send({ type: 'watchClosed', attempt, now: Date.now() });
    } catch (error) {
      if (abort.signal.aborted || !this.isCurrent(attempt)) return;
      this.send({ type: 'watchFailed', attempt, gone: isGone(error), error, now: Date.now() });
    } finally {
      this.stopController.signal.removeEventListener('abort', onStop);
      abort.abort();
      if (this.watchAbort === abort) this.watchAbort = undefined;
    }
  }

  /** Applies one watch event to the store; returns its resourceVersion. */
  private apply(event: WatchEvent<T>): string | undefined {
    const obj = event.object;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.deliver(this.store.upsert(obj));
        break;
      case 'DELETED':
        this.deliver(this.store.remove(obj));
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR': {
        const status = obj as KubeStatus;
        throw new KubeApiError('WATCH', this.options.path, status.code ?? 500, status);
      }
    }
    return obj.metadata?.resourceVersion;
  }

  private releaseSyncWaiters(): void {
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w();
  }
}

/** Pods by the node they are bound to. */
export const byNodeName: IndexFunc<{ spec?: { nodeName?: string } }> = (obj) =>
  obj.spec?.nodeName ? [obj.spec.nodeName] : [];

function safeParse(text: string): { message?: string } {
  try {
    return JSON.parse(text) as { message?: string };
  } catch {
    return { message: text.slice(0, 300) };
  }
}
