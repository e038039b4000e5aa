// Ordered container updates in place on a real kubelet (decision 0021): OpenKruise v1.9.1's two
// CloneSet e2e cases on container priorities, with Kruise's expectations and windows. The
// container KRUISE_CONTAINER_PRIORITY=10 ("redis") is updated first; the other ("nginx") only
// once redis runs its new image and is ready, so nginx stops more than 10 s (redis's postStart
// hook) after the new redis started; and when redis cannot start, nginx is never updated.
// Translated for the API group (apps.kruise.io → apps.tailor.dev), the test images
// (tailor.local/busybox:v1 and :v2 for nginx, redis and busybox; the failing image is one the
// node does not have and may not pull, Kruise's being one that exits) and the one small node.
// A third case, Tailor's own: a native sidecar's new image goes before the app's, the app's
// only once the new sidecar is ready.
//
// Owns: the CloneSets and pods of its namespace. Must not: touch another namespace's objects.
import { afterEach, describe, expect, it } from '@jest/globals';
import { ANNOTATION_INPLACE_UPDATE_STATE, type InPlaceUpdateState } from '../../src/api/types.js';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { eventually, RUN_UNTIL_TERM } from '../support/cluster/testbed.js';
import { activePods, cloneSetManifest, cloneSetPath, readCloneSet, type TestCloneSet } from '../support/fixtures/cloneset.js';
import { consistentlyEqual, eventuallyEqual } from '../support/fixtures/gomega.js';
import {
  progressingAvailable as available,
  progressingUpdated as updating,
  progressingWithoutTime,
  updateCloneSet,
} from '../support/fixtures/kruise-tester.js';

const { client, ns } = controllerTestBed('container-order');

const V1 = 'tailor.local/busybox:v1';
const V2 = 'tailor.local/busybox:v2';
/** Not on the node, and `imagePullPolicy: Never`: the container cannot start. */
const NOT_ON_NODE = 'tailor.local/busybox:not-on-node';
const SECOND = 1000;
const TEN_MINUTES = 600;
const CASE_TIMEOUT = 420_000;

