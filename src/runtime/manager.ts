// The manager runs one Tailor process's machinery in the right order and takes it down cleanly:
//   start: HTTP endpoints → informers (caches fill whether or not we lead) and, at the same
//          time, leader election (if enabled) → controllers start once leading *and* synced.
//   stop:  no new work → in-flight reconciles finish within the grace period → informers stop
//          → events flushed (while still leading, so they may be written) → lease released →
//          endpoints and sockets closed. Nothing is left holding the event loop.
// Losing the lease ends the work at once and is reported to the caller.
// Must not: know what a controller does.
import { Controller, type ControllerOptions } from './controller.js';
import { EventRecorder } from './events.js';
import { HttpEndpoints } from './http-server.js';
import { Backoff } from './backoff.js';
import { Informer, type InformerOptions } from './informer.js';
import { KubeClient, type KubeAuth } from './kube-client.js';
import type { KubeObject } from '../api/wire.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import type { Logger } from './logger.js';
import { RuntimeMetrics } from './metrics.js';

export interface ManagerOptions {
  kubeConfig: KubeAuth;
  logger: Logger;
  component: string;
  metricsAddress?: string;
  healthAddress?: string;
  leaderElection?: Pick<
    LeaderElectionOptions,
    'namespace' | 'name' | 'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'
  >;
  shutdownGraceMs?: number;
  metrics?: RuntimeMetrics;
  /** Re-deliver every cached object to the informers' handlers this often; 0 disables. Default 10 min. */
  resyncPeriodMs?: number;
  /** Deadline of each API request (a watch's: until its headers). Default 30 s. */
  requestTimeoutMs?: number;
  /** Informers abandon a watch that delivered nothing for this long, and relist. Default 5 min. */
  noEventTimeoutMs?: number;
  /**
   * The ceiling of an informer's backoff while its list or watch fails (Backoff: 0.8 s doubling).
   * Default 30 s, as client-go's reflector; the controller's few informers use less, so that a
   * restarted API server is seen within seconds (decision 77).
   */
  watchRetryMaxMs?: number;
}

/** Connections of the Lease's own client: a round's requests go one after another. */
const LEASE_CLIENT_SOCKETS = 2;

export class Manager {
  readonly client: KubeClient;
  /** The Lease's own connection; undefined without leader election. */
  private readonly leaseClient: KubeClient | undefined;
  readonly metrics: RuntimeMetrics;
  readonly events: EventRecorder;
  /** Every informer, whatever it caches: the manager only starts, syncs and stops them. */
  private readonly informers: Pick<
    Informer<KubeObject>,
    'start' | 'stop' | 'hasSynced' | 'waitForSync' | 'retryNow'
  >[] = [];
  private readonly controllers: Controller[] = [];
  private readonly endpoints: HttpEndpoints[] = [];
  private elector: LeaderElector | undefined;
  private stopping: Promise<void> | undefined;
  private lostLease: (() => void) | undefined;
  private controllersStarted = false;
  private leadershipLost = false;

