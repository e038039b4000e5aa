// CloneSet lifecycle hooks on a real kubelet: OpenKruise v1.9.1's CloneSet e2e cases that need
// them, with Kruise's expectations and windows (the lifecycle state label, counts and the whole
// Progressing condition): a preNormal finalizer holding a ready pod in PreparingNormal, an
// unschedulable pod staying PreparingNormal, a preDelete hook holding a specified scale-down
// while a scale-up replaces the pod, and PreparingUpdate pods counted as updated when scaling.
// Translated only for the API group (apps.kruise.io → apps.tailor.dev, and Kruise's
// scaling-exclude-preparing-delete CloneSet label → scaleStrategy.excludePreparingDelete) and the
// test images (tailor.local/busybox:v1 and :v2 for nginx).
//
// Owns: the CloneSets and pods of its namespace (it removes the finalizers it adds).
// Must not: touch another namespace's objects.
import { afterEach, describe, expect, it } from '@jest/globals';
import { LABEL_LIFECYCLE_STATE, LABEL_SPECIFIED_DELETE } from '../../src/api/types.js';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { eventually } from '../support/cluster/testbed.js';
import { activePods, cloneSetPath, readCloneSet, type TestCloneSet } from '../support/fixtures/cloneset.js';
import {
  podGone,
  progressDeadlineExceeded as deadlineExceeded,
  progressingAvailable as available,
  progressingUpdated as updating,
  newKruiseCloneSet,
  progressingWithoutTime,
  updateCloneSet,
  type Progressing,
} from '../support/fixtures/kruise-tester.js';

const { client, ns } = controllerTestBed('lifecycle');

const SECOND = 1000;
const TEN_MINUTES = 600;
const CASE_TIMEOUT = 420_000;

