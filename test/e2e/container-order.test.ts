// Ordered container updates in place on a real kubelet (decision 0021): OpenKruise v1.9's CloneSet
// e2e cases on container priorities, with Kruise's expectations and windows. The container
// KRUISE_CONTAINER_PRIORITY=10 ("redis") is updated first; the other ("nginx") only once redis
// runs the new revision and is ready, so nginx stops more than 10 s (redis's postStart hook)
// after the new redis started; and when redis cannot start, nginx is never updated.
// Container priority orders everything the update does to a container (issue 32.4): Kruise's
// cases with a redis restarted for env read from pod metadata (test/e2e/apps/v1alpha1/cloneset.go)
// and with nginx resized as well (inplace_vpa.go, under each of its four resize policies): the
// resize goes through pods/resize, the restart through the node agent's restart request (the
// agent runs for the node as a process of this test, as the DaemonSet would).
// Translated for the API group (apps.kruise.io → apps.tailor.dev), the test images
// (tailor.local/busybox:v1 and :v2 for nginx, redis and busybox; the failing image is one the
// node does not have and may not pull, Kruise's being one that exits) and the one small node.
// A last case, Tailor's own: a native sidecar's new image goes before the app's, the app's
// only once the new sidecar is ready.
//
// Owns: the CloneSets and pods of its namespace, and the node agent process it starts. Must not:
// touch another namespace's objects.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ANNOTATION_INPLACE_UPDATE_STATE, type InPlaceUpdateState } from '../../src/api/types.js';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { startNodeAgent, type NodeAgent } from '../support/cluster/node-agent.js';
import { eventually, RUN_UNTIL_TERM } from '../support/cluster/testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  type TestCloneSet,
} from '../support/fixtures/cloneset.js';
import { consistentlyEqual, eventuallyEqual } from '../support/fixtures/gomega.js';
import {
  progressingAvailable as available,
  progressingUpdated as updating,
  progressingWithoutTime,
  updateCloneSet,
} from '../support/fixtures/kruise-tester.js';

const { client, ns } = controllerTestBed('container-order');
let agent: NodeAgent | undefined;

beforeAll(async () => {
  agent = await startNodeAgent(18396);
}, 120_000);
afterAll(async () => {
  await agent?.stop();
});

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
    {
      replicas: 1,
      updateStrategy: { type: 'InPlaceIfPossible' },
      minReadySeconds: 10,
      progressDeadlineSeconds: TEN_MINUTES,
    },
    { containers: [container('nginx'), redis], terminationGracePeriodSeconds: 3 },
  );
  return cs;
}

const status = async (name: string): Promise<NonNullable<TestCloneSet['status']>> =>
  (await readCloneSet(client, ns, name)).status ?? {};
const progressing = (name: string) => () => progressingWithoutTime(client, ns, name);
const onlyPod = async (name: string): Promise<Pod> => {
  const pods = await activePods(client, ns, name);
  expect(pods).toHaveLength(1);
  return pods[0]!;
};
/** Kruise's wait after an update of its one-pod CloneSets: the pod updated and ready, Progressing says available. */
async function updatedReadyAndAvailable(name: string): Promise<void> {
  await eventuallyEqual(
    'status.updatedReadyReplicas',
    async () => (await status(name)).updatedReadyReplicas ?? 0,
    1,
    120 * SECOND,
    3 * SECOND,
  );
  await eventuallyEqual('Progressing', progressing(name), available, 120 * SECOND, 3 * SECOND);
}
const containerStatus = (pod: Pod, name: string) => pod.status?.containerStatuses?.find((s) => s.name === name);
const updateState = (pod: Pod): InPlaceUpdateState =>
  JSON.parse(pod.metadata?.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE] ?? '{}') as InPlaceUpdateState;

const generationObserved = (name: string) => async (): Promise<boolean> => {
  const cs = await readCloneSet(client, ns, name);
  return cs.metadata?.generation === cs.status?.observedGeneration;
};

