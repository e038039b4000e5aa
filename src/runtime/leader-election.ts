// Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules (LeaderElector).
// Must not: keep acting after losing; the caller's onStoppedLeading stops the work and the process.
import type { CallOptions, KubeClient } from './kube-client.js';
import { isConflict, isNotFound } from './kube-client.js';
import type { Logger } from './logger.js';

/** client-go's JitterFactor: the renew deadline must leave room for a jittered retry. */
const JITTER_FACTOR = 1.2;

export interface LeaderElectionOptions {
  /** Its requestTimeoutMs, when set, also bounds each request (whichever deadline is sooner). */
  client: Pick<KubeClient, 'get' | 'create' | 'patch'> & { readonly requestTimeoutMs?: number };
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger;
  onStartedLeading: () => void;
  /** Leadership ended without stop() being called (renewal failed past the deadline, or lost). */
  onStoppedLeading: () => void;
  /** Milliseconds on a clock that never steps (default performance.now); tests inject a stall. */
  monotonicNow?: () => number;
}

interface Lease {
  metadata?: { resourceVersion?: string };
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

type ElectorState = 'new' | 'candidate' | 'leading' | 'stopped';

const microTime = (d: Date): string => d.toISOString().replace('Z', '000Z');

/** Checks client-go's nesting of the three durations; throws a RangeError naming the rule broken. */
export function validateLeaderElectionTimings(
  leaseDurationMs: number,
  renewDeadlineMs: number,
  retryPeriodMs: number,
): void {
  for (const [name, value] of [
    ['lease duration', leaseDurationMs],
    ['renew deadline', renewDeadlineMs],
    ['retry period', retryPeriodMs],
  ] as const) {
    if (!(value > 0)) throw new RangeError(`leader election: ${name} must be > 0, got ${value} ms`);
  }
  if (renewDeadlineMs >= leaseDurationMs) {
    throw new RangeError(
      `leader election: renew deadline (${renewDeadlineMs} ms) must be shorter than the lease duration (${leaseDurationMs} ms)`,
    );
  }
  if (renewDeadlineMs <= retryPeriodMs * JITTER_FACTOR) {
    throw new RangeError(
      `leader election: renew deadline (${renewDeadlineMs} ms) must be longer than ${JITTER_FACTOR} × the retry period (${retryPeriodMs} ms)`,
    );
  }
}

/**
 * Leadership of one Lease, with client-go's rules:
 * - the durations must nest: leaseDuration > renewDeadline > retryPeriod × 1.2 (checked here);
 * - a lease held by another is taken over only after `leaseDurationMs` have passed since this
 *   process last *observed* it change, so clocks need not agree;
 * - the leader renews every `retryPeriodMs`; each request of a round is bounded by what is left
 *   of the renew deadline, and a leader that has not renewed within `renewDeadlineMs` stops
 *   leading at that instant (a timer, not the next round, decides), a full
 *   `leaseDurationMs - renewDeadlineMs` before any other replica may take over;
 * - a renewal counts from when its round *started* (the others observe the write no earlier),
 *   never from when the answer arrived, so a late answer cannot stretch leadership;
 * - every duration is measured on the monotonic clock: a step of the wall clock neither ends
 *   leadership nor lets a candidate take a live lease
 *   (docs/decisions/0040-monotonic-leadership-write-guard-and-the-lease-connection.md);
 * - `writeRefusal()` answers "may this process write now" from the clock alone, so the client
 *   can refuse a write the instant the deadline has passed, even if a stalled event loop has
 *   not yet run the deadline's timer.
 * - every write carries the resourceVersion read, so two candidates never both win a round;
 * - release writes only with the resourceVersion of this process's own last write as a
 *   precondition: a lease someone else wrote since is never erased.
 */
export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => number;
  private state: ElectorState = 'new';
  private observedRecord = '';
  /** Monotonic instant the Lease's record was last seen to change. */
  private observedAt = 0;
  /** resourceVersion of the Lease as this process last wrote it; the release precondition. */
  private ownResourceVersion: string | undefined;
  /** Monotonic instant leadership ends without another renewal: the last successful round's start + renewDeadline. */
  private leadingUntil = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** Aborts the requests of the round in flight when leadership is lost. */
  private roundAbort = new AbortController();
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly options: LeaderElectionOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    validateLeaderElectionTimings(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.now = options.monotonicNow ?? (() => performance.now());
  }