afterEach(async () => {
  await client.delete(cloneSetPath(ns));
  await eventually(
    'the previous case to be gone',
    async () => ((await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`)).items.length === 0 ? true : undefined),
    120 * SECOND,
  );
}, 150_000);

const container = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  image: V1,
  imagePullPolicy: 'Never',
  command: RUN_UNTIL_TERM,
  resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '1', memory: '1Gi' } },
  ...extra,
});

/** Kruise's case CloneSet: nginx, then redis with priority 10 and a 10 s postStart hook; grace 3 s. */
function prioritizedCloneSet(name: string): TestCloneSet {
  const redis = container('redis', {
    env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }],
    lifecycle: { postStart: { exec: { command: ['sleep', '10'] } } },
  });
  const cs = cloneSetManifest(
    name,
    { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' }, minReadySeconds: 10, progressDeadlineSeconds: TEN_MINUTES },
    { containers: [container('nginx'), redis], terminationGracePeriodSeconds: 3 },
  );
  return cs;
}

const status = async (name: string): Promise<NonNullable<TestCloneSet['status']>> => (await readCloneSet(client, ns, name)).status ?? {};
const progressing = (name: string) => () => progressingWithoutTime(client, ns, name);
const onlyPod = async (name: string): Promise<Pod> => {
  const pods = await activePods(client, ns, name);
  expect(pods).toHaveLength(1);
  return pods[0]!;
};
const containerStatus = (pod: Pod, name: string) => pod.status?.containerStatuses?.find((s) => s.name === name);
const updateState = (pod: Pod): InPlaceUpdateState =>
  JSON.parse(pod.metadata?.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE] ?? '{}') as InPlaceUpdateState;

const generationObserved = (name: string) => async (): Promise<boolean> => {
  const cs = await readCloneSet(client, ns, name);
  return cs.metadata?.generation === cs.status?.observedGeneration;
};

/** The opening of both cases: created, Progressing CloneSetUpdated, one pod ready, then available; images changed. */
async function createAndUpdate(name: string, redisImage: string): Promise<void> {
  const created = await client.create<TestCloneSet>(cloneSetPath(ns), prioritizedCloneSet(name));
  expect(created.spec.updateStrategy?.type).toBe('InPlaceIfPossible');
  await eventuallyEqual('Progressing', progressing(name), updating, 120 * SECOND, 3 * SECOND);
  await eventuallyEqual('status.replicas', async () => (await status(name)).replicas ?? 0, 1, 3 * SECOND, SECOND);
  await eventuallyEqual('status.readyReplicas', async () => (await status(name)).readyReplicas ?? 0, 1, 120 * SECOND, 3 * SECOND);
  await eventuallyEqual('Progressing', progressing(name), available, 120 * SECOND, 3 * SECOND);
  expect(await activePods(client, ns, name)).toHaveLength(1);

  await updateCloneSet(client, ns, name, (cs) => {
    const [nginx, redis] = cs.spec.template.spec!.containers;
    nginx!.image = V2;
    redis!.image = redisImage;
  });
  await eventuallyEqual('Progressing', progressing(name), updating, 120 * SECOND, 3 * SECOND);
  await eventuallyEqual('generation observed', generationObserved(name), true, 10 * SECOND, 3 * SECOND);
}

/** A container status time, as the wire or the client's types give it. */
type Time = string | Date;

/** When `stopped` (a container's last run) ended more than 10 s after `started` (another's new run) began. */
async function stoppedTenSecondsAfter(
  name: string,
  stopped: (pod: Pod) => Time | undefined,
  started: (pod: Pod) => Time | undefined,
): Promise<boolean> {
  const pod = await onlyPod(name);
  const [end, begin] = [stopped(pod), started(pod)];
  if (!end || !begin) return false;
  return new Date(end).getTime() > new Date(begin).getTime() + 10 * SECOND;
}

describe('CloneSet in-place update with container priorities (Kruise e2e)', () => {
  it(
    'in-place update two container images with priorities successfully',
    async () => {
      const name = 'priorities';
      await createAndUpdate(name, V2);
      await eventuallyEqual(
        'status.updatedReadyReplicas',
        async () => (await status(name)).updatedReadyReplicas ?? 0,
        1,
        120 * SECOND,
        3 * SECOND,
      );
      await eventuallyEqual('Progressing', progressing(name), available, 120 * SECOND, 3 * SECOND);

      const pod = await onlyPod(name);
      expect(containerStatus(pod, 'nginx')?.restartCount).toBe(1);
      expect(containerStatus(pod, 'redis')?.restartCount).toBe(1);

      // nginx stopped more than 10 s after the new redis started: redis went first, and nginx
      // waited for it to be ready (its postStart hook takes 10 s).
      const nginxStoppedAfterRedisReady = (): Promise<boolean> =>
        stoppedTenSecondsAfter(
          name,
          (p) => containerStatus(p, 'nginx')?.lastState?.terminated?.finishedAt,
          (p) => containerStatus(p, 'redis')?.state?.running?.startedAt,
        );
      await eventuallyEqual('nginx stopped after new redis has started 10 s', nginxStoppedAfterRedisReady, true, 30 * SECOND, SECOND);

      const batches = updateState(pod).containerBatchesRecord ?? [];
      expect(batches.map((b) => b.containers)).toEqual([['redis'], ['nginx']]);
    },
    CASE_TIMEOUT,
  );

  it(
    'in-place update two container images with priorities, should not update the next when the previous one failed',
    async () => {
      const name = 'priorities-failed';
      await createAndUpdate(name, NOT_ON_NODE);

      const redisOf = async () => containerStatus(await onlyPod(name), 'redis');
      await eventually(
        'redis to have stopped its old container',
        async () => (await redisOf())?.lastState?.terminated ?? undefined,
        60 * SECOND,
      );
      await eventually('redis to wait (it cannot start)', async () => (await redisOf())?.state?.waiting ?? undefined, 60 * SECOND);

      const pod = await onlyPod(name);
      expect(containerStatus(pod, 'nginx')?.restartCount).toBe(0);
      const state = updateState(pod);
      expect((state.containerBatchesRecord ?? []).map((b) => b.containers)).toEqual([['redis']]);
      expect(state.nextContainerImages).toEqual({ nginx: V2 });

      await consistentlyEqual('Progressing', progressing(name), updating, 30 * SECOND, 3 * SECOND);
      expect(containerStatus(await onlyPod(name), 'nginx')?.restartCount).toBe(0);
    },
    CASE_TIMEOUT,
  );
});

describe('CloneSet in-place update of a native sidecar and the app (decision 0021)', () => {
  it(
    'updates the sidecar first and the app only once the new sidecar is ready',
    async () => {
      const name = 'sidecar-first';
      const mesh = container('mesh', { restartPolicy: 'Always', lifecycle: { postStart: { exec: { command: ['sleep', '10'] } } } });
      const cs = cloneSetManifest(
        name,
        { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' }, progressDeadlineSeconds: TEN_MINUTES },
        { initContainers: [mesh], containers: [container('app')], terminationGracePeriodSeconds: 3 },
      );
      await client.create<TestCloneSet>(cloneSetPath(ns), cs);
      await eventuallyEqual('Progressing', progressing(name), available, 120 * SECOND, 3 * SECOND);

      await updateCloneSet(client, ns, name, (c) => {
        c.spec.template.spec!.initContainers![0]!.image = V2;
        c.spec.template.spec!.containers[0]!.image = V2;
      });
      await eventuallyEqual('generation observed', generationObserved(name), true, 10 * SECOND, SECOND);
      await eventuallyEqual(
        'status.updatedReadyReplicas',
        async () => (await status(name)).updatedReadyReplicas ?? 0,
        1,
        120 * SECOND,
        3 * SECOND,
      );

      const pod = await onlyPod(name);
      const meshStatus = (p: Pod) => p.status?.initContainerStatuses?.find((s) => s.name === 'mesh');
      expect(meshStatus(pod)?.image).toMatch(/busybox:v2$/);
      expect(containerStatus(pod, 'app')?.restartCount).toBe(1);
      const appStoppedAfterMeshReady = (): Promise<boolean> =>
        stoppedTenSecondsAfter(
          name,
          (p) => containerStatus(p, 'app')?.lastState?.terminated?.finishedAt,
          (p) => meshStatus(p)?.state?.running?.startedAt,
        );
      await eventuallyEqual('app stopped after the new sidecar has started 10 s', appStoppedAfterMeshReady, true, 30 * SECOND, SECOND);
      expect((updateState(pod).containerBatchesRecord ?? []).map((b) => b.containers)).toEqual([['mesh'], ['app']]);
    },
    CASE_TIMEOUT,
  );
});
