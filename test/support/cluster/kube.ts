// Test-side access to the test-bed cluster that the Jest global setup started (see
// test/support/cluster/cluster-setup.js). Owns nothing but finding the kubeconfig; never starts a cluster.
import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { kubeconfigPath } from './bed.js';

export { kubeconfigPath };

export function loadTestKubeConfig(): k8s.KubeConfig {
  const path = kubeconfigPath();
  if (!existsSync(path)) {
    throw new Error(`no test-bed kubeconfig at ${path}: run 'make cluster-up' or the test via 'make test'`);
  }
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/**
 * Creates a namespace with its `default` ServiceAccount. Pods are refused without it, and on the
 * control-plane test bed no controller-manager is there to create it. On the full bed its pods
 * stay on the first node (the API server's PodNodeSelector admission, from the namespace's
 * annotation), as the specs written for one node assume; `anyNode` lets the scheduler use every
 * node (the node-level specs; decision 61).
 */
export async function createTestNamespace(
  client: { create: (path: string, body: unknown) => Promise<unknown> },
  name: string,
  options: { anyNode?: boolean } = {},
): Promise<void> {
  const node = options.anyNode === true ? undefined : process.env.TAILOR_TEST_NODE;
  const annotations =
    node === undefined
      ? undefined
      : { 'scheduler.alpha.kubernetes.io/node-selector': `kubernetes.io/hostname=${node}` };
  await client.create('/api/v1/namespaces', { metadata: { name, ...(annotations ? { annotations } : {}) } });
  try {
    await client.create(`/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'default' } });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== 409) throw err;
  }
}
