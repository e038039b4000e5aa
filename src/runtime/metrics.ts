// Owns the Prometheus metrics of the controller machinery, under controller-runtime's and client-go's
// names so existing dashboards work, on a Registry owned by the caller or created here.
// It must never touch prom-client's global default registry, and never serve HTTP (the health/metrics
// server renders `registry` itself or through renderMetrics). The process's memory figures are read
// when scraped, never sampled on a timer.

import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  RECONCILE_OUTCOMES,
  type ControllerMetricsFactory,
  type ReconcileMetrics,
  type ReconcileOutcome,
} from './controller.js';
import type { ExpectationKind } from './expectations.js';
import type { WorkQueueMetrics } from './workqueue.js';

// controller-runtime's buckets for controller_runtime_reconcile_time_seconds.
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

// controller-runtime's workqueue buckets: ExponentialBuckets(10e-9, 10, 12), spelled out so the
// `le` labels are exact decimals rather than accumulated floating-point products.
const WORKQUEUE_DURATION_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000];

/**
 * All runtime metrics on one Registry. A Registry accepts each name once, so build one RuntimeMetrics
 * per Registry; tests build as many as they like, each on its own fresh Registry.
 */
export class RuntimeMetrics implements ControllerMetricsFactory {
  readonly registry: Registry;

  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrorsTotal: Counter<'controller'>;
  readonly terminalReconcileErrorsTotal: Counter<'controller'>;
  readonly reconcileTimeSeconds: Histogram<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;

  readonly workqueueDepth: Gauge<'name'>;
  readonly workqueueAddsTotal: Counter<'name'>;
  readonly workqueueQueueDurationSeconds: Histogram<'name'>;
  readonly workqueueWorkDurationSeconds: Histogram<'name'>;
  readonly workqueueRetriesTotal: Counter<'name'>;

  readonly restClientRequestsTotal: Counter<'code' | 'method' | 'host'>;
  readonly expectationsExpiredTotal: Counter<'kind'>;

  readonly residentMemoryBytes: Gauge;
  readonly heapSizeUsedBytes: Gauge;
  readonly heapSizeTotalBytes: Gauge;
  readonly externalMemoryBytes: Gauge;
  readonly heapSpaceSizeUsedBytes: Gauge<'space'>;

