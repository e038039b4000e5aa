// Rollouts over the real three-node bed (issue 33 item 4; decision 61), with the CloneSets'
// pods spread one or two per node (topology spread on kubernetes.io/hostname):
//   - an in-place update never has more of a node's pods out of service at once than its share
//     of maxUnavailable (budget.ts nodeShares);
//   - a resize that cannot fit its node (tailor-node-3 keeps one CPU) is Infeasible there, and the
//     default outcome recreates the pod on a node with room;
//   - `kubectl drain` mid-rollout (eviction API, a PodDisruptionBudget on the pods): the evicted
//     pods come back on the other nodes, the rollout finishes, neither budget is broken;
//   - a node lost mid-rollout (its kubelet stopped): its pods stop counting, the rollout goes on
//     within the budget on the others, their pods are replaced once the taint evicts them, and
//     when the node returns everything converges.
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Pod } from '../../src/api/wire.js';
import { restartComponent } from '../support/cluster/components.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { kubeBinary } from '../support/cluster/kube-version.js';
import { kubeconfigPath } from '../support/cluster/kube.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import { eventually, NODE_NAMES, RUN_UNTIL_TERM } from '../support/cluster/testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  deleteCloneSetsAndPods,
  readCloneSet,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';

const bed = controllerTestBed('nodes-rollout', { anyNode: true });
const { client, ns } = bed;
const run = promisify(execFile);
const SMALL_NODE = NODE_NAMES[2];

