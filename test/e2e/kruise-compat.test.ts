// OpenKruise v1.9.1's own CloneSet end-to-end cases (its creating, scaling, updating and
// pre-download sections), run against Tailor on a real kubelet with Kruise's expectations: the
// Progressing condition compared whole (type, status, reason, message; times left out as Kruise
// leaves them out), counts read within Kruise's windows (e.g. status.replicas within 3 s of the
// create), polled as often as Kruise polls. Translated only for the API group
// (apps.kruise.io → apps.tailor.dev), the test images (tailor.local/busybox:v1 and :v2 for nginx
// and redis), and the one 2-CPU node (tiny cpu requests; Kruise's counts fit it unchanged).
// The node agent runs as a process of this test, as the DaemonSet would, for restarts in place.
//
// Owns: the CloneSets of its namespace, the node agent process it starts, and the image alias
// tailor.local/busybox:v1-same (the same image as :v1 under another tag), which it removes again.
// Must not: touch another namespace's objects or any other image of the test bed.
//
// Kruise cases not here:
//   whole in container-order.test.ts: in-place update two container images with priorities successfully; in-place
//     update two container images with priorities, should not update the next when the previous one failed
//   not ported: pre-download for new image — it drives Kruise's ImagePullJob API, which Tailor does not offer;
//     Tailor's node agent pulls before the drain instead (decision 52), proven in prepull.test.ts
//   whole in volume-claims.test.ts: CloneSet Update with DisablePVCReuse=true; CloneSet Update with
//     VolumeClaimTemplate changes
//   whole in lifecycle.test.ts: creates with lifecycle preNormal finalizer; CloneSet regard
//     preparing-update pod as update when scaling; and, with the lifecycle steps this file's versions
//     leave out, creates with unschedulable scheduler, specific delete a Pod when
//     scalingExcludePreparingDelete is disabled, specific scale down with lifecycle and then scale up
// Kruise cases ported in part (the steps that need a missing feature left out, the rest kept):
//   in-place update two container image and env from metadata with priorities — without the
//     priority order (redis started 10 s before nginx stops, two update batches): Tailor batches images only, a
//     restart for env from metadata goes with the first batch (decision 21)
// differs: none — every case above the line of missing features passes as Kruise wrote its expectations.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import type { CloneSetCondition } from '../../src/api/types.js';
import type { Pod } from '../../src/api/wire.js';
import { KubeApiError } from '../../src/runtime/pure/api-error.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  type TestCloneSet,
} from '../support/fixtures/cloneset.js';
import { startNodeAgent, type NodeAgent } from '../support/cluster/node-agent.js';
import { CONTAINERD_SOCKET, eventually, RUN_UNTIL_TERM } from '../support/cluster/testbed.js';
import { consistentlyEqual, eventuallyEqual } from '../support/fixtures/gomega.js';
import { updateCloneSet as updateCloneSetIn } from '../support/fixtures/kruise-tester.js';

const { client, ns } = controllerTestBed('kruise-compat');

const V1 = 'tailor.local/busybox:v1';
const V2 = 'tailor.local/busybox:v2';
/** Kruise's nginx:alpine → nginx:mainline-alpine: two tags, one image ID. */
const V1_SAME = 'tailor.local/busybox:v1-same';
const MAX_INT32 = 2147483647;
const TEN_MINUTES = 600;
const SECOND = 1000;
/** Kruise's windows added up, with room: a case waits on real pods at every step. */
const CASE_TIMEOUT = 420_000;

let agent: NodeAgent | undefined;

const ctr = (...args: string[]): string =>
  execFileSync('ctr', ['--address', CONTAINERD_SOCKET, '--namespace', 'k8s.io', ...args], { encoding: 'utf8' });

