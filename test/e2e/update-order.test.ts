// updateStrategy.priorityStrategy on a real kubelet (docs/decisions/0017-update-order.md): a
// 4-pod CloneSet whose pods are labelled after they are created, as Kruise's tests label them,
// rolls a new image out in place one pod at a time (maxUnavailable 1), and the pods leave the
// old revision in the priority order, never more than one unavailable at once.
// Owns: the CloneSets of its namespace. Must not: touch another namespace's objects.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { UpdatePriorityStrategy } from '../../src/api/types.js';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  deleteCloneSetsAndPods,
  patchTemplateAndWait,
  waitForReady,
} from '../support/fixtures/cloneset.js';

const { client, ns } = controllerTestBed('update-order');

const V1 = 'tailor.local/busybox:v1';
const V2 = 'tailor.local/busybox:v2';
const REPLICAS = 4;
const CASE_TIMEOUT = 300_000;

const container = (image: string): Record<string, unknown> => ({
  name: 'main',
  image,
  imagePullPolicy: 'Never',
  command: ['/bin/sleep', '3600'],
  resources: { requests: { cpu: '10m', memory: '16Mi' } },
});

afterEach(() => deleteCloneSetsAndPods(client, ns), 150_000);

const nameOf = (pod: Pod): string => pod.metadata?.name ?? '';

/**
 * Creates the CloneSet, labels its pods once they are ready (`labels[i]` onto the i-th pod by
 * name), rolls V2 out and returns the order the pods left the old revision, with the names in
 * the order `labels` was applied.
 */
async function rollOut(
  name: string,
  priorityStrategy: UpdatePriorityStrategy,
  labels: Record<string, string>[],
): Promise<{ left: string[]; pods: string[] }> {
  await client.create(
    cloneSetPath(ns),
    cloneSetManifest(
      name,
      { replicas: REPLICAS, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1, priorityStrategy } },
      { containers: [container(V1)] },
    ),
  );
  const ready = await waitForReady(client, ns, name, REPLICAS, 120_000);
  const oldRevision = ready.status?.updateRevision ?? '';
  const pods = (await activePods(client, ns, name)).map(nameOf).sort();
  for (const [i, pod] of pods.entries()) {
    await client.patch(`/api/v1/namespaces/${ns}/pods/${pod}`, { metadata: { labels: labels[i] ?? {} } }, 'merge');
  }

  const watch = await PodWatch.start(client, ns, `app=${name}`, REPLICAS);
  try {
    await patchTemplateAndWait(client, ns, name, {
      template: { spec: { containers: [container(V2)] } },
      what: 'every pod on V2 and ready',
      until: (cs, current) =>
        cs.status?.updatedReadyReplicas === REPLICAS && current.every((p) => p.spec?.containers[0]?.image === V2),
      timeoutMs: 180_000,
    });
    watch.expectUnavailableAtMost(1);
    return { left: watch.leftRevision(oldRevision), pods };
  } finally {
    watch.stop();
  }
}

describe('update order on a real kubelet', () => {
  it(
    'takes pods by weightPriority, the heaviest sum first, one at a time',
    async () => {
      const { left, pods } = await rollOut(
        'weighted',
        {
          weightPriority: [
            { weight: 50, matchSelector: { matchLabels: { 'order.test/tier': 'gold' } } },
            { weight: 30, matchSelector: { matchExpressions: [{ key: 'order.test/canary', operator: 'Exists' }] } },
            { weight: 10, matchSelector: { matchLabels: { 'order.test/tier': 'silver' } } },
          ],
        },
        // Weights 10, 0, 80 and 50: the pods sorted by name go 2, 3, 0, 1.
        [
          { 'order.test/tier': 'silver' },
          {},
          { 'order.test/tier': 'gold', 'order.test/canary': 'yes' },
          { 'order.test/tier': 'gold' },
        ],
      );
      expect(left).toEqual([pods[2], pods[3], pods[0], pods[1]]);
    },
    CASE_TIMEOUT,
  );

  it(
    'takes pods by orderPriority: a pod without the key first, then the highest number',
    async () => {
      const { left, pods } = await rollOut('ordered', { orderPriority: [{ orderedKey: 'order.test/rank' }] }, [
        { 'order.test/rank': 'r-3' },
        { 'order.test/rank': 'r-10' },
        {},
        { 'order.test/rank': 'r-7' },
      ]);
      expect(left).toEqual([pods[2], pods[1], pods[3], pods[0]]);
    },
    CASE_TIMEOUT,
  );
});