// Each case's pods go with it (finalizers a case left on are taken off first).
afterEach(async () => {
  for (const pod of (await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`)).items) {
    if (pod.metadata?.finalizers?.length)
      await client.patch(podPath(pod.metadata.name ?? ''), { metadata: { finalizers: null } }, 'merge');
  }
  await client.delete(cloneSetPath(ns));
  const left = async (): Promise<number> => (await client.list<Pod>(`/api/v1/namespaces/${ns}/pods`)).items.length;
  await eventuallyEqual('the pods of the previous case', left, 0, 120 * SECOND);
}, 150_000);

const newCloneSet = newKruiseCloneSet;

const podPath = (name: string): string => `/api/v1/namespaces/${ns}/pods/${name}`;
const stateOf = (pod: Pod | undefined): string | undefined => pod?.metadata?.labels?.[LABEL_LIFECYCLE_STATE];
const listPods = async (name: string): Promise<Pod[]> =>
  (await activePods(client, ns, name)).sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
const podNames = (pods: readonly Pod[]): string[] => pods.map((p) => p.metadata?.name ?? '');
const status = async (name: string): Promise<NonNullable<TestCloneSet['status']>> =>
  (await readCloneSet(client, ns, name)).status ?? {};

const progressing = (name: string): Promise<Progressing | undefined> => progressingWithoutTime(client, ns, name);
const update = (name: string, change: (cs: TestCloneSet) => void): Promise<void> =>
  updateCloneSet(client, ns, name, change);
const gone = (name: string) => (): Promise<boolean> => podGone(client, ns, name);

/** Gomega's Eventually(read, within).Should(Equal(expected)). */
async function eventuallyEqual<T>(what: string, read: () => Promise<T>, expected: T, within: number): Promise<void> {
  let last: T | undefined;
  try {
    await eventually(
      what,
      async () => ((last = await read()), JSON.stringify(last) === JSON.stringify(expected) ? true : undefined),
      within,
    );
  } catch (err) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, last read ${JSON.stringify(last)}`, { cause: err });
  }
}

/** Gomega's Consistently(read, during).Should(Equal(expected)), read every second. */
async function consistentlyEqual<T>(what: string, read: () => Promise<T>, expected: T, during: number): Promise<void> {
  for (const end = Date.now() + during; Date.now() < end; await new Promise((r) => setTimeout(r, SECOND))) {
    expect({ what, seen: await read() }).toEqual({ what, seen: expected });
  }
}

/**
 * How Kruise's preDelete cases begin: 3 pods carrying the hook's label `lifecycle-hook`, created
 * (within 3 s), ready and available. Returns the pods.
 */
async function startWithPreDeleteHook(name: string, labels: Record<string, string> = {}): Promise<Pod[]> {
  const cs = newCloneSet(name, 3);
  cs.metadata = { ...cs.metadata, labels: { ...cs.metadata?.labels, ...labels } };
  cs.spec.template.metadata!.labels!['lifecycle-hook'] = 'true';
  cs.spec.lifecycle = { preDelete: { labelsHandler: { 'lifecycle-hook': 'true' } } };
  cs.spec.progressDeadlineSeconds = TEN_MINUTES;
  await client.create(cloneSetPath(ns), cs);
  await eventuallyEqual('status.replicas', async () => (await status(name)).replicas ?? 0, 3, 3 * SECOND);
  await eventuallyEqual('status.readyReplicas', async () => (await status(name)).readyReplicas ?? 0, 3, 120 * SECOND);
  await eventuallyEqual('Progressing', () => progressing(name), available, 120 * SECOND);
  const pods = await listPods(name);
  expect(pods).toHaveLength(3);
  return pods;
}

const expectPreparingDelete = (pod: string): Promise<void> =>
  eventuallyEqual(
    'the specified pod',
    async () => stateOf(await client.get<Pod>(podPath(pod))),
    'PreparingDelete',
    10 * SECOND,
  );

/** The hook lets go of the specified pod: it is deleted and replaced, the two others stay. */
async function releaseAndExpectReplaced(name: string, specified: string, oldPods: readonly Pod[]): Promise<void> {
  await client.patch(podPath(specified), { metadata: { labels: { 'lifecycle-hook': null } } }, 'merge');
  await eventuallyEqual('the specified pod gone', gone(specified), true, 30 * SECOND);
  await eventuallyEqual('status.replicas', async () => (await status(name)).replicas ?? 0, 3, 3 * SECOND);
  const newPods = await listPods(name);
  expect(newPods).toHaveLength(3);
  expect(podNames(newPods).filter((n) => podNames(oldPods).includes(n))).toHaveLength(2);
  await eventuallyEqual('Progressing', () => progressing(name), available, 30 * SECOND);
}

describe('CloneSet lifecycle hooks (Kruise e2e)', () => {
  it(
    'creates with lifecycle preNormal finalizer',
    async () => {
      const finalizer = 'finalizers.sigs.k8s.io/test';
      const cs = newCloneSet('prenormal', 1);
      cs.spec.lifecycle = { preNormal: { finalizersHandler: [finalizer] } };
      cs.spec.progressDeadlineSeconds = 11;
      await client.create(cloneSetPath(ns), cs);

      // The pod is ready, but its lifecycle stays PreparingNormal: never available.
      await eventuallyEqual(
        'status.readyReplicas',
        async () => (await status('prenormal')).readyReplicas ?? 0,
        1,
        120 * SECOND,
      );
      const { updateRevision } = await status('prenormal');
      await eventuallyEqual(
        'Progressing',
        () => progressing('prenormal'),
        deadlineExceeded(updateRevision),
        120 * SECOND,
      );
      const pods = await listPods('prenormal');
      expect(pods.map(stateOf)).toEqual(['PreparingNormal']);

      // The hook is satisfied: the pod becomes Normal.
      const name = podNames(pods)[0] ?? '';
      await client.patch(podPath(name), { metadata: { finalizers: [finalizer] } }, 'merge');
      await eventuallyEqual(
        'the lifecycle state',
        async () => (await listPods('prenormal')).map(stateOf),
        ['Normal'],
        120 * SECOND,
      );

      await client.patch(podPath(name), { metadata: { finalizers: null } }, 'merge');
      await eventuallyEqual(
        'Progressing once availableReplicas is 1',
        async () => ((await status('prenormal')).availableReplicas === 1 ? progressing('prenormal') : undefined),
        available,
        120 * SECOND,
      );
    },
    CASE_TIMEOUT,
  );

  it(
    'creates with unschedulable scheduler: the pod stays PreparingNormal until it is scheduled',
    async () => {
      const cs = newCloneSet('unschedulable', 1);
      (cs.spec.template.spec as { schedulerName?: string }).schedulerName = 'unschedulable';
      cs.spec.progressDeadlineSeconds = 8;
      await client.create(cloneSetPath(ns), cs);

      await eventuallyEqual(
        'status.replicas',
        async () => (await status('unschedulable')).replicas ?? 0,
        1,
        120 * SECOND,
      );
      const pending = async (): Promise<string | undefined> => {
        const pod = (await listPods('unschedulable'))[0];
        return pod?.status?.phase === 'Pending' ? stateOf(pod) : '';
      };
      await consistentlyEqual('the pending pod', pending, 'PreparingNormal', 10 * SECOND);
      const { updateRevision } = await status('unschedulable');
      await eventuallyEqual(
        'Progressing',
        () => progressing('unschedulable'),
        deadlineExceeded(updateRevision),
        20 * SECOND,
      );

      await update('unschedulable', (c) => {
        delete (c.spec.template.spec as { schedulerName?: string }).schedulerName;
      });
      await eventuallyEqual(
        'status.readyReplicas',
        async () => (await status('unschedulable')).readyReplicas ?? 0,
        1,
        120 * SECOND,
      );
      await eventuallyEqual(
        'the lifecycle state',
        async () => (await listPods('unschedulable')).map(stateOf),
        ['Normal'],
        120 * SECOND,
      );
      await eventuallyEqual('Progressing', () => progressing('unschedulable'), available, 120 * SECOND);
    },
    CASE_TIMEOUT,
  );

  it(
    'specific scale down with lifecycle and then scale up, when scalingExcludePreparingDelete is enabled',
    async () => {
      // As Kruise's e2e enables it: the CloneSet label (here in Tailor's domain; the field works the same).
      const oldPods = await startWithPreDeleteHook('scale-down', {
        'apps.tailor.dev/cloneset-scaling-exclude-preparing-delete': 'true',
      });
      const specified = podNames(oldPods)[0] ?? '';
      await update('scale-down', (c) => {
        c.spec.replicas = 2;
        c.spec.scaleStrategy = { ...c.spec.scaleStrategy, podsToDelete: [specified] };
      });
      await expectPreparingDelete(specified);
      expect((await status('scale-down')).replicas).toBe(3);
      expect(await progressing('scale-down')).toEqual(updating);

      // Scaled back up while the hook holds the pod: a new pod is created beside it.
      await update('scale-down', (c) => {
        c.spec.replicas = 3;
      });
      await eventuallyEqual('status.replicas', async () => (await status('scale-down')).replicas ?? 0, 4, 10 * SECOND);
      expect(await progressing('scale-down')).toEqual(updating);

      await releaseAndExpectReplaced('scale-down', specified, oldPods);
    },
    CASE_TIMEOUT,
  );

  it(
    'specific delete a Pod, when scalingExcludePreparingDelete is disabled',
    async () => {
      const oldPods = await startWithPreDeleteHook('specific-delete');
      const specified = podNames(oldPods)[0] ?? '';
      await client.patch(podPath(specified), { metadata: { labels: { [LABEL_SPECIFIED_DELETE]: 'true' } } }, 'merge');
      await expectPreparingDelete(specified);
      // Counted while the hook holds it: no pod is created beside it.
      await consistentlyEqual(
        'status.replicas',
        async () => (await status('specific-delete')).replicas ?? 0,
        3,
        5 * SECOND,
      );
      await eventuallyEqual('Progressing', () => progressing('specific-delete'), updating, 30 * SECOND);
      await releaseAndExpectReplaced('specific-delete', specified, oldPods);
    },
    CASE_TIMEOUT,
  );

  it(
    'CloneSet regard preparing-update pod as update when scaling',
    async () => {
      const hookLabel = 'preparing-update-hook';
      const cs = newCloneSet('preparing-update', 2, {
        type: 'InPlaceIfPossible',
        maxUnavailable: '50%',
        partition: '99%',
      });
      cs.spec.lifecycle = { inPlaceUpdate: { labelsHandler: { [hookLabel]: 'true' } } };
      cs.spec.template.metadata!.labels![hookLabel] = 'true';
      cs.spec.minReadySeconds = 10;
      cs.spec.progressDeadlineSeconds = 120;
      const created = await client.create<TestCloneSet>(cloneSetPath(ns), cs);
      expect(created.spec.updateStrategy?.type).toBe('InPlaceIfPossible');

      await eventuallyEqual(
        'status.readyReplicas',
        async () => (await status('preparing-update')).readyReplicas ?? 0,
        2,
        120 * SECOND,
      );
      await eventuallyEqual('Progressing', () => progressing('preparing-update'), available, 120 * SECOND);
      expect(await listPods('preparing-update')).toHaveLength(2);

      await update('preparing-update', (c) => {
        (c.spec.template.spec as { containers: { image?: string }[] }).containers[0]!.image = 'tailor.local/busybox:v2';
      });
      await eventuallyEqual(
        'the generation observed',
        async () => {
          const c = await readCloneSet(client, ns, 'preparing-update');
          return c.metadata?.generation === c.status?.observedGeneration;
        },
        true,
        10 * SECOND,
      );

      /** Pods by revision (updated, current) and how many are PreparingUpdate, as Kruise groups them. */
      const groups = async (): Promise<{ updated: number; current: number; preparing: number; names: string[] }> => {
        const { updateRevision } = await status('preparing-update');
        const pods = await listPods('preparing-update');
        const updated = pods.filter((p) => p.metadata?.labels?.['controller-revision-hash'] === updateRevision).length;
        const preparing = pods.filter((p) => stateOf(p) === 'PreparingUpdate');
        return { updated, current: pods.length - updated, preparing: preparing.length, names: podNames(preparing) };
      };
      const counts = async (): Promise<[number, number, number]> => {
        const g = await groups();
        return [g.updated, g.current, g.preparing];
      };
      // One pod is picked for the update and held in PreparingUpdate by its hook.
      await eventuallyEqual('updated, current, preparing', counts, [0, 2, 1], 10 * SECOND);

      // The other pod, rebuilt, comes back at the current revision: the held pod counts as updated.
      const { names: held } = await groups();
      const other = podNames(await listPods('preparing-update')).find((n) => !held.includes(n)) ?? '';
      await client.delete(podPath(other));
      await new Promise((r) => setTimeout(r, 3 * SECOND));
      await eventuallyEqual('the pods', async () => (await listPods('preparing-update')).length, 2, 120 * SECOND);
      expect(await counts()).toEqual([0, 2, 1]);

      const { updateRevision } = await status('preparing-update');
      await eventuallyEqual(
        'Progressing',
        () => progressing('preparing-update'),
        deadlineExceeded(updateRevision),
        180 * SECOND,
      );
      const condition = await progressing('preparing-update');

      // Scaled up, the new pod is at the current revision too.
      await update('preparing-update', (c) => {
        c.spec.replicas = 3;
      });
      await eventuallyEqual('the pods', async () => (await listPods('preparing-update')).length, 3, 120 * SECOND);
      expect(await counts()).toEqual([0, 3, 1]);

      // Released, the held pod is updated in place.
      await client.patch(podPath(held[0] ?? ''), { metadata: { labels: { [hookLabel]: null } } }, 'merge');
      await eventuallyEqual('updated, current, preparing', counts, [1, 2, 0], 120 * SECOND);

      // With the partition gone, the two others are held in turn, then released and updated.
      await update('preparing-update', (c) => {
        delete c.spec.updateStrategy?.partition;
        c.spec.updateStrategy = { ...c.spec.updateStrategy, maxUnavailable: '100%' };
      });
      await eventuallyEqual('updated, current, preparing', counts, [1, 2, 2], 120 * SECOND);
      for (const name of (await groups()).names) {
        await client.patch(podPath(name), { metadata: { labels: { [hookLabel]: null } } }, 'merge');
      }
      await eventuallyEqual('updated, current, preparing', counts, [3, 0, 0], 120 * SECOND);
      expect(await progressing('preparing-update')).toEqual(condition);
    },
    CASE_TIMEOUT,
  );
});
