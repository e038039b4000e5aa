// Containers restarted in place on a real kubelet (decision 15): a rolling restart of 10 pods
// (the template's restartedAt annotation, as `kubectl tailor restart` writes it) restarts every
// container exactly once, pod by pod within maxUnavailable, UIDs kept; and a label that a
// container's env reads through the downward API restarts that container, which then sees the
// new value. The node agent runs for the node as a process of this test, as the DaemonSet would.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { activePods, cloneSetManifest, cloneSetPath, waitForCloneSet, waitForReady } from '../support/fixtures/cloneset.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import { startNodeAgent, type NodeAgent } from '../support/cluster/node-agent.js';
import { kubectl, RUN_UNTIL_TERM } from '../support/cluster/testbed.js';

const { client, ns } = controllerTestBed('restart-e2e');
let agent: NodeAgent | undefined;

beforeAll(async () => {
  agent = await startNodeAgent(18390);
}, 120_000);
afterAll(async () => {
  await agent?.stop();
});

const loop = RUN_UNTIL_TERM;
const restarts = (pod: Pod): number => pod.status?.containerStatuses?.[0]?.restartCount ?? -1;

describe('restart in place', () => {
  it('restarts every container of 10 pods exactly once, within maxUnavailable 2, same UIDs', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'rr',
        { replicas: 10, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 2 } },
        {
          containers: [{ name: 'main', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: loop }],
        },
      ),
    );
    await waitForReady(client, ns, 'rr', 10, 180_000);
    const before = new Map((await activePods(client, ns, 'rr')).map((p) => [p.metadata?.uid, restarts(p)]));
    const watch = await PodWatch.start(client, ns, 'app=rr', 10);
    const started = Date.now();
    try {
      await client.patch(
        cloneSetPath(ns, 'rr'),
        { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } } } },
        'merge',
      );
      await waitForCloneSet(
        client,
        ns,
        'rr',
        'every pod restarted and ready',
        (cs, pods) =>
          cs.status?.updatedReadyReplicas === 10 &&
          pods.length === 10 &&
          pods.every((p) => restarts(p) === (before.get(p.metadata?.uid) ?? -9) + 1),
        300_000,
      );
      const seconds = (Date.now() - started) / 1000;
      watch.expectUnavailableAtMost(2);
      process.stdout.write(
        `[restart] rolling restart of 10 pods: ${seconds.toFixed(1)} s, worst moment ${watch.maxUnavailable} of 10 out of service\n`,
      );
    } finally {
      watch.stop();
    }
    const after = await activePods(client, ns, 'rr');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    for (const pod of after) expect(restarts(pod)).toBe((before.get(pod.metadata?.uid) ?? -9) + 1);
  });

  it('restarts a container whose env reads a label the template changed, and it sees the new value', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'envmeta',
        { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        {
          containers: [
            {
              name: 'main',
              image: 'tailor.local/busybox:v1',
              imagePullPolicy: 'Never',
              command: loop,
              env: [{ name: 'TRACK', valueFrom: { fieldRef: { fieldPath: "metadata.labels['track']" } } }],
            },
          ],
        },
      ),
    );
    await waitForReady(client, ns, 'envmeta', 2);
    await client.patch(
      cloneSetPath(ns, 'envmeta'),
      { spec: { template: { metadata: { labels: { app: 'envmeta', track: 'blue' } } } } },
      'merge',
    );
    await waitForCloneSet(
      client,
      ns,
      'envmeta',
      'two pods labelled blue',
      (cs, pods) => cs.status?.updatedReadyReplicas === 2 && pods.every((p) => p.metadata?.labels?.['track'] === 'blue'),
      180_000,
    );
    const before = new Map((await activePods(client, ns, 'envmeta')).map((p) => [p.metadata?.uid, restarts(p)]));
    await client.patch(
      cloneSetPath(ns, 'envmeta'),
      { spec: { template: { metadata: { labels: { app: 'envmeta', track: 'green' } } } } },
      'merge',
    );
    await waitForCloneSet(
      client,
      ns,
      'envmeta',
      'both pods restarted with track=green',
      (cs, pods) =>
        cs.status?.updatedReadyReplicas === 2 &&
        pods.every((p) => p.metadata?.labels?.['track'] === 'green' && restarts(p) === (before.get(p.metadata?.uid) ?? -9) + 1),
      180_000,
    );
    const pods = await activePods(client, ns, 'envmeta');
    expect(new Set(pods.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    for (const pod of pods) {
      const env = kubectl(['-n', ns, 'exec', pod.metadata?.name ?? '', '--', '/bin/sh', '-c', 'echo "$TRACK"']);
      expect(env.trim()).toBe('green');
    }
  });
});