  /**
   * Event-loop delay, sampled while the process runs (startEventLoopMonitor): a first sync or a round
   * that holds the loop near the lease's renew deadline shows in nodejs_eventloop_lag_max_seconds.
   */
  private readonly eventLoopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });

  startEventLoopMonitor(): void {
    this.eventLoopDelay.enable();
  }

  stopEventLoopMonitor(): void {
    this.eventLoopDelay.disable();
  }

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];

    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrorsTotal = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.terminalReconcileErrorsTotal = new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTimeSeconds = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_TIME_BUCKETS,
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });

    this.workqueueDepth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
    });
    this.workqueueAddsTotal = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.workqueueQueueDurationSeconds = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name'],
      buckets: WORKQUEUE_DURATION_BUCKETS,
      registers,
    });
    this.workqueueWorkDurationSeconds = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name'],
      buckets: WORKQUEUE_DURATION_BUCKETS,
      registers,
    });
    this.workqueueRetriesTotal = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });

    this.restClientRequestsTotal = new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host',
      labelNames: ['code', 'method', 'host'],
      registers,
    });
    this.expectationsExpiredTotal = new Counter({
      name: 'tailor_expectations_expired_total',
      help: 'Expectations dropped because they were not observed within their TTL, by kind',
      labelNames: ['kind'],
      registers,
    });

    // prom-client's default-metric names (dashboards know them), without its event-loop and GC
    // observers: what the memory is made of, so the bench can attribute each saving (issue 25).
    const readOnScrape = (name: string, help: string, read: () => number): Gauge =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    this.residentMemoryBytes = readOnScrape('process_resident_memory_bytes', 'Resident memory size in bytes', () =>
      process.memoryUsage.rss(),
    );
    this.heapSizeTotalBytes = readOnScrape(
      'nodejs_heap_size_total_bytes',
      'Process heap size from Node.js in bytes',
      () => process.memoryUsage().heapTotal,
    );
    this.heapSizeUsedBytes = readOnScrape(
      'nodejs_heap_size_used_bytes',
      'Process heap size used from Node.js in bytes',
      () => process.memoryUsage().heapUsed,
    );
    this.externalMemoryBytes = readOnScrape(
      'nodejs_external_memory_bytes',
      'Node.js external memory size in bytes',
      () => process.memoryUsage().external,
    );
    const loopDelay = this.eventLoopDelay;
    new Gauge({
      name: 'nodejs_eventloop_lag_max_seconds',
      help: 'The longest the event loop was blocked since the last scrape (sampled every 20 ms while the process runs)',
      registers,
      collect() {
        this.set(loopDelay.count > 0 ? loopDelay.max / 1e9 : 0);
        loopDelay.reset();
      },
    });
    this.heapSpaceSizeUsedBytes = new Gauge({
      name: 'nodejs_heap_space_size_used_bytes',
      help: 'Process heap space size used from Node.js in bytes',
      labelNames: ['space'],
      registers,
      collect() {
        for (const s of getHeapSpaceStatistics())
          this.set({ space: s.space_name.replace(/_space$/, '') }, s.space_used_size);
      },
    });
  }

  /** Hooks for one controller; its series start at zero so dashboards show them before any reconcile. */
  forController(name: string): ReconcileMetrics {
    const byOutcome = new Map<ReconcileOutcome, Counter.Internal>();
    for (const outcome of RECONCILE_OUTCOMES) {
      const child = this.reconcileTotal.labels({ controller: name, result: outcome });
      child.inc(0);
      byOutcome.set(outcome, child);
    }
    const labels = { controller: name };
    const errors = this.reconcileErrorsTotal.labels(labels);
    const terminalErrors = this.terminalReconcileErrorsTotal.labels(labels);
    const reconcileTime = this.reconcileTimeSeconds.labels(labels);
    const activeWorkers = this.activeWorkers.labels(labels);
    errors.inc(0);
    terminalErrors.inc(0);
    activeWorkers.set(0);
    return {
      incReconcileTotal: (outcome: ReconcileOutcome): void => {
        byOutcome.get(outcome)?.inc();
      },
      incReconcileErrors: (): void => {
        errors.inc();
      },
      incTerminalReconcileErrors: (): void => {
        terminalErrors.inc();
      },
      observeReconcileTime: (seconds: number): void => {
        reconcileTime.observe(seconds);
      },
      setActiveWorkers: (workers: number): void => {
        activeWorkers.set(workers);
      },
    };
  }

  /** Hooks for one work queue, labelled `name`. */
  forWorkQueue(name: string): WorkQueueMetrics {
    const labels = { name };
    const depth = this.workqueueDepth.labels(labels);
    const adds = this.workqueueAddsTotal.labels(labels);
    const queueDuration = this.workqueueQueueDurationSeconds.labels(labels);
    const workDuration = this.workqueueWorkDurationSeconds.labels(labels);
    const retries = this.workqueueRetriesTotal.labels(labels);
    depth.set(0);
    adds.inc(0);
    retries.inc(0);
    return {
      setDepth: (keys: number): void => {
        depth.set(keys);
      },
      incAdds: (): void => {
        adds.inc();
      },
      observeQueueDuration: (seconds: number): void => {
        queueDuration.observe(seconds);
      },
      observeWorkDuration: (seconds: number): void => {
        workDuration.observe(seconds);
      },
      incRetries: (): void => {
        retries.inc();
      },
    };
  }

  /**
   * Counts one API request. `code` is the HTTP status, or client-go's `<error>` when no response
   * arrived; `method` is upper-cased as client-go reports it. A bound arrow, so it can be handed
   * over as a callback (e.g. KubeClient's request observer) as is.
   */
  readonly recordRestRequest = (method: string, code: number | string, host: string): void => {
    this.restClientRequestsTotal.inc({ code: String(code), method: method.toUpperCase(), host });
  };

  /** Counts one expectation record dropped at its TTL; bound, so it can be passed as `onExpired`. */
  readonly recordExpectationsExpired = (kind: ExpectationKind): void => {
    this.expectationsExpiredTotal.inc({ kind });
  };

  /** Prometheus text exposition of everything on this registry. */
  render(): Promise<string> {
    return renderMetrics(this.registry);
  }

  /** Content-Type header for render()'s output. */
  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Prometheus text exposition of `registry`. */
export function renderMetrics(registry: Registry): Promise<string> {
  return registry.metrics();
}