beforeAll(async () => {
  ctr('images', 'tag', '--force', V1, V1_SAME);
  // Pinned like the test bed's own images, so the kubelet's image GC leaves it alone meanwhile.
  ctr('images', 'label', V1_SAME, 'io.cri-containerd.pinned=pinned');
  agent = await startNodeAgent(18392);
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  ctr('images', 'rm', V1_SAME);
});

// Each case's pods go with it, so the next one has the node to itself.
afterEach(async () => {
  await client.delete(cloneSetPath(ns));
  await eventually(
    'the previous case to be gone',
    async () => ((await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`)).items.length === 0 ? true : undefined),
    120_000,
  );
}, 150_000);

// ---- Kruise's tester, in our words --------------------------------------------------------

const loop = RUN_UNTIL_TERM;

type Container = Record<string, unknown>;

/** Kruise's test container: env test=foo, a Burstable pod (requests scaled down to fit the node). */
const mainContainer = (image = V1, extra: Container = {}): Container => ({
  name: 'main',
  image,
  imagePullPolicy: 'Never',
  command: loop,
  env: [{ name: 'test', value: 'foo' }],
  resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { cpu: '1', memory: '1Gi' } },
  ...extra,
});

/** Kruise's NewCloneSet: `replicas` pods of one container, the given update strategy. */
function newCloneSet(name: string, replicas: number, updateStrategy: Record<string, unknown> = {}): TestCloneSet {
  const cs = cloneSetManifest(name, { replicas, updateStrategy }, { containers: [mainContainer()] });
  cs.spec.template.metadata ??= {};
  cs.spec.template.metadata.labels ??= {};
  return cs;
}

type PodSpec = NonNullable<TestCloneSet['spec']['template']['spec']>;
const podSpec = (cs: TestCloneSet): PodSpec => cs.spec.template.spec as PodSpec;
const containers = (cs: TestCloneSet): Container[] => podSpec(cs).containers;

async function createCloneSet(cs: TestCloneSet): Promise<TestCloneSet> {
  return client.create<TestCloneSet>(cloneSetPath(ns), cs);
}

/** Kruise's UpdateCloneSet (kruise-tester.ts). */
const updateCloneSet = (name: string, change: (cs: TestCloneSet) => void): Promise<void> =>
  updateCloneSetIn(client, ns, name, change);

type Progressing = Omit<CloneSetCondition, 'lastTransitionTime' | 'lastUpdateTime'>;

/** The Progressing condition without its times, as Kruise's GetCloneSetProgressingConditionWithoutTime. */
async function progressing(name: string): Promise<Progressing | undefined> {
  const found = (await readCloneSet(client, ns, name)).status?.conditions?.find((c) => c.type === 'Progressing');
  if (!found) return undefined;
  const withoutTime: CloneSetCondition = { ...found };
  delete withoutTime.lastTransitionTime;
  delete withoutTime.lastUpdateTime;
  return withoutTime;
}

const available: Progressing = {
  type: 'Progressing',
  status: 'True',
  reason: 'CloneSetAvailable',
  message: 'CloneSet is available',
};
const updating: Progressing = {
  type: 'Progressing',
  status: 'True',
  reason: 'CloneSetUpdated',
  message: 'CloneSet is progressing',
};
const paused: Progressing = {
  type: 'Progressing',
  status: 'True',
  reason: 'CloneSetPaused',
  message: 'CloneSet is paused',
};
const partitionAvailable: Progressing = {
  type: 'Progressing',
  status: 'True',
  reason: 'ProgressPartitionAvailable',
  message: 'CloneSet has been paused due to partition ready',
};
const deadlineExceeded = (revision: string | undefined): Progressing => ({
  type: 'Progressing',
  status: 'False',
  reason: 'ProgressDeadlineExceeded',
  message: `CloneSet revision ${revision} has timed out progressing`,
});

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

const status = (name: string) => async () => (await readCloneSet(client, ns, name)).status ?? {};
const replicas = (name: string) => async () => (await status(name)()).replicas ?? 0;
const readyReplicas = (name: string) => async () => (await status(name)()).readyReplicas ?? 0;
const updatedReplicas = (name: string) => async () => (await status(name)()).updatedReplicas ?? 0;
const updatedReadyReplicas = (name: string) => async () => (await status(name)()).updatedReadyReplicas ?? 0;
const observedGeneration = (name: string) => async () => {
  const cs = await readCloneSet(client, ns, name);
  return cs.metadata?.generation === cs.status?.observedGeneration;
};

/** Kruise's ListPodsForCloneSet: pods not being deleted, by name. */
async function listPods(name: string): Promise<Pod[]> {
  return (await activePods(client, ns, name)).sort((a, b) =>
    (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}
const podNames = (pods: Pod[]): string[] => pods.map((p) => p.metadata?.name ?? '');
const podPath = (name: string): string => `/api/v1/namespaces/${ns}/pods/${name}`;
const containerStatus = (pod: Pod, name = 'main') => pod.status?.containerStatuses?.find((s) => s.name === name);

async function podGone(name: string): Promise<boolean> {
  try {
    await client.get<Pod>(podPath(name));
    return false;
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) return true;
    throw err;
  }
}

/** The steps most of Kruise's cases open with: the pods there and ready, the CloneSet available. */
/**
 * How Kruise's in-place cases begin: minReadySeconds 10 and a ten-minute deadline, the strategy
 * kept as InPlaceIfPossible, Progressing CloneSetUpdated, then every pod created and available.
 */
async function startInPlace(cs: TestCloneSet, count: number): Promise<void> {
  const name = cs.metadata?.name ?? '';
  cs.spec.minReadySeconds = 10;
  cs.spec.progressDeadlineSeconds = TEN_MINUTES;
  const created = await createCloneSet(cs);
  expect(created.spec.updateStrategy?.type).toBe('InPlaceIfPossible');
  await eventuallyEqual('Progressing', () => progressing(name), updating, 120 * SECOND, 3 * SECOND);
  await expectCreatedAndAvailable(name, count);
}

async function expectCreatedAndAvailable(name: string, count: number): Promise<void> {
  await eventuallyEqual('status.replicas', replicas(name), count, 3 * SECOND, SECOND);
  await eventuallyEqual('status.readyReplicas', readyReplicas(name), count, 120 * SECOND, 3 * SECOND);
  await eventuallyEqual('Progressing', () => progressing(name), available, 120 * SECOND, 3 * SECOND);
}

// ---- The cases ----------------------------------------------------------------------------

describe('CloneSet Creating', () => {
  it(
    'creates with hostNetwork pod, specified containerPort without specifying hostPort',
    async () => {
      const cs = newCloneSet('hostnetwork-port', 1);
      podSpec(cs).hostNetwork = true;
      containers(cs)[0]!.ports = [{ containerPort: 80 }];
      cs.spec.progressDeadlineSeconds = TEN_MINUTES;
      await createCloneSet(cs);

      await eventuallyEqual('status.readyReplicas', readyReplicas('hostnetwork-port'), 1, 120 * SECOND, 3 * SECOND);
      for (const pod of await listPods('hostnetwork-port')) {
        const port = pod.spec?.containers[0]?.ports?.[0];
        expect(port?.hostPort).toBe(port?.containerPort);
      }
      await eventuallyEqual('Progressing', () => progressing('hostnetwork-port'), available, 120 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );

  it(
    'creates with unschedulable scheduler',
    async () => {
      const cs = newCloneSet('unschedulable', 1);
      podSpec(cs).schedulerName = 'unschedulable';
      cs.spec.progressDeadlineSeconds = 8;
      await createCloneSet(cs);

      await eventuallyEqual('status.replicas', replicas('unschedulable'), 1, 120 * SECOND, 3 * SECOND);
      const { updateRevision } = await status('unschedulable')();
      await consistentlyEqual(
        'the pod pending',
        async () => (await listPods('unschedulable'))[0]?.status?.phase,
        'Pending',
        10 * SECOND,
        SECOND,
      );
      await eventuallyEqual(
        'Progressing',
        () => progressing('unschedulable'),
        deadlineExceeded(updateRevision),
        20 * SECOND,
        3 * SECOND,
      );

      await updateCloneSet('unschedulable', (c) => {
        delete podSpec(c).schedulerName;
      });
      await eventuallyEqual('status.readyReplicas', readyReplicas('unschedulable'), 1, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('Progressing', () => progressing('unschedulable'), available, 120 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );

  it.each([
    {
      kruiseCase: 'creates with maxInt32 progressDeadlineSeconds',
      created: { progressDeadlineSeconds: MAX_INT32 },
      change: (cs: TestCloneSet) => {
        cs.spec.progressDeadlineSeconds = TEN_MINUTES;
      },
      changed: { progressDeadlineSeconds: TEN_MINUTES },
      progressingAfter: available,
    },
    {
      kruiseCase: 'creates with maxInt32 minReadySeconds and maxInt32 progressDeadlineSeconds',
      created: { minReadySeconds: MAX_INT32, progressDeadlineSeconds: MAX_INT32 },
      change: (cs: TestCloneSet) => {
        cs.spec.minReadySeconds = 10;
        delete cs.spec.progressDeadlineSeconds;
      },
      changed: { minReadySeconds: 10 },
      progressingAfter: undefined,
    },
  ])(
    '$kruiseCase',
    async ({ created, change, changed, progressingAfter }) => {
      const cs = newCloneSet('pds', 1);
      Object.assign(cs.spec, created);
      await createCloneSet(cs);

      await eventuallyEqual('status.readyReplicas', readyReplicas('pds'), 1, 120 * SECOND, 3 * SECOND);
      const specFields = (fields: object) => async () => {
        const spec = (await readCloneSet(client, ns, 'pds')).spec as unknown as Record<string, unknown>;
        return Object.fromEntries(Object.keys(fields).map((k) => [k, spec[k]]));
      };
      await eventuallyEqual('the spec as created', specFields(created), created, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('Progressing', () => progressing('pds'), undefined, 120 * SECOND, 3 * SECOND);

      await updateCloneSet('pds', change);
      await eventuallyEqual('status.readyReplicas', readyReplicas('pds'), 1, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('the spec as changed', specFields(changed), changed, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('Progressing', () => progressing('pds'), progressingAfter, 120 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );
});

describe('CloneSet Scaling', () => {
  it(
    'scales in normal cases',
    async () => {
      const cs = newCloneSet('normal', 3);
      cs.spec.progressDeadlineSeconds = TEN_MINUTES;
      const created = await createCloneSet(cs);
      expect(created.spec.updateStrategy?.type).toBe('ReCreate');
      expect(created.spec.updateStrategy?.maxUnavailable).toBe('20%');

      await expectCreatedAndAvailable('normal', 3);
    },
    CASE_TIMEOUT,
  );

  it(
    'scales with minReadySeconds and scaleStrategy',
    async () => {
      const count = 4;
      const cs = newCloneSet('min-ready', count);
      cs.spec.minReadySeconds = 10;
      cs.spec.progressDeadlineSeconds = TEN_MINUTES;
      containers(cs)[0]!.imagePullPolicy = 'IfNotPresent';
      cs.spec.scaleStrategy = { maxUnavailable: 1 };
      await createCloneSet(cs);

      await eventuallyEqual('Progressing', () => progressing('min-ready'), updating, 120 * SECOND, 2 * SECOND);
      await eventuallyEqual('status.replicas', replicas('min-ready'), count, 120 * SECOND, SECOND);
      await eventuallyEqual('status.readyReplicas', readyReplicas('min-ready'), count, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('Progressing', () => progressing('min-ready'), available, 120 * SECOND, 3 * SECOND);

      // Each pod is created once the one before has been ready for minReadySeconds (within 2 s).
      const pods = (await listPods('min-ready')).sort(
        (a, b) => Date.parse(a.metadata?.creationTimestamp ?? '') - Date.parse(b.metadata?.creationTimestamp ?? ''),
      );
      for (let i = 1; i < count; i++) {
        const readySince = Date.parse(
          pods[i - 1]?.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? '',
        );
        const gap = Date.parse(pods[i]?.metadata?.creationTimestamp ?? '') - readySince;
        expect(gap).toBeGreaterThanOrEqual(10 * SECOND);
        expect(gap).toBeLessThanOrEqual(12 * SECOND);
      }
    },
    CASE_TIMEOUT,
  );

  it(
    'pods should be ready when paused=true',
    async () => {
      const cs = newCloneSet('paused', 3, { type: 'ReCreate', paused: true });
      cs.spec.minReadySeconds = 60;
      cs.spec.progressDeadlineSeconds = TEN_MINUTES;
      await createCloneSet(cs);

      await eventuallyEqual('status.replicas', replicas('paused'), 3, 3 * SECOND, SECOND);
      await eventuallyEqual('Progressing', () => progressing('paused'), paused, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('status.readyReplicas', readyReplicas('paused'), 3, 120 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );

  it(
    'specific delete a Pod, when scalingExcludePreparingDelete is disabled (without its preDelete hook)',
    async () => {
      const cs = newCloneSet('specified', 3);
      cs.spec.progressDeadlineSeconds = TEN_MINUTES;
      await createCloneSet(cs);
      await expectCreatedAndAvailable('specified', 3);

      const oldPods = await listPods('specified');
      expect(oldPods).toHaveLength(3);
      const specified = podNames(oldPods)[0] ?? '';
      await client.patch(
        podPath(specified),
        { metadata: { labels: { 'apps.tailor.dev/specified-delete': 'true' } } },
        'strategic',
      );

      await eventuallyEqual('the specified pod gone', () => podGone(specified), true, 30 * SECOND, SECOND);
      await eventuallyEqual('status.replicas', replicas('specified'), 3, 3 * SECOND, 3 * SECOND);
      const newPods = await listPods('specified');
      expect(newPods).toHaveLength(3);
      expect(podNames(newPods).filter((n) => podNames(oldPods).includes(n))).toHaveLength(2);
      await eventuallyEqual('Progressing', () => progressing('specified'), available, 30 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );

  it(
    'specific scale down with lifecycle and then scale up, when scalingExcludePreparingDelete is enabled (without its preDelete hook)',
    async () => {
      const cs = newCloneSet('scale-down', 3);
      cs.spec.progressDeadlineSeconds = TEN_MINUTES;
      await createCloneSet(cs);
      await expectCreatedAndAvailable('scale-down', 3);

      const oldPods = await listPods('scale-down');
      expect(oldPods).toHaveLength(3);
      const specified = podNames(oldPods)[0] ?? '';
      await updateCloneSet('scale-down', (c) => {
        c.spec.replicas = 2;
        c.spec.scaleStrategy = { ...c.spec.scaleStrategy, podsToDelete: [specified] };
      });
      await eventuallyEqual('the specified pod gone', () => podGone(specified), true, 30 * SECOND, SECOND);

      await updateCloneSet('scale-down', (c) => {
        c.spec.replicas = 3;
      });
      // Kruise reads 4 here (3, and the one its hook holds), in the same window.
      await eventuallyEqual('status.replicas', replicas('scale-down'), 3, 10 * SECOND, 3 * SECOND);
      const newPods = await listPods('scale-down');
      expect(newPods).toHaveLength(3);
      expect(podNames(newPods).filter((n) => podNames(oldPods).includes(n))).toHaveLength(2);
      await eventuallyEqual('Progressing', () => progressing('scale-down'), available, 30 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );
});

describe('CloneSet Updating', () => {
  it(
    'in-place update images with the same imageID',
    async () => {
      const cs = newCloneSet('same-image-id', 1, { type: 'InPlaceIfPossible' });
      cs.spec.minReadySeconds = 10;
      cs.spec.progressDeadlineSeconds = TEN_MINUTES;
      const created = await createCloneSet(cs);
      expect(created.spec.updateStrategy?.type).toBe('InPlaceIfPossible');

      await eventuallyEqual('status.replicas', replicas('same-image-id'), 1, 3 * SECOND, SECOND);
      await eventuallyEqual('Progressing', () => progressing('same-image-id'), updating, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('status.readyReplicas', readyReplicas('same-image-id'), 1, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('Progressing', () => progressing('same-image-id'), available, 120 * SECOND, 3 * SECOND);
      const [before] = await listPods('same-image-id');
      const oldStatus = before && containerStatus(before);

      await updateCloneSet('same-image-id', (c) => {
        containers(c)[0]!.image = V1_SAME;
      });
      await eventuallyEqual('generation observed', observedGeneration('same-image-id'), true, 10 * SECOND, 3 * SECOND);
      await eventuallyEqual('Progressing', () => progressing('same-image-id'), updating, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual(
        'status.updatedReadyReplicas',
        updatedReadyReplicas('same-image-id'),
        1,
        120 * SECOND,
        3 * SECOND,
      );

      const after = await listPods('same-image-id');
      expect(after).toHaveLength(1);
      expect(after[0]?.metadata?.uid).toBe(before?.metadata?.uid);
      expect(containerStatus(after[0]!)?.containerID).not.toBe(oldStatus?.containerID);
      expect(containerStatus(after[0]!)?.imageID).toBe(oldStatus?.imageID);
      await eventuallyEqual('Progressing', () => progressing('same-image-id'), available, 120 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );

  it(
    'in-place update both image and env from label',
    async () => {
      const cs = newCloneSet('env-label', 1, { type: 'InPlaceIfPossible' });
      cs.spec.template.metadata!.labels!['test-env'] = 'foo';
      const env = containers(cs)[0]!.env as Record<string, unknown>[];
      env.push({ name: 'TEST_ENV', valueFrom: { fieldRef: { fieldPath: "metadata.labels['test-env']" } } });
      await startInPlace(cs, 1);
      const [before] = await listPods('env-label');
      const oldStatus = before && containerStatus(before);

      await updateCloneSet('env-label', (c) => {
        c.spec.template.metadata!.labels!['test-env'] = 'bar';
        containers(c)[0]!.image = V2;
      });
      await eventuallyEqual('Progressing', () => progressing('env-label'), updating, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('generation observed', observedGeneration('env-label'), true, 10 * SECOND, 3 * SECOND);
      await eventuallyEqual(
        'status.updatedReadyReplicas',
        updatedReadyReplicas('env-label'),
        1,
        180 * SECOND,
        3 * SECOND,
      );

      const after = await listPods('env-label');
      expect(after).toHaveLength(1);
      expect(after[0]?.metadata?.uid).toBe(before?.metadata?.uid);
      expect(containerStatus(after[0]!)?.containerID).not.toBe(oldStatus?.containerID);
      expect(containerStatus(after[0]!)?.restartCount).toBe(1);
      await eventuallyEqual('Progressing', () => progressing('env-label'), available, 120 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );

  it(
    'in-place update two container image and env from metadata with priorities (without the priority order)',
    async () => {
      const cs = newCloneSet('env-annotation', 1, { type: 'InPlaceIfPossible' });
      cs.spec.template.metadata!.annotations = { config: 'foo' };
      containers(cs).push(
        mainContainer(V1, {
          name: 'redis',
          env: [{ name: 'CONFIG', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['config']" } } }],
        }),
      );
      await startInPlace(cs, 1);
      expect(await listPods('env-annotation')).toHaveLength(1);

      await updateCloneSet('env-annotation', (c) => {
        containers(c)[0]!.image = V2;
        c.spec.template.metadata!.annotations!['config'] = 'bar';
      });
      await eventuallyEqual('Progressing', () => progressing('env-annotation'), updating, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('generation observed', observedGeneration('env-annotation'), true, 10 * SECOND, 3 * SECOND);
      await eventuallyEqual(
        'status.updatedReadyReplicas',
        updatedReadyReplicas('env-annotation'),
        1,
        120 * SECOND,
        3 * SECOND,
      );
      await eventuallyEqual('Progressing', () => progressing('env-annotation'), available, 120 * SECOND, 3 * SECOND);

      const pods = await listPods('env-annotation');
      expect(pods).toHaveLength(1);
      expect(containerStatus(pods[0]!, 'main')?.restartCount).toBe(1);
      expect(containerStatus(pods[0]!, 'redis')?.restartCount).toBe(1);
    },
    CASE_TIMEOUT,
  );

  it(
    'CloneSet partition="99%", replicas=4, make sure one pod is upgraded',
    async () => {
      const cs = newCloneSet('partition', 4, { type: 'InPlaceIfPossible', maxUnavailable: '50%', partition: '99%' });
      await startInPlace(cs, 4);
      expect(await listPods('partition')).toHaveLength(4);

      await updateCloneSet('partition', (c) => {
        containers(c)[0]!.image = V2;
      });
      await eventuallyEqual('Progressing', () => progressing('partition'), updating, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('generation observed', observedGeneration('partition'), true, 10 * SECOND, 3 * SECOND);
      await eventuallyEqual('status.updatedReplicas', updatedReplicas('partition'), 1, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual(
        'Progressing',
        () => progressing('partition'),
        partitionAvailable,
        120 * SECOND,
        3 * SECOND,
      );

      await sleep(10 * SECOND);
      await eventuallyEqual(
        'status.updatedReplicas after 10 s',
        updatedReplicas('partition'),
        1,
        120 * SECOND,
        3 * SECOND,
      );
      await eventuallyEqual(
        'status.updatedReadyReplicas',
        updatedReadyReplicas('partition'),
        1,
        120 * SECOND,
        3 * SECOND,
      );
      await eventuallyEqual(
        'status.expectedUpdatedReplicas',
        async () => (await status('partition')()).expectedUpdatedReplicas,
        1,
        120 * SECOND,
        3 * SECOND,
      );
    },
    CASE_TIMEOUT,
  );

  it(
    'change resource and qos -> succeed to recreate',
    async () => {
      const cs = newCloneSet('qos', 1, { type: 'InPlaceIfPossible' });
      cs.spec.template.metadata!.labels!['test-env'] = 'foo';
      const env = containers(cs)[0]!.env as Record<string, unknown>[];
      env.push({ name: 'TEST_ENV', valueFrom: { fieldRef: { fieldPath: "metadata.labels['test-env']" } } });
      await startInPlace(cs, 1);
      const [before] = await listPods('qos');

      // Burstable → Guaranteed: a QoS class a running pod cannot change, so the pod is recreated.
      await updateCloneSet('qos', (c) => {
        containers(c)[0]!.resources = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };
      });
      await eventuallyEqual('Progressing', () => progressing('qos'), updating, 120 * SECOND, 3 * SECOND);
      await eventuallyEqual('generation observed', observedGeneration('qos'), true, 10 * SECOND, 3 * SECOND);
      await eventuallyEqual('status.updatedReadyReplicas', updatedReadyReplicas('qos'), 1, 180 * SECOND, 3 * SECOND);

      const after = await listPods('qos');
      expect(after).toHaveLength(1);
      expect(after[0]?.metadata?.uid).not.toBe(before?.metadata?.uid);
      await eventuallyEqual('Progressing', () => progressing('qos'), available, 120 * SECOND, 3 * SECOND);
    },
    CASE_TIMEOUT,
  );
});
