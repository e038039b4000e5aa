// The CloneSet controller against the real API server, with a fake kubelet (test/support/cluster/fake-kubelet.ts) writing
// pod status the way a kubelet would: scaling, ReCreate rollouts with partition and
// maxUnavailable, the scale subresource, and a controller killed mid-rollout.
import { afterEach, describe, expect, it } from '@jest/globals';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../src/api/types.js';
import type { Pod } from '../../src/api/wire.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  patchTemplateAndWait,
  waitForCloneSet,
} from '../support/fixtures/cloneset.js';
import { FAKE_SCHEDULER } from '../support/cluster/fake-kubelet.js';
import { PodWatch } from '../support/cluster/pod-watch.js';

const { client, ns, kubelet, restartController } = controllerTestBed('cloneset', { fakeKubelet: true });
const fake = { schedulerName: FAKE_SCHEDULER };

afterEach(() => kubelet.unready.clear());

const allReady = (n: number) => (cs: { status?: { readyReplicas?: number; replicas?: number } }, pods: Pod[]) =>
  pods.length === n && cs.status?.replicas === n && cs.status?.readyReplicas === n;

const revisionOf = (p: Pod): string => p.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '';

describe('CloneSet scaling', () => {
  it('scales from 0 to 5 and back down to 2, reporting status for each', async () => {
    await client.create(cloneSetPath(ns), cloneSetManifest('scale', { replicas: 0 }, fake));
    await waitForCloneSet(
      client,
      ns,
      'scale',
      'replicas 0',
      (cs, pods) => pods.length === 0 && cs.status?.replicas === 0,
    );

    await client.patch(cloneSetPath(ns, 'scale'), { spec: { replicas: 5 } }, 'merge');
    const five = await waitForCloneSet(client, ns, 'scale', '5 ready pods', allReady(5));
    expect(five.status?.updatedReplicas).toBe(5);
    expect(five.status?.labelSelector).toBe('app=scale');

    await client.patch(cloneSetPath(ns, 'scale'), { spec: { replicas: 2 } }, 'merge');
    const two = await waitForCloneSet(client, ns, 'scale', '2 ready pods', allReady(2));
    expect(two.status?.availableReplicas).toBe(2);
  });

  it('scales through the scale subresource, as kubectl scale and the HPA do', async () => {
    await client.create(cloneSetPath(ns), cloneSetManifest('subresource', { replicas: 1 }, fake));
    await waitForCloneSet(client, ns, 'subresource', '1 ready pod', allReady(1));
    await client.patch(`${cloneSetPath(ns, 'subresource')}/scale`, { spec: { replicas: 3 } }, 'merge');
    await waitForCloneSet(client, ns, 'subresource', '3 ready pods', allReady(3));
    const scale = await client.get<{ status: { replicas: number; selector: string } }>(
      `${cloneSetPath(ns, 'subresource')}/scale`,
    );
    expect(scale.status).toEqual({ replicas: 3, selector: 'app=subresource' });
  });
});

