// Test-side access to the test-bed cluster that the Jest global setup started (see
// test/support/global-setup.ts). Owns nothing but finding the kubeconfig; never starts a cluster.
import * as k8s from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

export const kubeconfigPath = (): string =>
  process.env.TAILOR_KUBECONFIG ?? resolve(process.cwd(), '.tailor/cluster/kubeconfig');

export function loadTestKubeConfig(): k8s.KubeConfig {
  const path = kubeconfigPath();
  if (!existsSync(path)) {
    throw new Error(`no test-bed kubeconfig at ${path}: run 'make cluster-up' or the test via 'make test'`);
  }
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}
