// Kubernetes Events for the objects Tailor acts on (core/v1 Events, what `kubectl describe` shows),
// aggregated and rate-limited like client-go's recorder. Recording never throws and never blocks a
// reconcile. Must not: decide when to emit.
import { LRUCache } from 'lru-cache';
import { randomBytes } from 'node:crypto';
import PQueue from 'p-queue';
import type { KubeClient } from './kube-client.js';
import type { KubeObject } from '../api/wire.js';
import type { Logger } from './logger.js';

import type { EventType } from '../api/reasons.js';
import {
  DEFAULT_BATCH_TIMING,
  summaryDueAt,
  summaryMessage,
  type BatchTiming,
  type BatchTimes,
} from './pure/event-batch.js';

export interface EventRecorderOptions {
  client: KubeClient;
  component: string;
  logger: Logger;
  burst?: number;
  refillMs?: number;
  aggregateWindowMs?: number;
  /** When batch()'s summary is written (runtime/pure/event-batch.ts). Default: quiet 30 s, at most 5 min. */
  batchTiming?: BatchTiming;
  /** Event writes in flight at once. Default 4. */
  maxConcurrentWrites?: number;
  /** Event writes waiting for a turn; an event beyond them is dropped. Default 1,000. */
  maxQueuedWrites?: number;
  now?: () => number;
}

interface Batch extends BatchTimes {
  object: KubeObject;
  type: EventType;
  reason: string;
  what: string;
  /** Every subject of the batch, in order, each once; the summary names those after the first. */
  subjects: Set<string>;
  timer?: NodeJS.Timeout;
}

interface Aggregate {
  namespace: string;
  name: string;
  count: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * The same type/reason/message on the same object within 10 minutes bumps `count` on the existing
 * Event instead of creating another; a per-object token bucket (burst 25, one token per 5
 * minutes) drops floods so a hot loop cannot spam etcd. Writes run in the background, at most
 * `maxConcurrentWrites` (4) at a time so a burst of events cannot fill the client's connection
 * pool ahead of the controller's own writes, with at most `maxQueuedWrites` (1,000, as client-go's
 * broadcaster) waiting; beyond that an event is dropped and counted. `flush()` awaits them on
 * shutdown. `batch()` folds routine per-pod news into one event per object and reason (the first at
 * once, the rest as one summary once the news goes quiet), so a 1,000-pod rollout costs a handful
 * of event writes, not one per pod.
 */
export class EventRecorder {
  private readonly recent: LRUCache<string, Aggregate>;
  private readonly buckets = new LRUCache<string, Bucket>({ max: 10_000 });
  private readonly writes: PQueue;
  private readonly maxQueuedWrites: number;
  private readonly now: () => number;
  private dropped = 0;
  private readonly batches = new Map<string, Batch>();

  constructor(private readonly options: EventRecorderOptions) {
    this.now = options.now ?? Date.now;
    this.recent = new LRUCache({ max: 4096, ttl: options.aggregateWindowMs ?? 10 * 60_000, ttlAutopurge: false });
    this.writes = new PQueue({ concurrency: options.maxConcurrentWrites ?? 4 });
    this.maxQueuedWrites = options.maxQueuedWrites ?? 1_000;
  }

