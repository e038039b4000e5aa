// Owns the keyed work queue with client-go semantics: keys (never events), duplicates collapse,
// a key is handed to at most one worker at a time, delayed and rate-limited re-adds, shutdown.
// It must not run work, limit concurrency or know what a key means; the Controller does that.

import { ItemExponentialRateLimiter, type RateLimiter } from './backoff.js';
import { DelayHeap, KeyFifo } from './key-containers.js';

/** Hooks for workqueue_* metrics. Durations in seconds, as Prometheus expects. */
export interface WorkQueueMetrics {
  /** Keys waiting to be handed out, after every change. */
  setDepth(depth: number): void;
  /** A key was newly added (collapsed duplicates do not count), as client-go counts adds. */
  incAdds(): void;
  /** Time a key waited between being added and being handed out by get(). */
  observeQueueDuration(seconds: number): void;
  /** Time between get() handing a key out and done(key). */
  observeWorkDuration(seconds: number): void;
  /** addAfter / addRateLimited was called, as client-go counts retries. */
  incRetries(): void;
}

export interface WorkQueueOptions {
  /** Used as the `name` label of workqueue_* metrics by whoever builds the metrics hooks. */
  name?: string;
  /** Delays for addRateLimited. Default: 5 ms doubling to 1000 s per key. */
  rateLimiter?: RateLimiter;
  metrics?: WorkQueueMetrics;
  /** Monotonic clock in ms, for metrics durations and delayed adds. Default performance.now. */
  now?: () => number;
}