/** The opening of Kruise's cloneset.go cases: created, Progressing CloneSetUpdated, one pod ready, then available; then `change`. */
async function createAndUpdate(cs: TestCloneSet, change: (cs: TestCloneSet) => void): Promise<void> {
  const name = cs.metadata?.name ?? '';
  const created = await client.create<TestCloneSet>(cloneSetPath(ns), cs);
  expect(created.spec.updateStrategy?.type).toBe('InPlaceIfPossible');
  await eventuallyEqual('Progressing', progressing(name), updating, 120 * SECOND, 3 * SECOND);
  await eventuallyEqual('status.replicas', async () => (await status(name)).replicas ?? 0, 1, 3 * SECOND, SECOND);
  await eventuallyEqual(
    'status.readyReplicas',
    async () => (await status(name)).readyReplicas ?? 0,
    1,
    120 * SECOND,
    3 * SECOND,
  );
  await eventuallyEqual('Progressing', progressing(name), available, 120 * SECOND, 3 * SECOND);
  expect(await activePods(client, ns, name)).toHaveLength(1);

  await updateCloneSet(client, ns, name, change);
  await eventuallyEqual('Progressing', progressing(name), updating, 120 * SECOND, 3 * SECOND);
  await eventuallyEqual('generation observed', generationObserved(name), true, 10 * SECOND, 3 * SECOND);
}

/** Kruise's first update: both images. */
const newImages =
  (redisImage: string) =>
  (cs: TestCloneSet): void => {
    const [nginx, redis] = cs.spec.template.spec!.containers;
    nginx!.image = V2;
    redis!.image = redisImage;
  };

/** A container status time, as the wire or the client's types give it. */
type Time = string | Date;

/**
 * When `stopped` (a container's last run) ended at least 10 s after `started` (another's new run)
 * began. Kruise asks for strictly after; the API server writes both times in whole seconds, so a
 * real gap of 10.4 s (redis's 10 s postStart, then Tailor's next batch within the second) can read
 * as exactly 10 s. Whole-second floors never shrink a gap below its own floor, so 10 s is exact.
 */
async function stoppedTenSecondsAfter(
  name: string,
  stopped: (pod: Pod) => Time | undefined,
  started: (pod: Pod) => Time | undefined,
): Promise<boolean> {
  const pod = await onlyPod(name);
  const [end, begin] = [stopped(pod), started(pod)];
  if (!end || !begin) return false;
  return new Date(end).getTime() >= new Date(begin).getTime() + 10 * SECOND;
}

