// Owns expectations: what this controller has just written and not yet seen in its informer cache,
// so a stale cache cannot cause duplicate creates/deletes (ScaleExpectations, by controller key) or
// acting on an old pod (ResourceVersionExpectations, by pod UID). Records live in an lru-cache with a
// TTL so a lost watch event delays a controller by at most the TTL, never stalls it.
// It must not read the API, schedule timers or requeue keys; callers ask satisfied() and decide.

import { LRUCache } from 'lru-cache';

/** `kind` label of tailor_expectations_expired_total. */
export type ExpectationKind = 'scale' | 'resourceVersion';

export interface ExpectationsOptions {
  /** How long a record may stay unobserved before it is dropped. Default 5 minutes. */
  ttlMs?: number;
  /** Upper bound on records; the least recently used are evicted beyond it. Default 100,000. */
  maxEntries?: number;
  /** Monotonic clock in ms. Default performance.now (which Jest's fake timers also drive). */
  now?: () => number;
  /** Called once for each record dropped at its TTL while still pending, e.g. RuntimeMetrics.recordExpectationsExpired. */
  onExpired?: (kind: ExpectationKind, key: string) => void;
}

export const DEFAULT_EXPECTATIONS_TTL_MS = 5 * 60 * 1000;
const DEFAULT_MAX_ENTRIES = 100_000;

/** Pod names a controller key is still waiting to see created or deleted. */
export interface PendingScale {
  creations: string[];
  deletions: string[];
  /** Until the record expires and satisfied() turns true regardless. */
  expiresInMs: number;
}

interface ScaleRecord {
  creations: Set<string>;
  deletions: Set<string>;
}

/**
 * Scale expectations keyed by controller key (namespace/name). Set them before the create/delete
 * calls, observe them from informer events. A record is removed as soon as nothing is pending, so
 * every stored record is unsatisfied; its TTL runs from the first expectation of that record and is
 * not extended by later ones.
 */
export class ScaleExpectations {
  readonly #records: LRUCache<string, ScaleRecord>;

  constructor(options: ExpectationsOptions = {}) {
    this.#records = createExpiringCache<ScaleRecord>('scale', options);
  }

  expectCreations(key: string, podNames: readonly string[]): void {
    this.#expect(key, podNames, 'creations');
  }

  expectDeletions(key: string, podNames: readonly string[]): void {
    this.#expect(key, podNames, 'deletions');
  }

  observeCreation(key: string, podName: string): void {
    this.#observe(key, podName, 'creations');
  }

  observeDeletion(key: string, podName: string): void {
    this.#observe(key, podName, 'deletions');
  }

  /** True when nothing is pending for `key`, or its record expired (then dropped and reported). */
  satisfied(key: string): boolean {
    return this.#records.get(key) === undefined;
  }

  /** What `key` still waits for, or undefined when satisfied; for logs and requeueAfter. */
  pending(key: string): PendingScale | undefined {
    const record = this.#records.get(key);
    if (record === undefined) {
      return undefined;
    }
    return {
      creations: [...record.creations],
      deletions: [...record.deletions],
      expiresInMs: Math.max(this.#records.getRemainingTTL(key), 0),
    };
  }

  /** Forgets `key`, e.g. when its CloneSet is deleted. */
  delete(key: string): void {
    this.#records.delete(key);
  }

  #expect(key: string, podNames: readonly string[], action: keyof ScaleRecord): void {
    if (podNames.length === 0) {
      return;
    }
    let record = this.#records.get(key);
    if (record === undefined) {
      record = { creations: new Set(), deletions: new Set() };
      this.#records.set(key, record);
    }
    // Mutating in place keeps the record's original TTL: a stuck name cannot be kept alive by
    // later expectations.
    for (const podName of podNames) {
      record[action].add(podName);
    }
  }