  isLeader(): boolean {
    return this.writeRefusal() === undefined;
  }

  /**
   * Why this process may not write at this instant (not leading, or the renew deadline has
   * passed on the monotonic clock), or undefined while it leads. Decided from the clock alone,
   * so it holds even when the loop was too busy to run the deadline's timer.
   */
  writeRefusal(): Error | undefined {
    const lease = `${this.options.namespace}/${this.options.name}`;
    if (this.state !== 'leading') return new Error(`not the leader of lease ${lease} (${this.state})`);
    const overdueMs = this.now() - this.leadingUntil;
    if (overdueMs >= 0) {
      return new Error(
        `lease ${lease} not renewed within ${this.renewDeadlineMs} ms (${Math.round(overdueMs)} ms overdue)`,
      );
    }
    return undefined;
  }

  start(): void {
    if (this.state !== 'new') return;
    this.state = 'candidate';
    this.tick();
  }

  /**
   * Stops campaigning. If leading, waits for the round in flight (bounded by its deadline), then
   * gives the lease up so a successor need not wait it out. Does not call onStoppedLeading.
   */
  async stop(): Promise<void> {
    const wasLeading = this.state === 'leading';
    this.state = 'stopped';
    clearTimeout(this.retryTimer);
    clearTimeout(this.deadlineTimer);
    await this.inFlight;
    if (wasLeading) await this.release();
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.options.namespace}/leases/${this.options.name}`;
  }

  private tick(): void {
    if (this.state === 'stopped') return;
    this.inFlight = this.round().finally(() => {
      if (this.state !== 'stopped') this.retryTimer = setTimeout(() => this.tick(), this.nextRoundInMs());
    });
  }

  /**
   * The retry period, or sooner while leading on a round that ended late: leadership counts from
   * the round's start, so a slow answer (an API server recovering) may leave less than a retry
   * period of it, and waiting the full period would lose a lease the next round could renew.
   */
  private nextRoundInMs(): number {
    if (this.state !== 'leading') return this.retryPeriodMs;
    return Math.min(this.retryPeriodMs, Math.max(0, (this.leadingUntil - this.now()) / 2));
  }

  private async round(): Promise<void> {
    const log = this.options.logger;
    // A loop stalled past the deadline: the deadline's timer is late, and renewing now would
    // hide that this process could not have kept the others out meanwhile.
    if (this.state === 'leading' && this.now() >= this.leadingUntil) {
      this.lose();
      return;
    }
    const startedAt = this.now();
    let acquired = false;
    try {
      acquired = await this.tryAcquireOrRenew(this.callOptions(startedAt));
    } catch (err) {
      if (this.state !== 'stopped') log.warn({ err, lease: this.options.name }, 'leader election round failed');
    }
    if (this.state === 'stopped' || !acquired) return;
    const leadingUntil = startedAt + this.renewDeadlineMs;
    if (this.now() >= leadingUntil) {
      if (this.state === 'leading') this.lose();
      else log.warn({ lease: this.options.name }, 'took the lease too late in the round to lead on it; trying again');
      return;
    }
    this.leadingUntil = leadingUntil;
    this.armRenewDeadline();
    if (this.state === 'candidate') {
      this.state = 'leading';
      log.info({ identity: this.options.identity, lease: this.options.name }, 'became leader');
      this.options.onStartedLeading();
    }
  }

  /**
   * A leader's requests end by the renew deadline, a candidate's within one renew deadline; and
   * none outlives the client's own request deadline, so one hung socket costs one attempt, not
   * the whole renew deadline.
   */
  private callOptions(startedAt: number): CallOptions {
    const left = this.state === 'leading' ? Math.max(1, this.leadingUntil - startedAt) : this.renewDeadlineMs;
    return { timeoutMs: Math.min(left, this.options.client.requestTimeoutMs ?? left), signal: this.roundAbort.signal };
  }

  private armRenewDeadline(): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => this.lose(), Math.max(0, this.leadingUntil - this.now()));
  }

  /** The renew deadline passed without a renewal: stop leading now, whatever is in flight. */
  private lose(): void {
    if (this.state !== 'leading') return;
    this.state = 'stopped';
    clearTimeout(this.retryTimer);
    clearTimeout(this.deadlineTimer);
    const reason = new Error(
      `leader election: lease ${this.options.name} not renewed within ${this.renewDeadlineMs} ms`,
    );
    this.roundAbort.abort(reason);
    this.options.logger.error(
      { identity: this.options.identity, lease: this.options.name },
      'lost the lease; stopping',
    );
    this.options.onStoppedLeading();
  }

  private async tryAcquireOrRenew(call: CallOptions): Promise<boolean> {
    const { client, identity } = this.options;
    // Wall-clock time, only to be written into the Lease for people and other tools to read.
    const now = new Date();
    let lease: Lease;
    try {
      lease = await client.get<Lease>(this.path, undefined, call);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        const created = await client.create<Lease>(
          this.path.replace(/\/[^/]+$/, ''),
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.options.name, namespace: this.options.namespace },
            spec: this.spec(identity, now, now, 0),
          },
          call,
        );
        this.ownResourceVersion = created?.metadata?.resourceVersion;
        return true;
      } catch (createErr) {
        if (isConflict(createErr)) return false;
        throw createErr;
      }
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}/${spec.renewTime ?? ''}`;
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = this.now();
    }
    const heldByOther = !!spec.holderIdentity && spec.holderIdentity !== identity;
    if (heldByOther && this.observedAt + (spec.leaseDurationSeconds ?? 15) * 1000 > this.now()) return false;
    const ours = spec.holderIdentity === identity;
    const transitions = (spec.leaseTransitions ?? 0) + (ours ? 0 : 1);
    const acquireTime = ours && spec.acquireTime ? new Date(spec.acquireTime) : now;
    try {
      const written = await client.patch<Lease>(
        this.path,
        {
          metadata: { resourceVersion: lease.metadata?.resourceVersion },
          spec: this.spec(identity, acquireTime, now, transitions),
        },
        'merge',
        undefined,
        call,
      );
      this.ownResourceVersion = written?.metadata?.resourceVersion;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
    return true;
  }

  private spec(holder: string, acquired: Date, renewed: Date, transitions: number): Lease['spec'] {
    return {
      holderIdentity: holder,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: microTime(acquired),
      renewTime: microTime(renewed),
      leaseTransitions: transitions,
    };
  }

  /** Clears the holder only if the Lease is still as this process last wrote it. */
  private async release(): Promise<void> {
    const log = this.options.logger;
    if (!this.ownResourceVersion) {
      log.warn({ lease: this.options.name }, 'not releasing the lease: its last write by this process is unknown');
      return;
    }
    const now = microTime(new Date());
    try {
      await this.options.client.patch(
        this.path,
        {
          metadata: { resourceVersion: this.ownResourceVersion },
          spec: { holderIdentity: null, leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
        },
        'merge',
        undefined,
        { timeoutMs: this.renewDeadlineMs },
      );
      log.info({ lease: this.options.name }, 'released the lease');
    } catch (err) {
      if (isConflict(err))
        log.warn({ lease: this.options.name }, 'not releasing the lease: it changed since this process last wrote it');
      else log.warn({ err, lease: this.options.name }, 'could not release the lease');
    }
  }
}