afterEach(async () => {
  await run(kubeBinary('kubectl'), ['--kubeconfig', kubeconfigPath(), 'uncordon', NODE_NAMES[1]]);
  await deleteCloneSetsAndPods(client, ns);
});
afterAll(async () => {
  await client.delete(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/drain`).catch(() => undefined);
});

/** A busybox container with equal requests and limits, Ready a second after it starts. */
function main(cpu: string, image = 'tailor.local/busybox:v1'): Record<string, unknown> {
  return {
    name: 'main',
    image,
    imagePullPolicy: 'Never',
    command: RUN_UNTIL_TERM,
    resources: { requests: { cpu, memory: '32Mi' }, limits: { cpu, memory: '32Mi' } },
    readinessProbe: { exec: { command: ['/bin/true'] }, initialDelaySeconds: 1, periodSeconds: 1 },
  };
}

/** Spread evenly over the nodes that take pods (a cordoned or tainted node does not count). */
const spread = (app: string): Record<string, unknown> => ({
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'kubernetes.io/hostname',
      whenUnsatisfiable: 'DoNotSchedule',
      nodeTaintsPolicy: 'Honor',
      labelSelector: { matchLabels: { app } },
    },
  ],
});

const countByNode = (pods: readonly Pod[]): Record<string, number> =>
  pods.reduce<Record<string, number>>(
    (acc, p) => ({ ...acc, [p.spec?.nodeName ?? '']: (acc[p.spec?.nodeName ?? ''] ?? 0) + 1 }),
    {},
  );

async function createSpread(
  name: string,
  replicas: number,
  maxUnavailable: number,
  extra: Record<string, unknown> = {},
): Promise<Pod[]> {
  const manifest = cloneSetManifest(
    name,
    { replicas, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable } },
    { containers: [main('50m')], ...spread(name), ...extra },
  );
  await client.create(cloneSetPath(ns), manifest);
  await waitForReady(client, ns, name, replicas, 120_000);
  return activePods(client, ns, name);
}

const newImage = { spec: { template: { spec: { containers: [main('50m', 'tailor.local/busybox:v2')] } } } };

function rolledOut(name: string, replicas: number, timeoutMs = 120_000) {
  return waitForCloneSet(
    client,
    ns,
    name,
    `all ${replicas} pods updated and ready`,
    (cs, pods) =>
      cs.status?.updatedReadyReplicas === replicas && cs.status.replicas === replicas && pods.length === replicas,
    timeoutMs,
  );
}

describe('a rollout over three nodes', () => {
  it('spreads an in-place update over the nodes: no node has more pods out of service at once than its share of maxUnavailable', async () => {
    const before = await createSpread('spread', 6, 3);
    expect(Object.values(countByNode(before))).toEqual([2, 2, 2]);
    const watch = await PodWatch.start(client, ns, 'app=spread', 6);
    try {
      await client.patch(cloneSetPath(ns, 'spread'), newImage, 'merge');
      await rolledOut('spread', 6);
    } finally {
      watch.stop();
    }
    // Each node holds 2 of 6 pods: its share of maxUnavailable 3 is ⌈3 × 2 ÷ 6⌉ = 1.
    expect([...watch.notReadyAtOnceByNode().values()].every((n) => n <= 1)).toBe(true);
    watch.expectUnavailableAtMost(3);
    const after = await activePods(client, ns, 'spread');
    expect(after.map((p) => p.metadata?.uid).sort()).toEqual(before.map((p) => p.metadata?.uid).sort());
  });

  it('recreates a pod whose resize cannot fit its node on a node with room', async () => {
    const name = 'roomy';
    const preferSmallNode = {
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              preference: {
                matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [SMALL_NODE] }],
              },
            },
          ],
        },
      },
    };
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        name,
        { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } },
        { containers: [main('200m')], ...preferSmallNode },
      ),
    );
    await waitForReady(client, ns, name, 1, 120_000);
    const [first] = await activePods(client, ns, name);
    expect(first?.spec?.nodeName).toBe(SMALL_NODE);

    // 1.5 CPUs: more than the small node's allocatable 1, less than another node's 2.
    await client.patch(
      cloneSetPath(ns, name),
      { spec: { template: { spec: { containers: [main('1500m')] } } } },
      'merge',
    );
    const moved = await eventually(
      'the pod recreated on a node with room, Ready',
      async () => {
        const pods = await activePods(client, ns, name);
        const fresh = pods.find((p) => p.metadata?.uid !== first?.metadata?.uid);
        const ready = fresh?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        return pods.length === 1 && ready ? fresh : undefined;
      },
      120_000,
    );
    expect(moved.spec?.nodeName).not.toBe(SMALL_NODE);
    expect(moved.spec?.containers?.[0]?.resources?.requests?.['cpu']).toBe('1500m');
    const events = await client.list<{ reason?: string; involvedObject?: { name?: string } }>(
      `/api/v1/namespaces/${ns}/events`,
    );
    expect(events.items.some((e) => e.involvedObject?.name === name && e.reason === 'ResizeRecreate')).toBe(true);
  });

  it('finishes a rollout while a node is drained: evicted pods come back on the other nodes, the CloneSet budget and the PodDisruptionBudget hold', async () => {
    const before = await createSpread('drain', 6, 1);
    await client.create(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      metadata: { name: 'drain' },
      spec: { maxUnavailable: 2, selector: { matchLabels: { app: 'drain' } } },
    });
    const watch = await PodWatch.start(client, ns, 'app=drain', 6);
    try {
      await client.patch(cloneSetPath(ns, 'drain'), newImage, 'merge');
      await eventually(
        'the rollout under way',
        async () => ((await readCloneSet(client, ns, 'drain')).status?.updatedReplicas ?? 0) >= 1 || undefined,
      );
      await run(
        kubeBinary('kubectl'),
        [
          '--kubeconfig',
          kubeconfigPath(),
          'drain',
          NODE_NAMES[1],
          '--ignore-daemonsets',
          `--pod-selector=app=drain`,
          '--timeout=180s',
        ],
        { timeout: 200_000 },
      );
      await rolledOut('drain', 6, 180_000);
    } finally {
      watch.stop();
    }
    const after = await activePods(client, ns, 'drain');
    expect(after.filter((p) => p.spec?.nodeName === NODE_NAMES[1])).toEqual([]);
    const evicted = before.filter((p) => p.spec?.nodeName === NODE_NAMES[1]).map((p) => p.metadata?.uid);
    expect(after.some((p) => evicted.includes(p.metadata?.uid))).toBe(false);
    // The PDB allows 2 out of service; the CloneSet takes 1 at a time and counts evicted pods.
    watch.expectUnavailableAtMost(2);
  });

  it('goes on past a lost node within the budget, replaces its pods once they are evicted, and converges when the node returns', async () => {
    // Evicted 10 s after their node is unreachable (Kubernetes' default is 300 s).
    const tolerations = ['unreachable', 'not-ready'].map((t) => ({
      key: `node.kubernetes.io/${t}`,
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: 10,
    }));
    const before = await createSpread('lost', 6, 3, { tolerations });
    const lost = before.filter((p) => p.spec?.nodeName === SMALL_NODE).map((p) => p.metadata?.uid);
    expect(lost).toHaveLength(2);
    const watch = await PodWatch.start(client, ns, 'app=lost', 6);
    await restartComponent('kubelet', {
      node: SMALL_NODE,
      whileDown: async () => {
        await client.patch(cloneSetPath(ns, 'lost'), newImage, 'merge');
        await eventually(
          'the lost node NotReady',
          async () => {
            const node = await client.get<{ status?: { conditions?: { type?: string; status?: string }[] } }>(
              `/api/v1/nodes/${SMALL_NODE}`,
            );
            return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status !== 'True') || undefined;
          },
          60_000,
        );
        // Not done while its pods are missing; done once they were replaced on the other nodes.
        const midway = await readCloneSet(client, ns, 'lost');
        expect(midway.status?.updatedReadyReplicas ?? 0).toBeLessThan(6);
        await rolledOut('lost', 6, 180_000);
        const pods = await activePods(client, ns, 'lost');
        expect(pods.filter((p) => p.spec?.nodeName === SMALL_NODE)).toEqual([]);
      },
    });
    watch.stop();
    // Within the budget on the surviving nodes: 2 lost plus at most 1 taken there.
    watch.expectUnavailableAtMost(3);
    await eventually(
      'the returned node Ready and its old pods gone from the API',
      async () => {
        const list = await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: 'app=lost' });
        return list.items.length === 6 && list.items.every((p) => !lost.includes(p.metadata?.uid)) ? true : undefined;
      },
      120_000,
    );
    const cs = await readCloneSet(client, ns, 'lost');
    expect(cs.status?.updatedReadyReplicas).toBe(6);
  });
});
