// In-place updates against the real API server, with the fake kubelet restarting containers when
// their image changes (as the kubelet does): pods keep their UID while images and labels change;
// InPlaceIfPossible falls back to recreate for other changes; InPlaceOnly refuses them and says
// which field; partition and a rollback during the grace period behave.
import { describe, expect, it } from '@jest/globals';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { CONDITION_INPLACE_UPDATE_READY } from '../../src/api/types.js';
import type { Pod } from '../../src/api/wire.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  patchTemplateAndWait,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { FAKE_SCHEDULER } from '../support/cluster/fake-kubelet.js';
import { PodWatch } from '../support/cluster/pod-watch.js';
import { eventually } from '../support/cluster/testbed.js';

const { client, ns, kubelet } = controllerTestBed('inplace', { fakeKubelet: true });

const main = (image: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'main',
  image,
  imagePullPolicy: 'Never',
  command: ['/bin/sleep', '3600'],
  ...extra,
});
const sidecar = {
  name: 'sidecar',
  image: 'tailor.local/busybox:v1',
  imagePullPolicy: 'Never',
  command: ['/bin/sleep', '3600'],
};

async function createReady(
  name: string,
  replicas: number,
  updateStrategy: Record<string, unknown>,
): Promise<Map<string, Pod>> {
  await client.create(
    cloneSetPath(ns),
    cloneSetManifest(
      name,
      { replicas, updateStrategy },
      { schedulerName: FAKE_SCHEDULER, containers: [main('tailor.local/busybox:v1'), sidecar] },
    ),
  );
  await waitForReady(client, ns, name, replicas);
  return new Map((await activePods(client, ns, name)).map((p) => [p.metadata?.uid ?? '', p]));
}

const setContainers = (name: string, containers: unknown[]): Promise<unknown> =>
  client.patch(cloneSetPath(ns, name), { spec: { template: { spec: { containers } } } }, 'merge');

const status = (pod: Pod, container: string) => pod.status?.containerStatuses?.find((c) => c.name === container);
const gate = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === CONDITION_INPLACE_UPDATE_READY)?.status;