  #observe(key: string, podName: string, action: keyof ScaleRecord): void {
    const record = this.#records.get(key);
    if (record === undefined) {
      return;
    }
    record[action].delete(podName);
    if (record.creations.size === 0 && record.deletions.size === 0) {
      this.#records.delete(key);
    }
  }
}

/**
 * resourceVersion expectations keyed by pod UID: after writing a pod and getting resourceVersion rv
 * back, do not act on that pod again until the cache shows rv or newer.
 */
export class ResourceVersionExpectations {
  readonly #expected: LRUCache<string, string>;

  constructor(options: ExpectationsOptions = {}) {
    this.#expected = createExpiringCache<string>('resourceVersion', options);
  }

  /** Expects `rv` for `uid`; an already expected newer version is kept. */
  expectResourceVersion(uid: string, rv: string): void {
    const current = this.#expected.get(uid);
    if (current !== undefined) {
      const order = compareResourceVersions(current, rv);
      if (order !== undefined && order >= 0) {
        return;
      }
    }
    // A new write restarts the TTL: the clock runs from the write the cache has yet to show.
    this.#expected.set(uid, rv);
  }

  /**
   * Records that the cache showed `rvSeen` for `uid`; clears the expectation once it is reached.
   * True when this very sighting cleared one (a round was waiting for it).
   */
  observe(uid: string, rvSeen: string): boolean {
    const expected = this.#expected.get(uid);
    if (expected === undefined || !isResourceVersionAtLeast(rvSeen, expected)) return false;
    this.#expected.delete(uid);
    return true;
  }

  /** True when no version is awaited for `uid`, or the wait expired (then dropped and reported). */
  satisfied(uid: string): boolean {
    return this.#expected.get(uid) === undefined;
  }

  /** Forgets `uid`, e.g. when the pod is deleted. */
  delete(uid: string): void {
    this.#expected.delete(uid);
  }
}

const DECIMAL = /^[0-9]+$/;

/**
 * Orders two resourceVersions: negative, zero or positive like a comparator, or undefined when they
 * differ and are not both decimal integers (the API server may use opaque strings; etcd's are
 * decimal and may exceed 2^53, hence BigInt).
 */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (a === b) {
    return 0;
  }
  if (!DECIMAL.test(a) || !DECIMAL.test(b)) {
    return undefined;
  }
  const difference = BigInt(a) - BigInt(b);
  return difference === 0n ? 0 : difference > 0n ? 1 : -1;
}

/**
 * True when `seen` is `expected` or newer. Versions that cannot be ordered count as newer when they
 * differ (as OpenKruise does): waiting on a comparison that can never succeed would stall the pod.
 */
export function isResourceVersionAtLeast(seen: string, expected: string): boolean {
  const order = compareResourceVersions(seen, expected);
  return order === undefined || order >= 0;
}

function createExpiringCache<V extends object | string>(
  kind: ExpectationKind,
  options: ExpectationsOptions,
): LRUCache<string, V> {
  const ttlMs = options.ttlMs ?? DEFAULT_EXPECTATIONS_TTL_MS;
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`expectations ttlMs must be a finite number > 0, got ${String(options.ttlMs)}`);
  }
  const clock = options.now ?? ((): number => performance.now());
  const onExpired = options.onExpired;
  return new LRUCache<string, V>({
    max: options.maxEntries ?? DEFAULT_MAX_ENTRIES,
    ttl: ttlMs,
    // 0: read the clock on every check. The default (1 ms) caches it behind a setTimeout per read.
    ttlResolution: 0,
    // lru-cache treats a start time of 0 as "no TTL"; a clock that starts at 0 (fake timers)
    // would make the first records immortal, so shift it by 1 ms (differences are unchanged).
    perf: { now: (): number => clock() + 1 },
    ...(onExpired !== undefined
      ? {
          dispose: (_value: V, key: string, reason: LRUCache.DisposeReason): void => {
            if (reason === 'expire') {
              onExpired(kind, key);
            }
          },
        }
      : {}),
  });
}