  get droppedEvents(): number {
    return this.dropped;
  }

  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    const meta = object.metadata;
    if (!meta?.name || !meta.uid) return;
    const objectKey = `${meta.uid}`;
    if (!this.takeToken(objectKey)) {
      this.dropped++;
      this.options.logger.debug({ reason, object: meta.name }, 'event dropped by rate limit');
      return;
    }
    if (this.writes.size >= this.maxQueuedWrites) {
      this.dropped++;
      this.options.logger.debug(
        { reason, object: meta.name, queued: this.writes.size },
        'event dropped: too many waiting to be written',
      );
      return;
    }
    const namespace = meta.namespace ?? 'default';
    const aggregateKey = `${objectKey}\u0000${type}\u0000${reason}\u0000${message}`;
    // Looked up when the write's turn comes, so an event queued behind its twin bumps it.
    const write = async (): Promise<void> => {
      const existing = this.recent.get(aggregateKey);
      if (existing) {
        await this.bump(existing);
        return;
      }
      const created = await this.create(object, namespace, type, reason, message);
      if (created) this.recent.set(aggregateKey, created);
    };
    // The failure handler is attached at once: a rejection left for later would be unhandled
    // and end the process.
    this.writes
      .add(write)
      .catch((err: unknown) => this.options.logger.warn({ err, reason, object: meta.name }, 'could not record event'));
  }

  /**
   * Records that `what` happened to `subject` (a pod name) on `object`. The first subject of a
   * batch is an event of its own at once; later ones become one summary event ("<what>: 3 pods:
   * a, b, c") when it is due (runtime/pure/event-batch.ts).
   */
  batch(object: KubeObject, type: EventType, reason: string, what: string, subject: string): void {
    const key = `${object.metadata?.uid}\u0000${type}\u0000${reason}\u0000${what}`;
    const open = this.batches.get(key);
    if (open) {
      // The same news about the same pod twice in a batch (a round that repeats) is news once.
      if (!open.subjects.has(subject)) {
        open.subjects.add(subject);
        open.lastNewsAt = this.now();
      }
      return;
    }
    this.event(object, type, reason, `${what}: ${subject}`);
    const now = this.now();
    const batch: Batch = { object, type, reason, what, subjects: new Set([subject]), openedAt: now, lastNewsAt: now };
    this.batches.set(key, batch);
    this.armSummary(key, batch);
  }

  /** One timer per batch: when it fires early (news came since), it is armed again for the new time. */
  private armSummary(key: string, batch: Batch): void {
    const timing = this.options.batchTiming ?? DEFAULT_BATCH_TIMING;
    batch.timer = setTimeout(
      () => {
        if (this.now() < summaryDueAt(batch, timing)) this.armSummary(key, batch);
        else this.closeBatch(key);
      },
      Math.max(0, summaryDueAt(batch, timing) - this.now()),
    );
    batch.timer.unref();
  }

  /** Resolves when every event recorded so far, batched ones included, has been written (or failed). */
  async flush(): Promise<void> {
    for (const key of [...this.batches.keys()]) this.closeBatch(key);
    await this.writes.onIdle();
  }

  private closeBatch(key: string): void {
    const batch = this.batches.get(key);
    if (!batch) return;
    clearTimeout(batch.timer);
    this.batches.delete(key);
    const summary = summaryMessage(batch.what, [...batch.subjects].slice(1));
    if (summary !== undefined) this.event(batch.object, batch.type, batch.reason, summary);
  }

  private takeToken(key: string): boolean {
    const burst = this.options.burst ?? 25;
    const refillMs = this.options.refillMs ?? 5 * 60_000;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedAt: now };
    const refilled = Math.min(burst, bucket.tokens + Math.floor((now - bucket.updatedAt) / refillMs));
    const updatedAt = refilled > bucket.tokens ? now : bucket.updatedAt;
    if (refilled < 1) {
      this.buckets.set(key, { tokens: refilled, updatedAt });
      return false;
    }
    this.buckets.set(key, { tokens: refilled - 1, updatedAt });
    return true;
  }

  private async create(
    object: KubeObject,
    namespace: string,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<Aggregate | undefined> {
    const meta = object.metadata!;
    const timestamp = new Date(this.now()).toISOString();
    const name = `${meta.name}.${randomBytes(8).toString('hex')}`;
    await this.options.client.create(`/api/v1/namespaces/${namespace}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: this.options.component },
      reportingComponent: this.options.component,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
    });
    return { namespace, name, count: 1 };
  }

  private async bump(aggregate: Aggregate): Promise<void> {
    aggregate.count++;
    await this.options.client.patch(
      `/api/v1/namespaces/${aggregate.namespace}/events/${aggregate.name}`,
      { count: aggregate.count, lastTimestamp: new Date(this.now()).toISOString() },
      'merge',
    );
  }
}
