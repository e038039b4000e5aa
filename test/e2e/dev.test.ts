// `make dev` end to end: three Ready nodes, the controller runs *in* the cluster (Deployment, 2
// replicas, leader election, the RBAC of config/rbac) next to the node agent DaemonSet, one agent
// pod Ready on each node, the sample CloneSet is Ready, and edits of its image and of
// its resources are carried out by the in-cluster controller — so the RBAC is proven, not
// assumed. Killing the leader pod hands the Lease to the other replica and the rollout finishes.
import { describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { loadTestKubeConfig } from '../support/cluster/kube.js';
import { KubeClient } from '../../src/runtime/kube-client.js';
import type { Pod } from '../../src/api/wire.js';
import { activePods, cloneSetPath, readCloneSet, waitForCloneSet, waitForReady } from '../support/fixtures/cloneset.js';
import { eventually } from '../support/cluster/testbed.js';
import { kubeBinary } from '../support/cluster/kube-version.js';

const client = new KubeClient(loadTestKubeConfig());
const ns = 'default';

interface Deployment {
  status?: { availableReplicas?: number; replicas?: number };
}
interface Lease {
  spec?: { holderIdentity?: string };
}

const leaseHolder = async (): Promise<string> =>
  (await client.get<Lease>('/apis/coordination.k8s.io/v1/namespaces/tailor-system/leases/tailor-controller')).spec
    ?.holderIdentity ?? '';

describe('make dev', () => {
  it('runs the controller in the cluster, which updates and resizes the sample in place and survives losing its leader', async () => {
    execFileSync('bash', ['hack/dev.sh'], {
      stdio: 'pipe',
      env: { ...process.env, KUBECONFIG: process.env.TAILOR_KUBECONFIG },
    });
    const deployment = await client.get<Deployment>(
      '/apis/apps/v1/namespaces/tailor-system/deployments/tailor-controller',
    );
    expect(deployment.status?.availableReplicas).toBe(2);
    const agent = await client.get<{ status?: { numberReady?: number; desiredNumberScheduled?: number } }>(
      '/apis/apps/v1/namespaces/tailor-system/daemonsets/tailor-agent',
    );
    expect(agent.status?.numberReady).toBe(agent.status?.desiredNumberScheduled);
    const nodes = await client.list<{ metadata?: { name?: string } }>('/api/v1/nodes', {
      labelSelector: '!tailor.dev/fake-node',
    });
    const agentPods = await client.list<Pod>('/api/v1/namespaces/tailor-system/pods', {
      labelSelector: 'app.kubernetes.io/component=agent',
    });
    expect(agentPods.items.map((p) => p.spec?.nodeName).sort()).toEqual(
      nodes.items.map((n) => n.metadata?.name).sort(),
    );
    expect(nodes.items).toHaveLength(Number(process.env.NODES ?? 3));
    await waitForReady(client, ns, 'web', 3, 120_000);
    const uids = new Set((await activePods(client, ns, 'web')).map((p) => p.metadata?.uid));

    // An image edit, carried out in place by the in-cluster controller.
    const current = (await readCloneSet(client, ns, 'web')).spec.template.spec?.containers[0]?.image;
    const next = current === 'tailor.local/busybox:v2' ? 'tailor.local/busybox:v1' : 'tailor.local/busybox:v2';
    const setImage = (image: string): Promise<unknown> =>
      client.patch(
        cloneSetPath(ns, 'web'),
        [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }],
        'json',
      );
    await setImage(next);
    await waitForCloneSet(
      client,
      ns,
      'web',
      `all pods on ${next}`,
      (cs, pods) =>
        cs.status?.updatedReadyReplicas === 3 && pods.every((p) => p.status?.containerStatuses?.[0]?.image === next),
      180_000,
    );
    expect(new Set((await activePods(client, ns, 'web')).map((p) => p.metadata?.uid))).toEqual(uids);

    // A resize, through pods/resize.
    const cpu =
      (await readCloneSet(client, ns, 'web')).spec.template.spec?.containers[0]?.resources?.limits?.['cpu'] === '300m'
        ? '250m'
        : '300m';
    await client.patch(
      cloneSetPath(ns, 'web'),
      [{ op: 'replace', path: '/spec/template/spec/containers/0/resources/limits/cpu', value: cpu }],
      'json',
    );
    await waitForCloneSet(
      client,
      ns,
      'web',
      `resized to ${cpu}`,
      (cs, pods) =>
        (cs.status?.resize?.resizing ?? 1) === 0 &&
        pods.every((p: Pod) => p.status?.containerStatuses?.[0]?.resources?.limits?.['cpu'] === cpu),
      120_000,
    );
    expect(new Set((await activePods(client, ns, 'web')).map((p) => p.metadata?.uid))).toEqual(uids);

    // Kill the leader mid-rollout: the other replica takes the Lease and finishes the rollout.
    const leader = await leaseHolder();
    await setImage(current ?? 'tailor.local/busybox:v1');
    await client.delete(`/api/v1/namespaces/tailor-system/pods/${leader}`, { gracePeriodSeconds: 0 });
    const successor = await eventually(
      'a new leader',
      async () => {
        const holder = await leaseHolder();
        return holder && holder !== leader ? holder : undefined;
      },
      30_000,
    );
    expect(successor).not.toBe(leader);
    await waitForCloneSet(
      client,
      ns,
      'web',
      'rollout finished after the handover',
      (cs, pods) =>
        cs.status?.updatedReadyReplicas === 3 && pods.every((p) => p.status?.containerStatuses?.[0]?.image === current),
      180_000,
    );
    expect(new Set((await activePods(client, ns, 'web')).map((p) => p.metadata?.uid))).toEqual(uids);

    // `kubectl tailor undo` (the plugin make dev installs) rolls back in place, run by the chart's
    // controller with the chart's RBAC: the reused ControllerRevision is written back whole, a PUT
    // the chart must grant (decision 71). Before that grant every round failed with 403.
    const undo = spawnSync(kubeBinary('kubectl'), ['tailor', 'undo', 'web', '-n', ns], {
      encoding: 'utf8',
      env: { ...process.env, KUBECONFIG: process.env.TAILOR_KUBECONFIG },
    });
    expect({ code: undo.status, stderr: undo.stderr }).toEqual({ code: 0, stderr: '' });
    const rolledBack = await waitForCloneSet(
      client,
      ns,
      'web',
      `rolled back to ${next}, in place`,
      (cs, pods) =>
        cs.status?.observedGeneration === cs.metadata?.generation &&
        cs.status?.updatedReadyReplicas === 3 &&
        pods.every((p) => p.status?.containerStatuses?.[0]?.image === next),
      180_000,
    );
    expect(rolledBack.status?.conditions?.find((c) => c.type === 'FailedRevision')?.status ?? 'False').toBe('False');
    expect(new Set((await activePods(client, ns, 'web')).map((p) => p.metadata?.uid))).toEqual(uids);
    client.close();
  });
});
