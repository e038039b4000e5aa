// Test-side access to the test-bed cluster that the Jest global setup started (see
// test/support/cluster/cluster-setup.js). Owns nothing but finding the kubeconfig; never starts a cluster.
import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

export const kubeconfigPath = (): string => process.env.TAILOR_KUBECONFIG ?? resolve(process.cwd(), '.tailor/cluster/kubeconfig');

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
 * control-plane test bed no controller-manager is there to create it.
 */
export async function createTestNamespace(
  client: { create: (path: string, body: unknown) => Promise<unknown> },
  name: string,
): Promise<void> {
  await client.create('/api/v1/namespaces', { metadata: { name } });
  try {
    await client.create(`/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'default' } });
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== 409) throw err;
  }
}
