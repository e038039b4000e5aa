// Owns delay arithmetic: how long to wait before retrying, per work-queue key (ItemExponentialRateLimiter)
// and for a single restart loop (Backoff, ServerPacedBackoff when the server names its wait). It must not schedule anything: no timers, no promises,
// no I/O. Callers turn the numbers into waits.

/** Milliseconds. Same contract as client-go's workqueue.TypedRateLimiter. */
export interface RateLimiter {
  /** Delay before `key` may be retried; records one more failure for it. */
  when(key: string): number;
  /** Stops tracking `key`: its next failure starts again from the base delay. */
  forget(key: string): void;
  /** Failures recorded for `key` since it was last forgotten. */
  numRequeues(key: string): number;
}

export interface ItemExponentialRateLimiterOptions {
  /** First retry delay in ms. Default 5 ms (client-go / controller-runtime). */
  baseDelayMs?: number;
  /** Ceiling in ms. Default 1000 s (client-go / controller-runtime). */
  maxDelayMs?: number;
}

export const DEFAULT_BASE_DELAY_MS = 5;
export const DEFAULT_MAX_DELAY_MS = 1_000_000;

/**
 * Per-key exponential backoff: baseDelay * 2^failures, capped at maxDelay.
 * Mirrors client-go's ItemExponentialFailureRateLimiter.
 */
export class ItemExponentialRateLimiter implements RateLimiter {
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #failures = new Map<string, number>();

  constructor(options: ItemExponentialRateLimiterOptions = {}) {
    this.#baseDelayMs = requireNonNegativeFinite('baseDelayMs', options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS);
    this.#maxDelayMs = requireNonNegativeFinite('maxDelayMs', options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
  }

  when(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    // 2 ** failures overflows to Infinity after ~1024 failures; the cap below absorbs that.
    const delayMs = this.#baseDelayMs * 2 ** failures;
    return delayMs > this.#maxDelayMs ? this.#maxDelayMs : delayMs;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

export interface BackoffOptions {
  /** First delay in ms. Default 800 ms (client-go's reflector). */
  initialDelayMs?: number;
  /** Ceiling in ms for the un-jittered delay and for the jittered result. Default 30 s. */
  maxDelayMs?: number;
  /** Growth per step. Default 2. */
  factor?: number;
  /** Each delay is spread uniformly over ±jitter of itself. 0..1, default 0.1. */
  jitter?: number;
  /** Source of randomness in [0, 1); injectable so tests are deterministic. */
  random?: () => number;
}

/**
 * Backoff for one restart loop (e.g. an informer re-establishing its watch). Jitter keeps many
 * loops that failed together from retrying in lock step against the API server.
 */
export class Backoff {
  readonly #initialDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #random: () => number;
  #currentDelayMs: number;

  constructor(options: BackoffOptions = {}) {
    this.#initialDelayMs = requireNonNegativeFinite('initialDelayMs', options.initialDelayMs ?? 800);
    this.#maxDelayMs = requireNonNegativeFinite('maxDelayMs', options.maxDelayMs ?? 30_000);
    this.#factor = options.factor ?? 2;
    if (!(this.#factor >= 1) || !Number.isFinite(this.#factor)) {
      throw new RangeError(`Backoff factor must be a finite number >= 1, got ${String(options.factor)}`);
    }
    this.#jitter = options.jitter ?? 0.1;
    if (!(this.#jitter >= 0 && this.#jitter <= 1)) {
      throw new RangeError(`Backoff jitter must be within [0, 1], got ${String(options.jitter)}`);
    }
    this.#random = options.random ?? Math.random;
    this.#currentDelayMs = Math.min(this.#initialDelayMs, this.#maxDelayMs);
  }

  /** The delay to wait now; each call grows the next one until the ceiling. */
  next(): number {
    const baseMs = this.#currentDelayMs;
    this.#currentDelayMs = Math.min(baseMs * this.#factor, this.#maxDelayMs);
    const spread = this.#jitter * (2 * this.#random() - 1);
    const jitteredMs = Math.round(baseMs * (1 + spread));
    return Math.min(Math.max(jitteredMs, 0), this.#maxDelayMs);
  }

  /** Back to the initial delay; call after the loop has run healthily. */
  reset(): void {
    this.#currentDelayMs = Math.min(this.#initialDelayMs, this.#maxDelayMs);
  }
}

/**
 * A restart loop's delays when the server may name its own wait (Retry-After): that wait for
 * `maxPaced` retries, the backoff left where it is meanwhile; past them the backoff's delay, never
 * below the named wait; the backoff's alone when none is named. Both restart from `reset()`.
 * client-go's REST client honours Retry-After for as many retries of one request (10).
 */
export class ServerPacedBackoff {
  #paced = 0;

  constructor(
    private readonly backoff: Backoff,
    private readonly maxPaced = 10,
  ) {}

  next(namedWaitMs: number | undefined): number {
    if (namedWaitMs === undefined) return this.backoff.next();
    if (this.#paced < this.maxPaced) {
      this.#paced += 1;
      return namedWaitMs;
    }
    return Math.max(namedWaitMs, this.backoff.next());
  }

  reset(): void {
    this.backoff.reset();
    this.#paced = 0;
  }
}

function requireNonNegativeFinite(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a finite number >= 0, got ${String(value)}`);
  }
  return value;
}