describe('InPlaceIfPossible', () => {
  it('changes the image of 4 pods in place, one at a time, restarting only the changed container once', async () => {
    const before = await createReady('images', 4, { type: 'InPlaceIfPossible', maxUnavailable: 1 });
    const watch = await PodWatch.start(client, ns, 'app=images', 4);
    await setContainers('images', [main('tailor.local/busybox:v2'), sidecar]);
    await waitForCloneSet(
      client,
      ns,
      'images',
      'all updated and ready',
      (cs, pods) => cs.status?.updatedReadyReplicas === 4 && pods.every((p) => gate(p) === 'True'),
    );
    watch.stop();
    const after = await activePods(client, ns, 'images');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    for (const pod of after) {
      const old = before.get(pod.metadata?.uid ?? '')!;
      expect(status(pod, 'main')?.restartCount).toBe((status(old, 'main')?.restartCount ?? 0) + 1);
      expect(status(pod, 'main')?.imageID).not.toBe(status(old, 'main')?.imageID);
      expect(status(pod, 'sidecar')?.restartCount).toBe(status(old, 'sidecar')?.restartCount);
      expect(pod.spec?.nodeName).toBe(old.spec?.nodeName);
    }
    expect(watch.uidsEverSeen.size).toBe(4);
    watch.expectUnavailableAtMost(1);
  });

  it('changes pod labels in place without restarting anything', async () => {
    const before = await createReady('labels', 2, { type: 'InPlaceIfPossible' });
    await patchTemplateAndWait(client, ns, 'labels', {
      template: { metadata: { labels: { app: 'labels', tier: 'gold' } } },
      what: 'labels updated',
      until: (cs, pods) =>
        cs.status?.updatedReadyReplicas === 2 && pods.every((p) => p.metadata?.labels?.['tier'] === 'gold'),
    });
    const after = await activePods(client, ns, 'labels');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    expect(after.every((p) => status(p, 'main')?.restartCount === 0)).toBe(true);
  });

  it('recreates pods for a change that cannot be made in place (env)', async () => {
    const before = await createReady('envchange', 2, { type: 'InPlaceIfPossible' });
    await setContainers('envchange', [
      main('tailor.local/busybox:v1', { env: [{ name: 'COLOUR', value: 'blue' }] }),
      sidecar,
    ]);
    await waitForCloneSet(
      client,
      ns,
      'envchange',
      'recreated',
      (cs, pods) => cs.status?.updatedReadyReplicas === 2 && pods.length === 2,
    );
    const after = await activePods(client, ns, 'envchange');
    expect(after.some((p) => before.has(p.metadata?.uid ?? ''))).toBe(false);
  });

  it('moves exactly 2 of 4 pods in place with partition 2', async () => {
    const before = await createReady('partition', 4, { type: 'InPlaceIfPossible', partition: 2, maxUnavailable: 1 });
    await setContainers('partition', [main('tailor.local/busybox:v2'), sidecar]);
    const cs = await waitForCloneSet(
      client,
      ns,
      'partition',
      '2 updated',
      (c, pods) => c.status?.updatedReadyReplicas === 2 && pods.every((p) => gate(p) === 'True'),
    );
    const after = await activePods(client, ns, 'partition');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    expect(after.filter((p) => p.spec?.containers?.[0]?.image === 'tailor.local/busybox:v2')).toHaveLength(2);
    expect(cs.status?.updatedReplicas).toBe(2);
  });

  it('converges without a restart when the template is reverted during the grace period', async () => {
    const before = await createReady('grace', 1, {
      type: 'InPlaceIfPossible',
      inPlaceUpdateStrategy: { gracePeriodSeconds: 30 },
    });
    await setContainers('grace', [main('tailor.local/busybox:v2'), sidecar]);
    await eventually('pod drained', async () => {
      const [pod] = await activePods(client, ns, 'grace');
      return pod && gate(pod) === 'False' ? pod : undefined;
    });
    await setContainers('grace', [main('tailor.local/busybox:v1'), sidecar]);
    await waitForCloneSet(
      client,
      ns,
      'grace',
      'back to ready',
      (cs, pods) => cs.status?.updatedReadyReplicas === 1 && pods.every((p) => gate(p) === 'True'),
    );
    const [pod] = await activePods(client, ns, 'grace');
    expect(before.has(pod?.metadata?.uid ?? '')).toBe(true);
    expect(pod?.spec?.containers?.[0]?.image).toBe('tailor.local/busybox:v1');
    expect(status(pod!, 'main')?.restartCount).toBe(0);
  });
});

describe('a new image that never becomes ready', () => {
  it('stops the rollout at maxUnavailable with an event, and reverting the template heals the pod in place', async () => {
    const before = await createReady('broken', 3, { type: 'InPlaceIfPossible', maxUnavailable: 1 });
    kubelet.brokenImages.add('tailor.local/busybox:v2');
    try {
      await setContainers('broken', [main('tailor.local/busybox:v2'), sidecar]);
      await eventually('RolloutBlocked event', async () => {
        const events = await client.list<{ reason?: string; involvedObject?: { name?: string } }>(
          `/api/v1/namespaces/${ns}/events`,
        );
        return events.items.some((e) => e.involvedObject?.name === 'broken' && e.reason === 'RolloutBlocked')
          ? true
          : undefined;
      });
      const stuck = await activePods(client, ns, 'broken');
      expect(stuck.filter((p) => p.spec?.containers?.[0]?.image === 'tailor.local/busybox:v2')).toHaveLength(1);
      await setContainers('broken', [main('tailor.local/busybox:v1'), sidecar]);
      await waitForCloneSet(
        client,
        ns,
        'broken',
        'healed',
        (cs, pods) => cs.status?.updatedReadyReplicas === 3 && pods.every((p) => gate(p) === 'True'),
      );
      const after = await activePods(client, ns, 'broken');
      expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
      expect(after.every((p) => p.spec?.containers?.[0]?.image === 'tailor.local/busybox:v1')).toBe(true);
    } finally {
      kubelet.brokenImages.clear();
    }
  });
});

