// `tailor controller`: builds the manager with a controller per workload kind (CloneSet,
// InPlaceStatefulSet; `--kinds` chooses), runs it until SIGTERM or
// SIGINT (graceful: in-flight work finishes within the grace period) or until the lease is lost
// (exit 1 so the pod restarts and campaigns again). `--resync-period` makes the manager re-deliver
// every cached CloneSet (and its pods and revisions) to the handlers, so each is reconciled at
// least that often. Must not: contain controller logic.
import { hostname } from 'node:os';
import { setupCloneSetController } from '../cloneset/setup.js';
import { setupInPlaceStatefulSetController } from '../inplacestatefulset/setup.js';
import { validateLeaderElectionTimings } from '../runtime/leader-election.js';
import { createLogger, type LogLevel } from '../runtime/logger.js';
import { Manager } from '../runtime/manager.js';
import { loadKubeAuth } from './kubeconfig.js';
import { runUntilSignal } from './run.js';

export interface ControllerFlags {
  kubeconfig?: string;
  namespace?: string;
  clonesetSelector?: string;
  /** The workload kinds whose controllers run. */
  kinds: readonly ('CloneSet' | 'InPlaceStatefulSet')[];
  workers: number;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  resizeBackend: 'auto' | 'kubelet' | 'agent';
  logLevel: LogLevel;
  shutdownGracePeriod: number;
  /** Every CloneSet (and every cached pod and revision) is re-delivered this often, in ms; 0 disables. */
  resyncPeriod: number;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  requestTimeout: number;
  watchStallTimeout: number;
  /** How long a drain waits for the node agent's image pre-pull, in ms; 0 never waits. */
  imagePrepullTimeout: number;
}

/**
 * The ceiling of the controller's informers' retry backoff: its dozen or so watches retry at most
 * every 2 s (with jitter) while the API server is away or still starting (a custom resource's watch
 * answers 503 for a moment after a restart), instead of client-go's 30 s (decision 77): a few
 * requests a second per replica, and a cache never more than 2 s behind a server that answers.
 */
const CONTROLLER_WATCH_RETRY_MAX_MS = 2_000;

const address = (flag: string): string | undefined =>
  flag === '0' ? undefined : flag.startsWith(':') ? `0.0.0.0${flag}` : flag;

export async function runController(flags: ControllerFlags): Promise<number> {
  const logger = createLogger(flags.logLevel, { component: 'tailor-controller' });
  const kubeConfig = await loadKubeAuth(flags.kubeconfig);
  const identity = process.env.POD_NAME ?? `${hostname()}-${process.pid}`;
  // Before anything starts: bad timings end with one clear line.
  if (flags.leaderElect) validateLeaderElectionTimings(flags.leaseDuration, flags.renewDeadline, flags.retryPeriod);
  const manager = new Manager({
    kubeConfig,
    logger,
    component: 'tailor-controller',
    metricsAddress: address(flags.metricsBindAddress),
    healthAddress: address(flags.healthProbeBindAddress),
    shutdownGraceMs: flags.shutdownGracePeriod,
    resyncPeriodMs: flags.resyncPeriod,
    requestTimeoutMs: flags.requestTimeout,
    noEventTimeoutMs: flags.watchStallTimeout,
    // A restarted API server is seen within seconds; a handful of informers retry (decision 77).
    watchRetryMaxMs: CONTROLLER_WATCH_RETRY_MAX_MS,
    ...(flags.leaderElect
      ? {
          leaderElection: {
            namespace: flags.leaderElectionNamespace,
            name: flags.leaderElectionId,
            identity,
            leaseDurationMs: flags.leaseDuration,
            renewDeadlineMs: flags.renewDeadline,
            retryPeriodMs: flags.retryPeriod,
          },
        }
      : {}),
  });
  const options = {
    namespace: flags.namespace,
    cloneSetSelector: flags.clonesetSelector,
    workers: flags.workers,
    logger,
    resizeBackend: flags.resizeBackend,
    imagePrePullTimeoutMs: flags.imagePrepullTimeout,
  };
  if (flags.kinds.includes('CloneSet')) setupCloneSetController(manager, options);
  if (flags.kinds.includes('InPlaceStatefulSet')) setupInPlaceStatefulSetController(manager, options);

  return runUntilSignal(manager, logger);
}
