// `tailor controller`: builds the manager with the CloneSet controller, runs it until SIGTERM or
// SIGINT (graceful: in-flight work finishes within the grace period) or until the lease is lost
// (exit 1 so the pod restarts and campaigns again). Must not: contain controller logic.
import { hostname } from 'node:os';
import { setupCloneSetController } from '../cloneset/setup.js';
import { createLogger, type LogLevel } from '../runtime/logger.js';
import { Manager } from '../runtime/manager.js';
import { loadKubeConfig } from './kubeconfig.js';
import { runUntilSignal } from './run.js';

export interface ControllerFlags {
  kubeconfig?: string;
  namespace?: string;
  workers: number;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  resizeBackend: 'auto' | 'kubelet' | 'agent';
  logLevel: LogLevel;
  shutdownGracePeriod: number;
}

const address = (flag: string): string | undefined => (flag === '0' ? undefined : flag.startsWith(':') ? `0.0.0.0${flag}` : flag);

export async function runController(flags: ControllerFlags): Promise<number> {
  const logger = createLogger(flags.logLevel, { component: 'tailor-controller' });
  const kubeConfig = await loadKubeConfig(flags.kubeconfig);
  const identity = process.env.POD_NAME ?? `${hostname()}-${process.pid}`;
  const manager = new Manager({
    kubeConfig,
    logger,
    component: 'tailor-controller',
    metricsAddress: address(flags.metricsBindAddress),
    healthAddress: address(flags.healthProbeBindAddress),
    shutdownGraceMs: flags.shutdownGracePeriod,
    ...(flags.leaderElect
      ? { leaderElection: { namespace: flags.leaderElectionNamespace, name: flags.leaderElectionId, identity } }
      : {}),
  });
  setupCloneSetController(manager, { namespace: flags.namespace, workers: flags.workers, logger, resizeBackend: flags.resizeBackend });

  return runUntilSignal(manager, logger);
}
