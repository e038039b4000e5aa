// Loads the kubeconfig the way kubectl does (flag, $KUBECONFIG, ~/.kube/config, in-cluster) and
// checks the cluster answers, so "no cluster" is one clear line rather than a stack trace.
import * as k8s from '@kubernetes/client-node';
import { KubeClient } from '../runtime/kube-client.js';

export async function loadKubeConfig(path: string | undefined): Promise<k8s.KubeConfig> {
  const kc = new k8s.KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('no cluster configured: pass --kubeconfig or set KUBECONFIG');
  const client = new KubeClient(kc);
  try {
    await client.get('/version');
  } catch (err) {
    throw new Error(
      `cannot reach the cluster at ${server}: ${err instanceof Error ? ((err.cause as Error)?.message ?? err.message) : String(err)}`,
      { cause: err },
    );
  } finally {
    client.close();
  }
  return kc;
}