// setTimeout fires at once (with a warning) for delays above 2^31-1 ms; longer waits re-arm.
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export class WorkQueue {
  readonly name: string;
  readonly #rateLimiter: RateLimiter;
  readonly #metrics: WorkQueueMetrics | undefined;
  readonly #now: () => number;

  /** Keys ready to be handed out, in order; each appears at most once. */
  readonly #ready = new KeyFifo();
  /** Keys that need processing: in #ready, or added again while being processed. */
  readonly #dirty = new Set<string>();
  /** Keys handed out by get() and not yet done(). */
  readonly #processing = new Set<string>();
  /** Callers of get() waiting for a key, oldest first. */
  #getWaiters: Array<(key: string | undefined) => void> = [];
  /** Callers of shutDownWithDrain() waiting for #processing to empty. */
  #drainWaiters: Array<() => void> = [];

  readonly #delayed = new DelayHeap();
  #delayTimer: NodeJS.Timeout | undefined;
  #delayTimerDeadline = Number.POSITIVE_INFINITY;

  // Only kept when metrics are wired, so an unobserved queue pays nothing for them.
  readonly #addedAt = new Map<string, number>();
  readonly #startedAt = new Map<string, number>();

  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? '';
    this.#rateLimiter = options.rateLimiter ?? new ItemExponentialRateLimiter();
    this.#metrics = options.metrics;
    this.#now = options.now ?? ((): number => performance.now());
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Keys waiting to be handed out (not counting keys being processed). */
  len(): number {
    return this.#ready.length;
  }

  /** Marks `key` as needing processing. No-op when already pending or after shutdown. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) {
      return;
    }
    this.#dirty.add(key);
    if (this.#metrics !== undefined) {
      this.#metrics.incAdds();
      this.#addedAt.set(key, this.#now());
    }
    // done(key) re-queues it; handing it out now would let two workers hold the same key.
    if (this.#processing.has(key)) {
      return;
    }
    this.#pushReady(key);
  }

  /**
   * Adds `key` once `delayMs` has passed. A key already waiting keeps the earlier of its two
   * deadlines, so a short requeue is never postponed by a longer one.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) {
      return;
    }
    this.#metrics?.incRetries();
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.#now() + delayMs;
    if (this.#delayed.upsertEarliest(key, readyAt)) {
      this.#armDelayTimer();
    }
  }

  /**
   * Adds `key` at the end of a window of `windowMs` that opens with the first change of a burst:
   * the changes that arrive within it are handed out as one. A key already waiting to be handed
   * out, or due sooner, stays as it is. Not a retry (client-go's batched syncs, as the Job and
   * EndpointSlice controllers batch their pod updates).
   */
  addBatched(key: string, windowMs: number): void {
    if (this.#shuttingDown || this.#dirty.has(key)) {
      return;
    }
    if (!(windowMs > 0)) {
      this.add(key);
      return;
    }
    if (this.#delayed.upsertEarliest(key, this.#now() + windowMs)) {
      this.#armDelayTimer();
    }
  }

  /** Adds `key` after its per-key backoff delay, and counts one more failure for it. */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) {
      return;
    }
    this.addAfter(key, this.#rateLimiter.when(key));
  }

  /**
   * Makes every key that waits out a failure backoff due now; their failure counts stay, so a key
   * that fails again backs off further. For when the cause has passed: the API server answers
   * again after an outage (the Controller calls it). Returns how many keys it brought forward.
   */
  retryFailedNow(): number {
    if (this.#shuttingDown) {
      return 0;
    }
    const now = this.#now();
    let moved = 0;
    for (const key of this.#delayed.keys()) {
      if (this.#rateLimiter.numRequeues(key) > 0 && this.#delayed.upsertEarliest(key, now)) moved++;
    }
    if (moved > 0) {
      this.#armDelayTimer();
    }
    return moved;
  }

  /** Resets `key`'s backoff; call after it was processed successfully. Does not dequeue it. */
  forget(key: string): void {
    this.#rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.#rateLimiter.numRequeues(key);
  }

  /**
   * Resolves with the next key, which the caller then owns until done(key). After shutdown it
   * still hands out keys already queued, then resolves undefined.
   */
  get(): Promise<string | undefined> {
    const key = this.#ready.shift();
    if (key !== undefined) {
      this.#startProcessing(key);
      return Promise.resolve(key);
    }
    if (this.#shuttingDown) {
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      this.#getWaiters.push(resolve);
    });
  }

  /** Ends processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    if (!this.#processing.delete(key)) {
      return;
    }
    if (this.#metrics !== undefined) {
      const startedAt = this.#startedAt.get(key);
      this.#startedAt.delete(key);
      if (startedAt !== undefined) {
        this.#metrics.observeWorkDuration((this.#now() - startedAt) / 1000);
      }
    }
    if (this.#dirty.has(key)) {
      this.#pushReady(key);
    }
    if (this.#processing.size === 0) {
      this.#releaseDrainWaiters();
    }
  }

  /** Ignores further adds, drops pending delayed adds, and wakes idle get() callers with undefined. */
  shutDown(): void {
    this.#beginShutdown();
    // As in client-go, a plain shutDown ends any shutDownWithDrain wait early.
    this.#releaseDrainWaiters();
  }

  /** Like shutDown, then resolves once every key handed out so far has been marked done. */
  shutDownWithDrain(): Promise<void> {
    this.#beginShutdown();
    if (this.#processing.size === 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#drainWaiters.push(resolve);
    });
  }

  #beginShutdown(): void {
    this.#shuttingDown = true;
    this.#clearDelayTimer();
    this.#delayed.clear();
    // Waiters exist only while #ready is empty, so nothing is left to hand them.
    const waiters = this.#getWaiters;
    this.#getWaiters = [];
    for (const resolve of waiters) {
      resolve(undefined);
    }
  }

  #pushReady(key: string): void {
    const waiter = this.#getWaiters.shift();
    if (waiter !== undefined) {
      // Hand over directly so no other caller can observe the key as both queued and free.
      this.#startProcessing(key);
      waiter(key);
      return;
    }
    this.#ready.push(key);
    this.#metrics?.setDepth(this.#ready.length);
  }

  #startProcessing(key: string): void {
    this.#processing.add(key);
    this.#dirty.delete(key);
    if (this.#metrics !== undefined) {
      const now = this.#now();
      const addedAt = this.#addedAt.get(key);
      this.#addedAt.delete(key);
      if (addedAt !== undefined) {
        this.#metrics.observeQueueDuration((now - addedAt) / 1000);
      }
      this.#startedAt.set(key, now);
      this.#metrics.setDepth(this.#ready.length);
    }
  }

  #releaseDrainWaiters(): void {
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) {
      resolve();
    }
  }

  /** One timer, always set for the earliest pending deadline. */
  #armDelayTimer(): void {
    const earliest = this.#delayed.peekReadyAt();
    if (earliest === undefined) {
      this.#clearDelayTimer();
      return;
    }
    if (this.#delayTimer !== undefined && this.#delayTimerDeadline <= earliest) {
      return;
    }
    this.#clearDelayTimer();
    const delayMs = Math.min(Math.max(earliest - this.#now(), 0), MAX_TIMER_DELAY_MS);
    this.#delayTimerDeadline = earliest;
    this.#delayTimer = setTimeout(() => {
      this.#onDelayTimer();
    }, delayMs);
  }

  #onDelayTimer(): void {
    this.#delayTimer = undefined;
    this.#delayTimerDeadline = Number.POSITIVE_INFINITY;
    const now = this.#now();
    for (let key = this.#delayed.popReady(now); key !== undefined; key = this.#delayed.popReady(now)) {
      this.add(key);
    }
    this.#armDelayTimer();
  }

  #clearDelayTimer(): void {
    if (this.#delayTimer !== undefined) {
      clearTimeout(this.#delayTimer);
      this.#delayTimer = undefined;
    }
    this.#delayTimerDeadline = Number.POSITIVE_INFINITY;
  }
}
