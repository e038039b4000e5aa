// Runs the real workload controllers (CloneSet, InPlaceStatefulSet) in the test process against the test-bed API server, scoped
// to one namespace, so integration tests can start, kill and restart it.
import type * as k8s from '@kubernetes/client-node';
import { setupCloneSetController } from '../../../src/cloneset/setup.js';
import { setupInPlaceStatefulSetController } from '../../../src/inplacestatefulset/setup.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { Manager } from '../../../src/runtime/manager.js';

export interface RunningController {
  manager: Manager;
  /** Graceful stop (SIGTERM path). */
  stop(): Promise<void>;
}

export function startController(kubeConfig: k8s.KubeConfig, namespace: string): RunningController {
  const logger = createLogger((process.env.TAILOR_TEST_LOG as 'debug' | undefined) ?? 'silent');
  const manager = new Manager({ kubeConfig, logger, component: 'tailor-controller', shutdownGraceMs: 5000 });
  setupCloneSetController(manager, { namespace, workers: 2, logger });
  setupInPlaceStatefulSetController(manager, { namespace, workers: 2, logger });
  const run = manager.run();
  return {
    manager,
    async stop() {
      await manager.stop();
      await run;
    },
  };
}