describe('CloneSet ReCreate rollout', () => {
  it('with partition 2 of 5 moves exactly 3 pods to the new revision, never more than 1 unavailable', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'partition',
        { replicas: 5, updateStrategy: { type: 'ReCreate', partition: 2, maxUnavailable: 1 } },
        fake,
      ),
    );
    const before = await waitForCloneSet(client, ns, 'partition', '5 ready pods', allReady(5));
    const watcher = await PodWatch.start(client, ns, 'app=partition', 5);
    await client.patch(
      cloneSetPath(ns, 'partition'),
      {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'main',
                  image: 'tailor.local/busybox:v2',
                  imagePullPolicy: 'Never',
                  command: ['/bin/sleep', '3600'],
                },
              ],
            },
          },
        },
      },
      'merge',
    );
    const after = await waitForCloneSet(
      client,
      ns,
      'partition',
      '3 updated of 5 ready',
      (cs, pods) => allReady(5)(cs, pods) && cs.status?.updatedReadyReplicas === 3,
    );
    watcher.stop();
    const pods = await activePods(client, ns, 'partition');
    const byRevision = new Map<string, number>();
    for (const p of pods) byRevision.set(revisionOf(p), (byRevision.get(revisionOf(p)) ?? 0) + 1);
    expect(after.status?.updateRevision).not.toBe(before.status?.updateRevision);
    expect(byRevision.get(after.status?.updateRevision ?? '')).toBe(3);
    expect(byRevision.get(before.status?.updateRevision ?? '')).toBe(2);
    expect(after.status?.expectedUpdatedReplicas).toBe(3);
    watcher.expectUnavailableAtMost(1);
  });

  it('rolling back to the previous template reuses its revision', async () => {
    const cs = await readCloneSet(client, ns, 'partition');
    const original = cs.status?.currentRevision;
    await client.patch(
      cloneSetPath(ns, 'partition'),
      {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'main',
                  image: 'tailor.local/busybox:v1',
                  imagePullPolicy: 'Never',
                  command: ['/bin/sleep', '3600'],
                },
              ],
            },
          },
        },
      },
      'merge',
    );
    const rolledBack = await waitForCloneSet(
      client,
      ns,
      'partition',
      'rolled back',
      (c) => c.status?.updateRevision === original,
    );
    expect(rolledBack.status?.updateRevision).toBe(original);
  });

  // Seen on make dev's sample (a command with `&`): the API server re-encodes a patched revision with
  // Go's JSON, so renumbering by patch failed for good with 422 "data: field is immutable".
  it('rolls back to a template whose JSON Go escapes (&, <, >), renumbering its revision', async () => {
    const shell = (image: string): Record<string, unknown> => ({
      ...fake,
      containers: [
        {
          name: 'main',
          image,
          imagePullPolicy: 'Never',
          command: ['/bin/sh', '-c', 'sleep 3600 & wait; [ 1 < 2 ] && echo "<ok>"'],
        },
      ],
    });
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest('escaped', { replicas: 1 }, shell('tailor.local/busybox:v1')),
    );
    const first = await waitForCloneSet(client, ns, 'escaped', '1 ready pod', allReady(1));
    const original = first.status?.updateRevision;
    await patchTemplateAndWait(client, ns, 'escaped', {
      template: { spec: shell('tailor.local/busybox:v2') },
      what: 'a new revision',
      until: (c) => !!c.status?.updateRevision && c.status.updateRevision !== original,
    });
    const back = await patchTemplateAndWait(client, ns, 'escaped', {
      template: { spec: shell('tailor.local/busybox:v1') },
      what: 'rolled back',
      until: (c) => c.status?.updateRevision === original,
    });
    expect(back.status?.conditions?.find((c) => c.type === 'FailedRevision')).toBeUndefined();
    const revision = await client.get<{ revision?: number }>(
      `/apis/apps/v1/namespaces/${ns}/controllerrevisions/${original}`,
    );
    expect(revision.revision).toBe(3);
  });

  it('finishes a rollout after the controller is killed mid-way, creating no extra pod', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest('restart', { replicas: 4, updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } }, fake),
    );
    await waitForCloneSet(client, ns, 'restart', '4 ready pods', allReady(4));
    const watcher = await PodWatch.start(client, ns, 'app=restart', 4);
    await client.patch(
      cloneSetPath(ns, 'restart'),
      { spec: { template: { metadata: { labels: { app: 'restart', rev: 'two' } } } } },
      'merge',
    );
    // Stop as soon as the rollout has started, then start a fresh controller with an empty cache.
    await waitForCloneSet(
      client,
      ns,
      'restart',
      'rollout started',
      (c) => (c.status?.updatedReplicas ?? 0) >= 1,
      30_000,
    );
    await restartController();
    await waitForCloneSet(
      client,
      ns,
      'restart',
      'rollout finished',
      (c, pods) => allReady(4)(c, pods) && c.status?.updatedReadyReplicas === 4,
    );
    watcher.stop();
    // The 4 original pods and exactly 4 replacements: the restart caused no duplicate create.
    expect(watcher.uidsEverSeen.size).toBe(8);
    watcher.expectUnavailableAtMost(1);
  });
});
