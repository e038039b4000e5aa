// One namespace with the CloneSet CRD installed and the real controller running against it, set
// up before a test file's tests and torn down after (Jest hooks). Integration tests add the fake
// kubelet; e2e tests run on the real one. The controller logs in as the chart's identity
// (controller-identity.ts), the tests as the bed's admin. Owns the namespace and the controller it starts.
import { afterAll, beforeAll } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import { KubeClient } from '../../../src/runtime/kube-client.js';
import { startController, type RunningController } from './controller.js';
import { controllerKubeConfig } from './controller-identity.js';
import { ensureCrd } from './crd.js';
import { FakeKubelet } from './fake-kubelet.js';
import { createTestNamespace, loadTestKubeConfig } from './kube.js';

export interface ControllerTestBed {
  kc: k8s.KubeConfig;
  client: KubeClient;
  ns: string;
  /** Present when asked for (integration tier). */
  kubelet: FakeKubelet;
  /** Stops the controller (gracefully) and starts a new one with empty caches. */
  restartController(): Promise<void>;
  /** API requests the running controller has sent (rest_client_requests_total, all labels). */
  controllerRequests(): Promise<number>;
}

/**
 * `anyNode`: the namespace's pods may go to every node of the full bed (the node-level specs);
 * otherwise they stay on the first (createTestNamespace).
 */
export function controllerTestBed(
  prefix: string,
  options: { fakeKubelet?: boolean; anyNode?: boolean } = {},
): ControllerTestBed {
  const kc = loadTestKubeConfig();
  const client = new KubeClient(kc);
  const ns = `${prefix}-${Date.now().toString(36)}`;
  const kubelet = new FakeKubelet(client, ns);
  let controller: RunningController | undefined;
  beforeAll(async () => {
    await ensureCrd(client);
    await createTestNamespace(client, ns, { anyNode: options.anyNode === true });
    if (options.fakeKubelet) kubelet.start();
    controller = startController(await controllerKubeConfig(client), ns);
  });
  afterAll(async () => {
    await controller?.stop();
    if (options.fakeKubelet) await kubelet.stop();
    await client.delete(`/api/v1/namespaces/${ns}`);
    client.close();
  });
  return {
    kc,
    client,
    ns,
    kubelet,
    async restartController() {
      await controller?.stop();
      // A new token: an install or uninstall since (helm.test.ts) may have replaced the ServiceAccount.
      controller = startController(await controllerKubeConfig(client), ns);
    },
    async controllerRequests() {
      const metric = await controller?.manager.metrics.restClientRequestsTotal.get();
      return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
    },
  };
}
