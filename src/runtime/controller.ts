// Owns the worker loop: takes keys from a WorkQueue, runs reconcile for at most `concurrency` keys at
// once (p-queue is only that cap), maps each outcome to forget / addAfter / addRateLimited, counts
// results with controller-runtime's labels, and stops within a grace period.
// It must not decide what a key means, read the API, or keep its own queue of keys.

import { randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import type { RateLimiter } from './backoff.js';
import { WorkQueue, type WorkQueueMetrics } from './workqueue.js';

import type { ReconcileResult } from '../api/handler.js';
export type { ReconcileResult };

export interface ReconcileContext {
  /**
   * Aborted when stop()'s grace period runs out while this reconcile is still running, or at once
   * by cancel() (the lease was lost). Pass it to every API call (KubeClient's `{ signal }`).
   */
  signal: AbortSignal;
  /** Names this one reconcile in every log line about it (controller-runtime's reconcileID). */
  reconcileId: string;
}

export type Reconciler = (key: string, context: ReconcileContext) => Promise<ReconcileResult>;

/** Result label values of controller_runtime_reconcile_total, spelled as controller-runtime does. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue_after' | 'requeue';

export const RECONCILE_OUTCOMES: readonly ReconcileOutcome[] = ['success', 'error', 'requeue_after', 'requeue'];

/**
 * An error that retrying cannot fix (e.g. an invalid spec). Counted and logged as an error, never
 * requeued; the key runs again only when something adds it. Found anywhere in a `cause` chain.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/**
 * A failure that retrying soon cannot fix but a later change might (the API server refused an
 * invalid object, the namespace is being deleted): counted and logged as an error, and the key
 * runs again after `retryAfterMs` instead of the short end of the backoff, or when it is added.
 */
export class SlowRetryError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'SlowRetryError';
  }
}

/**
 * A failed reconcile whose outcome changes by itself at a known time (a refusal held long enough
 * is Stalled): it backs off as any failure does, and also runs again after `wakeAfterMs` when that
 * comes first, so the status says so on time rather than at the end of a long backoff.
 */
export class WakeByError extends Error {
  constructor(
    message: string,
    readonly wakeAfterMs: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'WakeByError';
  }
}

/** Hooks for controller_runtime_* metrics of one controller. */
export interface ReconcileMetrics {
  incReconcileTotal(outcome: ReconcileOutcome): void;
  incReconcileErrors(): void;
  incTerminalReconcileErrors(): void;
  observeReconcileTime(seconds: number): void;
  setActiveWorkers(workers: number): void;
}

/** Builds per-name metric hooks; RuntimeMetrics (metrics.ts) implements it. */
export interface ControllerMetricsFactory {
  forController(name: string): ReconcileMetrics;
  forWorkQueue(name: string): WorkQueueMetrics;
}

/** The subset of pino's Logger the controller uses; a pino Logger fits as is. */
export interface ControllerLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface ControllerOptions {
  /** `controller` label of the metrics and the queue's `name` label when the queue is built here. */
  name: string;
  /** Defaults to a new WorkQueue named after the controller, with this controller's metrics. */
  queue?: WorkQueue;
  /** Used only when the queue is built here. Default: 5 ms doubling to 1000 s. */
  rateLimiter?: RateLimiter;
  /** Reconciles running at once, an integer >= 1. */
  concurrency: number;
  reconcile: Reconciler;
  logger: ControllerLogger;
  metrics?: ControllerMetricsFactory;
  /** Monotonic clock in ms for reconcile durations. Default performance.now. */
  now?: () => number;
}

type ControllerState = 'new' | 'running' | 'stopping' | 'stopped';

