// maxSurge with in-place updates on the three-node bed (issue 46, decision 72): a Deployment's
// habit of `maxSurge` no longer costs pods their identity. A 5-pod CloneSet with
// InPlaceIfPossible, maxUnavailable 1 and maxSurge 3 takes a new image: every pod is updated in
// place and keeps its UID, and no surge pod is created, because the budget already allows
// updating in place without one. Then the same with a second template 3 s into the rollout
// (V1 → V2 → V3). The watch counts every pod that existed at once, terminating ones included.
import { describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';

const { client, ns } = controllerTestBed('surge-in-place');

const REPLICAS = 5;
const MAX_SURGE = 3;

const container = (image: string): Record<string, unknown> => ({
  name: 'web',
  image,
  imagePullPolicy: 'Never',
  command: ['/bin/httpd', '-f', '-p', '8080', '-h', '/etc'],
  readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
});

/** A template change: an image, and a template annotation so V3 differs from V1 though its image is v1's. */
const templatePatch = (image: string, round: string): Record<string, unknown> => ({
  spec: {
    template: {
      metadata: { annotations: { 'tailor.dev/round': round } },
      spec: { containers: [container(image)] },
    },
  },
});

async function rollout(name: string, changes: { image: string; round: string; afterMs: number }[]): Promise<void> {
  await client.create(
    cloneSetPath(ns),
    cloneSetManifest(
      name,
      { replicas: REPLICAS, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1, maxSurge: MAX_SURGE } },
      { containers: [container('tailor.local/busybox:v1')] },
    ),
  );
  await waitForReady(client, ns, name, REPLICAS, 120_000);
  const original = new Set((await activePods(client, ns, name)).map((p) => p.metadata?.uid));
  const watch = await PodWatch.start(client, ns, `app=${name}`, REPLICAS);
  try {
    for (const change of changes) {
      await sleep(change.afterMs);
      await client.patch(cloneSetPath(ns, name), templatePatch(change.image, change.round), 'merge');
    }
    const last = changes.at(-1)!;
    await waitForCloneSet(
      client,
      ns,
      name,
      `${REPLICAS} ready pods on the last template (${last.image})`,
      (cs, pods) =>
        cs.status?.observedGeneration === cs.metadata?.generation &&
        pods.length === REPLICAS &&
        cs.status?.updatedReadyReplicas === REPLICAS &&
        pods.every((p) => p.spec?.containers[0]?.image === last.image),
      240_000,
    );
    const after = await activePods(client, ns, name);
    const kept = after.filter((p) => original.has(p.metadata?.uid)).length;
    process.stdout.write(
      `[surge-in-place] ${name}: peak ${watch.maxPresent} pods (bound ${REPLICAS + MAX_SURGE}), ` +
        `${kept} of ${REPLICAS} UIDs kept, ${watch.uidsEverSeen.size} pods ever seen\n`,
    );
    expect(kept).toBe(REPLICAS);
    expect(watch.uidsEverSeen.size).toBe(REPLICAS);
    expect(watch.maxPresent).toBe(REPLICAS);
    watch.expectUnavailableAtMost(1);
  } finally {
    watch.stop();
  }
}

describe('maxSurge 3 with InPlaceIfPossible and maxUnavailable 1 on 5 pods', () => {
  it('a new image: every pod updated in place, all 5 UIDs kept, no surge pod', async () => {
    await rollout('surge-one', [{ image: 'tailor.local/busybox:v2', round: '2', afterMs: 0 }]);
  });

  it('a second template 3 s into the rollout (V1 → V2 → V3): all 5 UIDs kept, no surge pod', async () => {
    await rollout('surge-two', [
      { image: 'tailor.local/busybox:v2', round: '2', afterMs: 0 },
      { image: 'tailor.local/busybox:v1', round: '3', afterMs: 3_000 },
    ]);
  });
});