describe('CloneSet in-place update with container priorities (Kruise e2e)', () => {
  it(
    'in-place update two container images with priorities successfully',
    async () => {
      const name = 'priorities';
      await createAndUpdate(prioritizedCloneSet(name), newImages(V2));
      await updatedReadyAndAvailable(name);

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
      await eventuallyEqual(
        'nginx stopped after new redis has started 10 s',
        nginxStoppedAfterRedisReady,
        true,
        30 * SECOND,
        SECOND,
      );

      const batches = updateState(pod).containerBatchesRecord ?? [];
      expect(batches.map((b) => b.containers)).toEqual([['redis'], ['nginx']]);
    },
    CASE_TIMEOUT,
  );

  it(
    'in-place update two container images with priorities, should not update the next when the previous one failed',
    async () => {
      const name = 'priorities-failed';
      await createAndUpdate(prioritizedCloneSet(name), newImages(NOT_ON_NODE));

      const redisOf = async () => containerStatus(await onlyPod(name), 'redis');
      await eventually(
        'redis to have stopped its old container',
        async () => (await redisOf())?.lastState?.terminated ?? undefined,
        60 * SECOND,
      );
      await eventually(
        'redis to wait (it cannot start)',
        async () => (await redisOf())?.state?.waiting ?? undefined,
        60 * SECOND,
      );

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

/** Kruise's cloneset.go case: the template annotation `config`, read by redis's env through the downward API. */
function configReadingCloneSet(
  name: string,
  extra: { nginx?: Record<string, unknown>; minReadySeconds?: number } = {},
): TestCloneSet {
  const redis = container('redis', {
    env: [
      { name: 'KRUISE_CONTAINER_PRIORITY', value: '10' },
      { name: 'CONFIG', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['config']" } } },
    ],
    lifecycle: { postStart: { exec: { command: ['sleep', '10'] } } },
  });
  const cs = cloneSetManifest(
    name,
    {
      replicas: 1,
      updateStrategy: { type: 'InPlaceIfPossible' },
      progressDeadlineSeconds: TEN_MINUTES,
      ...(extra.minReadySeconds !== undefined ? { minReadySeconds: extra.minReadySeconds } : {}),
    },
    { containers: [container('nginx', extra.nginx), redis] },
  );
  cs.spec.template.metadata = { ...cs.spec.template.metadata, annotations: { config: 'foo' } };
  return cs;
}

/** When nginx stopped for its update (its last run's end; its new run's start when the kubelet kept no last state, Kruise's issue 1925). */
const nginxStopped = (p: Pod): Time | undefined => {
  const s = containerStatus(p, 'nginx');
  return s?.lastState?.terminated?.finishedAt ?? s?.state?.running?.startedAt;
};
const redisStarted = (p: Pod): Time | undefined => containerStatus(p, 'redis')?.state?.running?.startedAt;

describe('CloneSet in-place update with container priorities orders restarts from metadata (Kruise e2e, issue 32.4)', () => {
  it(
    'in-place update two container image and env from metadata with priorities',
    async () => {
      const name = 'metadata-priorities';
      await createAndUpdate(configReadingCloneSet(name, { minReadySeconds: 10 }), (cs) => {
        cs.spec.template.spec!.containers[0]!.image = V2;
        cs.spec.template.metadata!.annotations!['config'] = 'bar';
      });
      await updatedReadyAndAvailable(name);

      const pod = await onlyPod(name);
      expect(containerStatus(pod, 'nginx')?.restartCount).toBe(1);
      expect(containerStatus(pod, 'redis')?.restartCount).toBe(1);
      const nginxStoppedAfterRedisReady = (): Promise<boolean> =>
        stoppedTenSecondsAfter(
          name,
          (p) => containerStatus(p, 'nginx')?.lastState?.terminated?.finishedAt,
          redisStarted,
        );
      await eventuallyEqual(
        'nginx stopped after new redis has started 10 s',
        nginxStoppedAfterRedisReady,
        true,
        30 * SECOND,
        SECOND,
      );
      expect((updateState(pod).containerBatchesRecord ?? []).map((b) => b.containers)).toEqual([['redis'], ['nginx']]);
    },
    CASE_TIMEOUT,
  );
});

// Kruise's inplace_vpa.go: nginx starts with its oldResource and moves to newResource with its new
// image; redis (priority 10) gets a new image, or is restarted for the annotation it reads.
const OLD_RESOURCES = { requests: { cpu: '200m', memory: '200Mi' }, limits: { cpu: '1', memory: '1Gi' } };
const NEW_RESOURCES = { requests: { cpu: '100m', memory: '100Mi' }, limits: { cpu: '800m', memory: '800Mi' } };
const RESIZE_POLICIES: [string, { resourceName: string; restartPolicy: string }[]][] = [
  [
    'RestartContainer',
    [
      { resourceName: 'cpu', restartPolicy: 'RestartContainer' },
      { resourceName: 'memory', restartPolicy: 'RestartContainer' },
    ],
  ],
  ['memory RestartContainer', [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }]],
  ['cpu RestartContainer', [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }]],
  [
    'NotRequired',
    [
      { resourceName: 'cpu', restartPolicy: 'NotRequired' },
      { resourceName: 'memory', restartPolicy: 'NotRequired' },
    ],
  ],
];
const VPA_CASE_TIMEOUT = 720_000;

type Resources = NonNullable<NonNullable<Pod['spec']>['containers'][number]['resources']>;
const quantity = (value: string | undefined): number => {
  const m = /^(\d+(?:\.\d+)?)(m|Mi|Gi)?$/.exec(value ?? '0');
  const n = Number(m?.[1] ?? NaN);
  return m?.[2] === 'm' ? n / 1000 : m?.[2] === 'Mi' ? n * 2 ** 20 : m?.[2] === 'Gi' ? n * 2 ** 30 : n;
};
/** Kruise's ResourceEqual: every cpu/memory request and limit the spec sets is the status's. */
function resourceEqual(spec: Resources | undefined, actual: Resources | undefined): boolean {
  if (!spec || !actual) return spec === actual;
  return (['requests', 'limits'] as const).every(
    (part) =>
      spec[part] === undefined ||
      (['cpu', 'memory'] as const).every((r) => quantity(spec[part]?.[r]) === quantity(actual[part]?.[r])),
  );
}
/** Kruise's checkPodResource: every container but redis has resources other than before, and every container runs its spec's. */
function resourcesChangedAndActuated(pod: Pod, before: Record<string, Resources | undefined>): boolean {
  const spec = pod.spec?.containers ?? [];
  if (spec.some((c) => c.name !== 'redis' && resourceEqual(c.resources, before[c.name]))) return false;
  return (pod.status?.containerStatuses ?? []).every((s) =>
    resourceEqual(spec.find((c) => c.name === s.name)?.resources, s.resources),
  );
}
const resourcesOf = (pod: Pod): Record<string, Resources | undefined> =>
  Object.fromEntries((pod.spec?.containers ?? []).map((c) => [c.name, c.resources]));

/** Kruise's testUpdateResource opening: created, one pod ready; its nginx container ID and resources. */
async function createReady(
  cs: TestCloneSet,
): Promise<{ nginxId: string; before: Record<string, Resources | undefined> }> {
  const name = cs.metadata?.name ?? '';
  const created = await client.create<TestCloneSet>(cloneSetPath(ns), cs);
  expect(created.spec.updateStrategy?.type).toBe('InPlaceIfPossible');
  await eventuallyEqual('status.replicas', async () => (await status(name)).replicas ?? 0, 1, 3 * SECOND, SECOND);
  await eventuallyEqual(
    'status.readyReplicas',
    async () => (await status(name)).readyReplicas ?? 0,
    1,
    60 * SECOND,
    3 * SECOND,
  );
  const pod = await onlyPod(name);
  return { nginxId: containerStatus(pod, 'nginx')?.containerID ?? '', before: resourcesOf(pod) };
}

/** Kruise's updateClone: the change, then the generation observed within 10 s. */
async function updateClone(name: string, change: (cs: TestCloneSet) => void): Promise<void> {
  await updateCloneSet(client, ns, name, change);
  await eventuallyEqual('generation observed', generationObserved(name), true, 10 * SECOND, 3 * SECOND);
}

/** Kruise's waitCloneSetUpdatedAndReady: updatedAvailableReplicas 1 within 600 s, then nginx's container ID changed. */
async function waitUpdatedAndReady(name: string, nginxId: string): Promise<Pod> {
  await eventuallyEqual(
    'status.updatedAvailableReplicas',
    async () => (await status(name)).updatedAvailableReplicas ?? 0,
    1,
    600 * SECOND,
    3 * SECOND,
  );
  await eventually(
    'the nginx container ID to change',
    async () => ((await redisOrNginx(name, 'nginx'))?.containerID !== nginxId ? true : undefined),
    120 * SECOND,
  );
  return onlyPod(name);
}
const redisOrNginx = async (name: string, container: string) => containerStatus(await onlyPod(name), container);

/** Kruise's image-and-resource update of nginx (its first container). */
const nginxImageAndResources = (cs: TestCloneSet): void => {
  cs.spec.template.spec!.containers[0]!.image = V2;
  cs.spec.template.spec!.containers[0]!.resources = NEW_RESOURCES;
};

describe.each(RESIZE_POLICIES)(
  'CloneSet in-place update of resources with container priorities, resize policy %s (Kruise InplaceVPA e2e, issue 32.4)',
  (_policy, resizePolicy) => {
    it(
      'in-place update two container image, resource with priorities successfully',
      async () => {
        const name = 'vpa-priorities';
        const redis = container('redis', {
          env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }],
          lifecycle: { postStart: { exec: { command: ['sleep', '10'] } } },
        });
        const cs = cloneSetManifest(
          name,
          { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } },
          {
            containers: [container('nginx', { resources: OLD_RESOURCES, resizePolicy }), redis],
            terminationGracePeriodSeconds: 3,
          },
        );
        const { nginxId, before } = await createReady(cs);

        await updateClone(name, (c) => {
          nginxImageAndResources(c);
          c.spec.template.spec!.containers[1]!.image = V2;
        });
        const pod = await waitUpdatedAndReady(name, nginxId);

        // Kruise leaves nginx's restart count unchecked: a RestartContainer resize may restart it twice.
        expect(containerStatus(pod, 'redis')?.restartCount).toBe(1);
        await eventuallyEqual(
          'nginx stopped after new redis has started 10 s',
          () =>
            stoppedTenSecondsAfter(
              name,
              (p) => containerStatus(p, 'nginx')?.lastState?.terminated?.finishedAt,
              redisStarted,
            ),
          true,
          30 * SECOND,
          SECOND,
        );
        expect((updateState(pod).containerBatchesRecord ?? []).map((b) => b.containers)).toEqual([
          ['redis'],
          ['nginx'],
        ]);
        expect(resourcesChangedAndActuated(await onlyPod(name), before)).toBe(true);
      },
      VPA_CASE_TIMEOUT,
    );

    it(
      'in-place update two container image, resource and env from metadata with priorities',
      async () => {
        const name = 'vpa-metadata-priorities';
        const { nginxId, before } = await createReady(
          configReadingCloneSet(name, { nginx: { resources: OLD_RESOURCES, resizePolicy } }),
        );

        await updateClone(name, (c) => {
          nginxImageAndResources(c);
          c.spec.template.metadata!.annotations!['config'] = 'bar';
        });
        const pod = await waitUpdatedAndReady(name, nginxId);

        expect(containerStatus(pod, 'redis')?.restartCount).toBe(1);
        await eventuallyEqual(
          'nginx stopped after new redis has started 10 s',
          () => stoppedTenSecondsAfter(name, nginxStopped, redisStarted),
          true,
          30 * SECOND,
          SECOND,
        );
        expect((updateState(pod).containerBatchesRecord ?? []).map((b) => b.containers)).toEqual([
          ['redis'],
          ['nginx'],
        ]);
        expect(resourcesChangedAndActuated(await onlyPod(name), before)).toBe(true);
      },
      VPA_CASE_TIMEOUT,
    );
  },
);