const MAX_CAUSE_DEPTH = 16;

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #concurrency: number;
  readonly #reconcile: Reconciler;
  readonly #logger: ControllerLogger;
  readonly #metrics: ReconcileMetrics | undefined;
  readonly #now: () => number;
  readonly #workers: PQueue;
  readonly #abortInFlight = new AbortController();
  readonly #inFlight = new Set<string>();

  #state: ControllerState = 'new';
  #dispatchLoop: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  /** Set while the dispatch loop sleeps waiting for a free worker or for stop(). */
  #wakeDispatcher: (() => void) | undefined;
  readonly #onWorkerFreed = (): void => {
    this.#wake();
  };

  constructor(options: ControllerOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(
        `controller ${options.name}: concurrency must be an integer >= 1, got ${String(options.concurrency)}`,
      );
    }
    this.name = options.name;
    this.#concurrency = options.concurrency;
    this.#reconcile = options.reconcile;
    this.#logger = options.logger;
    this.#metrics = options.metrics?.forController(options.name);
    this.#now = options.now ?? ((): number => performance.now());
    this.queue =
      options.queue ??
      new WorkQueue({
        name: options.name,
        ...(options.rateLimiter !== undefined ? { rateLimiter: options.rateLimiter } : {}),
        ...(options.metrics !== undefined ? { metrics: options.metrics.forWorkQueue(options.name) } : {}),
      });
    this.#workers = new PQueue({ concurrency: options.concurrency });
  }

  /** Keys whose reconcile is running now. */
  get inFlight(): ReadonlySet<string> {
    return this.#inFlight;
  }

  /** Begins taking keys from the queue. A controller starts once. */
  start(): void {
    if (this.#state !== 'new') {
      throw new Error(`controller ${this.name}: start() called in state ${this.#state}; a controller starts once`);
    }
    this.#state = 'running';
    this.#workers.on('next', this.#onWorkerFreed);
    this.#logger.info({ controller: this.name, concurrency: this.#concurrency }, 'Starting workers');
    this.#dispatchLoop = this.#dispatch();
  }

  /**
   * Shuts the queue down (keys still queued are dropped: the process is leaving), waits up to
   * `graceMs` for running reconciles, then aborts their signal and resolves. Safe to call twice.
   */
  stop(graceMs: number): Promise<void> {
    this.#stopping ??= this.#stop(graceMs);
    return this.#stopping;
  }

  /**
   * Stops at once: the queue shuts down and every running reconcile's signal is aborted with
   * `reason` now (e.g. the lease was lost, so no reconcile may keep acting). Resolves when the
   * dispatch loop has ended; reconciles that ignore their signal may still be settling.
   */
  cancel(reason: Error): Promise<void> {
    if (!this.#abortInFlight.signal.aborted) this.#abortInFlight.abort(reason);
    return this.stop(0);
  }

  async #stop(graceMs: number): Promise<void> {
    const wasRunning = this.#state === 'running';
    this.#state = 'stopping';
    this.queue.shutDown();
    this.#wake();
    if (wasRunning) {
      this.#logger.info({ controller: this.name, inFlight: this.#inFlight.size }, 'Stopping workers');
      await this.#dispatchLoop;
      const finished = await settlesWithin(this.#workers.onIdle(), graceMs);
      if (!finished) {
        const stillRunning = [...this.#inFlight];
        this.#logger.warn(
          { controller: this.name, graceMs, keys: stillRunning },
          'Grace period expired with reconciles still running; aborting them',
        );
        this.#abortInFlight.abort(new Error(`controller ${this.name} stopped; grace period of ${graceMs} ms expired`));
      }
      this.#workers.off('next', this.#onWorkerFreed);
    }
    this.#state = 'stopped';
  }

  async #dispatch(): Promise<void> {
    try {
      for (;;) {
        // Take a key only when a worker can run it: a key held while waiting would look busy.
        if (!(await this.#waitForFreeWorker())) {
          return;
        }
        const key = await this.queue.get();
        if (key === undefined) {
          if (this.#state === 'running') {
            this.#logger.info({ controller: this.name }, 'Work queue shut down; worker loop exiting');
          }
          return;
        }
        if (this.#state !== 'running') {
          this.queue.done(key);
          return;
        }
        this.#inFlight.add(key);
        this.#workers
          .add(async () => this.#process(key))
          .catch((error: unknown) => {
            // #process handles every outcome itself; reaching here means a bug in this file.
            this.#logger.error({ controller: this.name, key, err: error }, 'Worker failed outside reconcile');
          });
      }
    } catch (error: unknown) {
      this.#logger.error({ controller: this.name, err: error }, 'Worker loop failed');
    }
  }

  /** Resolves true once a worker slot is free, false once stop() was called. */
  async #waitForFreeWorker(): Promise<boolean> {
    while (this.#state === 'running' && this.#workers.pending + this.#workers.size >= this.#concurrency) {
      await new Promise<void>((resolve) => {
        this.#wakeDispatcher = resolve;
      });
    }
    return this.#state === 'running';
  }

  #wake(): void {
    const wake = this.#wakeDispatcher;
    this.#wakeDispatcher = undefined;
    wake?.();
  }

  async #process(key: string): Promise<void> {
    this.#metrics?.setActiveWorkers(this.#inFlight.size);
    const startedAt = this.#now();
    const reconcileId = randomUUID();
    try {
      let result: ReconcileResult;
      try {
        result = await this.#reconcile(key, { signal: this.#abortInFlight.signal, reconcileId });
      } catch (thrown: unknown) {
        this.#metrics?.observeReconcileTime((this.#now() - startedAt) / 1000);
        this.#handleFailure(key, thrown, reconcileId);
        return;
      }
      this.#metrics?.observeReconcileTime((this.#now() - startedAt) / 1000);
      this.#handleResult(key, result);
    } finally {
      this.#inFlight.delete(key);
      this.#metrics?.setActiveWorkers(this.#inFlight.size);
      // After the requeue decisions above, so a key added meanwhile runs once more, not twice.
      this.queue.done(key);
    }
  }

  #handleResult(key: string, result: ReconcileResult): void {
    const requeueAfterMs = result?.requeueAfterMs;
    if (requeueAfterMs !== undefined && requeueAfterMs > 0) {
      this.queue.forget(key);
      this.queue.addAfter(key, requeueAfterMs);
      this.#metrics?.incReconcileTotal('requeue_after');
      return;
    }
    if (result?.requeue === true) {
      this.queue.addRateLimited(key);
      this.#metrics?.incReconcileTotal('requeue');
      return;
    }
    this.queue.forget(key);
    this.#metrics?.incReconcileTotal('success');
  }

  #handleFailure(key: string, thrown: unknown, reconcileId: string): void {
    const error = asError(thrown, `controller ${this.name}: reconcile of ${key} threw a non-Error value`);
    const terminal = isTerminalError(error);
    const slow = findInCauses(error, SlowRetryError);
    if (terminal) {
      this.#metrics?.incTerminalReconcileErrors();
    } else if (slow) {
      this.queue.addAfter(key, slow.retryAfterMs);
    } else {
      this.queue.addRateLimited(key);
      const wake = findInCauses(error, WakeByError);
      if (wake) this.queue.addAfter(key, wake.wakeAfterMs);
    }
    this.#metrics?.incReconcileErrors();
    this.#metrics?.incReconcileTotal('error');
    this.#logger.error(
      {
        controller: this.name,
        key,
        reconcileId,
        err: error,
        terminal,
        ...(terminal ? {} : { requeues: this.queue.numRequeues(key) }),
      },
      terminal ? 'Reconciler error (terminal, not requeued)' : 'Reconciler error',
    );
  }
}

/** True when `error` or anything in its `cause` chain is a TerminalError. */
export function isTerminalError(error: unknown): boolean {
  return findInCauses(error, TerminalError) !== undefined;
}

/** The first error of class `type` in `error`'s cause chain. */
function findInCauses<T extends Error>(error: unknown, type: new (...args: never[]) => T): T | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && current instanceof Error; depth += 1) {
    if (current instanceof type) return current;
    current = current.cause;
  }
  return undefined;
}

function asError(thrown: unknown, message: string): Error {
  if (thrown instanceof Error) {
    return thrown;
  }
  return new Error(`${message}: ${describeThrown(thrown)}`, { cause: thrown });
}

function describeThrown(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value);
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Resolves true if `promise` settles within `timeoutMs`, false otherwise; clears its timer either way. */
async function settlesWithin(promise: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(
      () => {
        resolve(false);
      },
      Math.max(timeoutMs, 0),
    );
  });
  const settled = promise.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, expired]);
  } finally {
    clearTimeout(timer);
  }
}