  /**
   * With leader election, the shared client's every write first asks the elector whether the
   * lease is still valid at that monotonic instant, and is refused unsent if not (not leading
   * yet, or the renew deadline passed while the loop was busy); the Lease itself is read and
   * written by a client of its own, so a renewal never waits behind the controller's writes for a
   * socket (docs/decisions/0040-monotonic-leadership-write-guard-and-the-lease-connection.md).
   */
  constructor(private readonly options: ManagerOptions) {
    this.metrics = options.metrics ?? new RuntimeMetrics();
    const observe = (method: string, code: string, host: string): void =>
      this.metrics.restClientRequestsTotal.inc({ method, code, host });
    const timeout = options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs };
    const leaderElected = options.leaderElection !== undefined;
    this.client = new KubeClient(options.kubeConfig, observe, {
      ...timeout,
      ...(leaderElected ? { writeGuard: () => this.leadershipRefusal() } : {}),
    });
    this.leaseClient = leaderElected
      ? new KubeClient(options.kubeConfig, observe, { ...timeout, maxSockets: LEASE_CLIENT_SOCKETS })
      : undefined;
    this.events = new EventRecorder({ client: this.client, component: options.component, logger: options.logger });
  }

  /**
   * An informer that resyncs: each cached object is re-delivered to the handlers every
   * `resyncPeriodMs` (default 10 min), so every object is reconciled periodically even when
   * nothing changes. `client`: read with another identity than the manager's (the node agent reads
   * its node's pods as the node); the manager's client by default.
   */
  informer<T extends KubeObject>(
    options: Omit<InformerOptions<T>, 'client' | 'logger'> & { client?: InformerOptions<T>['client'] },
  ): Informer<T> {
    const { noEventTimeoutMs, watchRetryMaxMs } = this.options;
    const informer = new Informer<T>({
      resyncPeriodMs: this.options.resyncPeriodMs ?? 10 * 60_000,
      ...(noEventTimeoutMs === undefined ? {} : { noEventTimeoutMs }),
      ...(watchRetryMaxMs === undefined ? {} : { backoff: new Backoff({ maxDelayMs: watchRetryMaxMs }) }),
      ...options,
      client: options.client ?? this.client,
      logger: this.options.logger,
    });
    informer.onReconnect(() => this.retryFailedNow(options.name));
    this.informers.push(informer);
    return informer;
  }

  /**
   * The API server answers again after a failure: every informer backing off restarts now, and
   * every key backing off after a failed reconcile is retried now, rather than at the end of a
   * backoff that grew through the outage (decision 77).
   */
  private retryFailedNow(informer: string): void {
    for (const other of this.informers) other.retryNow();
    let keys = 0;
    for (const controller of this.controllers) keys += controller.queue.retryFailedNow();
    if (keys > 0) this.options.logger.info({ informer, keys }, 'API server answers again: retrying failed keys now');
  }

  controller(options: Omit<ControllerOptions, 'logger' | 'metrics'>): Controller {
    const controller = new Controller({ ...options, logger: this.options.logger, metrics: this.metrics });
    this.controllers.push(controller);
    return controller;
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.controllersStarted;
  }

  /** Why a write may not leave this process now (leader election only), or undefined. */
  private leadershipRefusal(): Error | undefined {
    return this.elector ? this.elector.writeRefusal() : new Error('not leading yet: leader election has not started');
  }

  cachesSynced(): boolean {
    return this.informers.every((i) => i.hasSynced());
  }

  /**
   * Runs until stop() is called or the lease is lost. Resolves 'stopped' after a clean stop and
   * 'lost-lease' when leadership ended; the caller exits non-zero for the latter.
   */
  async run(): Promise<'stopped' | 'lost-lease'> {
    const log = this.options.logger;
    const { metricsAddress, healthAddress } = this.options;
    this.metrics.startEventLoopMonitor();
    if (metricsAddress)
      this.endpoints.push(new HttpEndpoints({ address: metricsAddress, registry: this.metrics.registry }));
    if (healthAddress) {
      this.endpoints.push(
        new HttpEndpoints({
          address: healthAddress,
          healthz: { ping: () => true },
          readyz: { 'informers-synced': () => this.cachesSynced() || 'caches not synced' },
        }),
      );
    }
    await this.startEndpoints();
    if (this.stopping) {
      // Stopped while the endpoints were starting: start nothing that shutdown would not stop.
      await this.stopping;
      return 'stopped';
    }
    for (const i of this.informers) i.start();
    const synced = Promise.all(this.informers.map((i) => i.waitForSync())).then(() => {
      if (!this.stopping) log.info({ informers: this.informers.length }, 'caches synced');
    });

    const outcome = new Promise<'stopped' | 'lost-lease'>((resolve) => {
      this.lostLease = () => resolve('lost-lease');
      void this.whenStopping().then(() => resolve('stopped'));
    });
    const startOnceSynced = (): void => {
      void synced.then(() => this.startControllers());
    };
    // Campaigning does not wait for the caches (as in controller-runtime), so a cache that cannot
    // fill yet (its CRD not installed; the informer retries) does not stop the replicas from
    // deciding who leads. Losing the lease (not renewed within the renew deadline) fences the
    // client (no write leaves this process any more, in flight or later), shuts every
    // controller's queue and aborts its in-flight reconciles' signal, then tells the caller
    // (which exits non-zero so the pod restarts and campaigns again).
    const le = this.options.leaderElection;
    if (le && this.leaseClient) {
      this.elector = new LeaderElector({
        client: this.leaseClient,
        ...le,
        logger: log,
        onStartedLeading: startOnceSynced,
        onStoppedLeading: () => {
          this.leadershipLost = true;
          const reason = new Error(`lost the lease ${le.namespace}/${le.name}`);
          this.client.fence(reason);
          for (const c of this.controllers)
            c.cancel(reason).catch((err: unknown) =>
              this.options.logger.error({ err }, 'stopping a controller failed'),
            );
          this.lostLease?.();
        },
      });
      this.elector.start();
    } else {
      startOnceSynced();
    }
    const result = await outcome;
    await this.stop();
    return result;
  }

  /**
   * Binds /metrics, /healthz and /readyz. A port that cannot be bound stops what did start and
   * fails the run: a process listening on its metrics port alone would live on, doing nothing,
   * its health port never answering.
   */
  private async startEndpoints(): Promise<void> {
    try {
      for (const e of this.endpoints) {
        const addr = await e.start();
        this.options.logger.info({ address: `${addr.address}:${addr.port}` }, 'serving endpoints');
      }
    } catch (err) {
      // The bind's error is the one to report, whatever stopping says.
      await this.stop().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Work to do once the controllers have stopped, while the client still works (a component
   * withdrawing what it published); errors are logged, never thrown.
   */
  onShutdown(hook: () => Promise<void>): void {
    this.shutdownHooks.push(hook);
  }

  private readonly shutdownHooks: Array<() => Promise<void>> = [];

  /** Graceful stop; safe to call more than once. */
  async stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    await this.stopping;
  }

  private stopRequested: (() => void) | undefined;
  private readonly stopSignal = new Promise<void>((resolve) => (this.stopRequested = resolve));
  private whenStopping(): Promise<void> {
    return this.stopSignal;
  }

  private startControllers(): void {
    if (this.controllersStarted || this.stopping || this.leadershipLost) return;
    this.controllersStarted = true;
    for (const c of this.controllers) c.start();
  }

  private async shutdown(): Promise<void> {
    const log = this.options.logger;
    this.stopRequested?.();
    const grace = this.options.shutdownGraceMs ?? 30_000;
    log.info({ graceMs: grace }, 'shutting down');
    if (this.controllersStarted) await Promise.all(this.controllers.map((c) => c.stop(grace)));
    for (const hook of this.shutdownHooks)
      await hook().catch((err: unknown) => log.warn({ err }, 'a shutdown hook failed'));
    await Promise.all(this.informers.map((i) => i.stop()));
    await this.events.flush();
    await this.elector?.stop();
    await Promise.all(this.endpoints.map((e) => e.stop()));
    this.client.close();
    this.leaseClient?.close();
    this.metrics.stopEventLoopMonitor();
    log.info('stopped');
  }
}