describe('the agent backend (a kubelet that cannot resize)', () => {
  it("sends cpu/memory in a resize-request annotation and follows the agent's answer in status.resize", async () => {
    const withResources = (cpu: string) =>
      main('tailor.local/busybox:v1', {
        resources: { requests: { cpu, memory: '32Mi' }, limits: { cpu, memory: '32Mi' } },
      });
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'agent',
        { replicas: 2, updateStrategy: { type: 'InPlaceOnly' } },
        { schedulerName: FAKE_SCHEDULER, containers: [withResources('100m')] },
      ),
    );
    await waitForReady(client, ns, 'agent', 2);
    const before = new Set((await activePods(client, ns, 'agent')).map((p) => p.metadata?.uid));
    await setContainers('agent', [withResources('200m')]);
    // No agent answers here: the resize stays Proposed and says why.
    const waiting = await waitForCloneSet(
      client,
      ns,
      'agent',
      'Proposed with NoAgentResponse',
      (cs) => cs.status?.resize?.proposed === 2,
    );
    expect(waiting.status?.resize?.pods?.[0]?.reason).toBe('NoAgentResponse');
    const pods = await activePods(client, ns, 'agent');
    expect(new Set(pods.map((p) => p.metadata?.uid))).toEqual(before);
    for (const pod of pods) {
      const request = JSON.parse(pod.metadata?.annotations?.['apps.tailor.dev/resize-request'] ?? '{}') as {
        revision: string;
        containers: Record<string, { limits?: { cpu?: string } }>;
      };
      expect(request.revision).toBe(waiting.status?.updateRevision);
      expect(request.containers['main']?.limits?.cpu).toBe('200m');
      // Answer as the agent would once it applied the request.
      await client.patch(
        `/api/v1/namespaces/${ns}/pods/${pod.metadata?.name}`,
        {
          metadata: {
            annotations: {
              'apps.tailor.dev/resize-status': JSON.stringify({
                revision: request.revision,
                state: '',
                since: new Date().toISOString(),
              }),
            },
          },
        },
        'merge',
      );
    }
    await waitForCloneSet(
      client,
      ns,
      'agent',
      'resizes done',
      (cs) => cs.status?.resize?.resizing === 0 && !cs.status.resize.pods,
    );
  });
});

describe('InPlaceOnly', () => {
  it('leaves pods untouched for an env change and names the field in a condition and an event', async () => {
    const before = await createReady('only', 2, { type: 'InPlaceOnly' });
    await setContainers('only', [
      main('tailor.local/busybox:v1', { env: [{ name: 'COLOUR', value: 'blue' }] }),
      sidecar,
    ]);
    const cs = await waitForCloneSet(
      client,
      ns,
      'only',
      'FailedUpdate condition',
      (c) => c.status?.conditions?.some((x) => x.type === 'FailedUpdate' && x.status === 'True') ?? false,
    );
    const condition = cs.status?.conditions?.find((x) => x.type === 'FailedUpdate');
    expect(condition?.reason).toBe('NotInPlaceUpdatable');
    expect(condition?.message).toContain('spec.containers[main].env');
    const after = await activePods(client, ns, 'only');
    expect(new Set(after.map((p) => p.metadata?.uid))).toEqual(new Set(before.keys()));
    expect(after.every((p) => !p.spec?.containers?.[0]?.env)).toBe(true);
    const events = await client.list<{ reason?: string; message?: string; involvedObject?: { name?: string } }>(
      `/api/v1/namespaces/${ns}/events`,
    );
    expect(
      events.items.some(
        (e) => e.involvedObject?.name === 'only' && e.reason === 'NotInPlaceUpdatable' && e.message?.includes('env'),
      ),
    ).toBe(true);
  });
});
