// Leader election on a coordination.k8s.io/v1 Lease, with client-go's timing rules: a lease is
// taken over only after `leaseDurationMs` have passed since this process last *observed* it
// change (so clocks need not agree), the leader renews every `retryPeriodMs`, and a leader that
// cannot renew within `renewDeadlineMs` stops leading at once. Writes are merge patches that
// carry the resourceVersion read, so two candidates can never both win a round.
// Must not: keep acting after losing; the caller's onStoppedLeading ends the process.
import type { KubeClient } from './kube-client.js';
import { isConflict, isNotFound } from './kube-client.js';
import type { Logger } from './logger.js';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

interface Lease {
  metadata?: { resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

const microTime = (d = new Date()): string => d.toISOString().replace('Z', '000Z');

export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observedRecord = '';
  private observedAt = 0;
  private leading = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastRenewAt = 0;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly options: LeaderElectionOptions) {
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    if (this.renewDeadlineMs >= this.leaseDurationMs) {
      throw new Error('leader election: renew deadline must be shorter than the lease duration');
    }
  }

  isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.tick();
  }

  /** Stops campaigning; if leading, gives the lease up so a successor need not wait it out. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
    if (this.leading) {
      this.leading = false;
      await this.release();
    }
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.options.namespace}/leases/${this.options.name}`;
  }

  private tick(): void {
    if (this.stopped) return;
    this.inFlight = this.round().finally(() => {
      if (!this.stopped) this.timer = setTimeout(() => this.tick(), this.retryPeriodMs);
    });
  }

  private async round(): Promise<void> {
    const log = this.options.logger;
    let acquired = false;
    try {
      acquired = await this.tryAcquireOrRenew();
    } catch (err) {
      log.warn({ err, lease: this.options.name }, 'leader election round failed');
    }
    if (this.stopped) return;
    if (acquired) {
      this.lastRenewAt = Date.now();
      if (!this.leading) {
        this.leading = true;
        log.info({ identity: this.options.identity, lease: this.options.name }, 'became leader');
        this.options.onStartedLeading();
      }
    } else if (this.leading && Date.now() - this.lastRenewAt > this.renewDeadlineMs) {
      this.leading = false;
      this.stopped = true;
      log.error({ identity: this.options.identity, lease: this.options.name }, 'lost the lease; stopping');
      this.options.onStoppedLeading();
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { client, identity } = this.options;
    const now = new Date();
    let lease: Lease;
    try {
      lease = await client.get<Lease>(this.path);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await client.create(this.path.replace(/\/[^/]+$/, ''), {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.options.name, namespace: this.options.namespace },
          spec: this.spec(identity, now, now, 0),
        });
        return true;
      } catch (createErr) {
        if (isConflict(createErr)) return false;
        throw createErr;
      }
    }
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity}/${spec.renewTime}`;
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = Date.now();
    }
    const heldByOther = !!spec.holderIdentity && spec.holderIdentity !== identity;
    if (heldByOther && this.observedAt + (spec.leaseDurationSeconds ?? 15) * 1000 > Date.now()) return false;
    const transitions = (spec.leaseTransitions ?? 0) + (spec.holderIdentity === identity ? 0 : 1);
    const acquireTime = spec.holderIdentity === identity && spec.acquireTime ? new Date(spec.acquireTime) : now;
    try {
      await client.patch(
        this.path,
        { metadata: { resourceVersion: lease.metadata?.resourceVersion }, spec: this.spec(identity, acquireTime, now, transitions) },
        'merge',
      );
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

  private async release(): Promise<void> {
    try {
      await this.options.client.patch(this.path, { spec: { holderIdentity: null, leaseDurationSeconds: 1 } }, 'merge');
      this.options.logger.info({ lease: this.options.name }, 'released the lease');
    } catch (err) {
      this.options.logger.warn({ err, lease: this.options.name }, 'could not release the lease');
    }
  }
}
