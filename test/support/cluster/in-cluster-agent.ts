// `make dev`'s node agent (the tailor-agent DaemonSet in tailor-system, when installed) kept off
// the test bed's node while a test runs an agent of its own or none: two agents on one node would
// both carry out a restart request (its preStop hook twice) and both report pre-pulls. Moved away
// by a nodeSelector on a label no node carries, and let back by removing it.
// Owns only that nodeSelector. Must not: delete or otherwise change make dev's install.
import { KubeClient } from '../../../src/runtime/kube-client.js';
import { loadTestKubeConfig } from './kube.js';
import { eventually } from './testbed.js';

const AGENT_DAEMONSET = '/apis/apps/v1/namespaces/tailor-system/daemonsets/tailor-agent';
/** A node label nothing carries. */
const AWAY = 'tailor.dev/e2e-agent-away';

/**
 * Keeps the in-cluster agent off the node, or lets it back; resolves true when there is one. Away:
 * resolves once its pods are gone.
 */
export async function inClusterAgent(away: boolean): Promise<boolean> {
  const client = new KubeClient(loadTestKubeConfig());
  try {
    const patch = { spec: { template: { spec: { nodeSelector: { [AWAY]: away ? 'true' : null } } } } };
    const patched = await client.patch(AGENT_DAEMONSET, patch, 'merge').then(
      () => true,
      () => false,
    );
    if (patched && away) {
      await eventually('the in-cluster agent to leave the node', async () => {
        const pods = await client.list<{ metadata?: { name?: string } }>('/api/v1/namespaces/tailor-system/pods', {
          labelSelector: 'app.kubernetes.io/component=agent',
        });
        return pods.items.length === 0 ? true : undefined;
      });
    }
    return patched;
  } finally {
    client.close();
  }
}