// Kruise runs this case under each resize policy too, but sets the policy on no container, so
// the four runs are the same case: it runs once here.
describe('CloneSet in-place update of resources with container priorities, the first batch failing (Kruise InplaceVPA e2e, issue 32.4)', () => {
  it(
    'in-place update two container image, resource with priorities, should not update the next when the previous one failed',
    async () => {
      const name = 'vpa-priorities-failed';
      const redis = container('redis', {
        env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }],
        lifecycle: { postStart: { exec: { command: ['sleep', '10'] } } },
      });
      const cs = cloneSetManifest(
        name,
        { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } },
        { containers: [container('nginx', { resources: OLD_RESOURCES }), redis], terminationGracePeriodSeconds: 3 },
      );
      const { before } = await createReady(cs);

      await updateClone(name, (c) => {
        nginxImageAndResources(c);
        c.spec.template.spec!.containers[1]!.image = NOT_ON_NODE;
      });
      await eventually(
        'redis to have stopped its old container',
        async () => (await redisOrNginx(name, 'redis'))?.lastState?.terminated ?? undefined,
        60 * SECOND,
      );
      await eventually(
        'redis to wait (it cannot start)',
        async () => (await redisOrNginx(name, 'redis'))?.state?.waiting ?? undefined,
        60 * SECOND,
      );

      const pod = await onlyPod(name);
      expect(containerStatus(pod, 'nginx')?.restartCount).toBe(0);
      const state = updateState(pod);
      expect((state.containerBatchesRecord ?? []).map((b) => b.containers)).toEqual([['redis']]);
      expect(state.nextContainerImages).toEqual({ nginx: V2 });
      // nginx's resize waits with its image: its resources are still the old ones.
      expect(resourcesChangedAndActuated(pod, before)).toBe(false);
    },
    VPA_CASE_TIMEOUT,
  );
});

describe('CloneSet in-place update of a native sidecar and the app (decision 0021)', () => {
  it(
    'updates the sidecar first and the app only once the new sidecar is ready',
    async () => {
      const name = 'sidecar-first';
      // Ready 10 s after it starts, by its readiness probe: a postStart hook does not hold a sidecar's
      // readiness back (the kubelet may report it ready while the hook still runs).
      const mesh = container('mesh', {
        restartPolicy: 'Always',
        command: ['/bin/sh', '-c', 'trap "exit 0" TERM; sleep 10; touch /tmp/ready; while true; do sleep 1; done'],
        readinessProbe: { exec: { command: ['/bin/cat', '/tmp/ready'] }, periodSeconds: 1 },
      });
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
      await eventuallyEqual(
        'app stopped after the new sidecar has started 10 s',
        appStoppedAfterMeshReady,
        true,
        30 * SECOND,
        SECOND,
      );
      expect((updateState(pod).containerBatchesRecord ?? []).map((b) => b.containers)).toEqual([['mesh'], ['app']]);
    },
    CASE_TIMEOUT,
  );
});
