// Canary releases in place (issue 44, decision 95): an unmodified OpenKruise Rollout
// (test/support/cluster/kruise-rollout.ts) drives an InPlaceStatefulSet batch by batch through its
// generic StatefulSet-like path: its webhook holds the new template at partition 32767, each batch
// lowers the partition, a manual pause waits for an approval, and the end clears it. Every pod is
// updated in place (same UID), and the pods keep the labels Kruise Rollout puts on them. A template
// reverted mid-way rolls the updated pods back in place. A change only in fields the driver's
// Kubernetes 1.26 types lack is held by Tailor (decision 97) until reverted. Prints the batch timeline.
// Owns: its namespace's set, pods and Rollout; Kruise Rollout's install (stopped after).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { cloneSetManifest, cloneSetPath, waitForReady } from '../support/fixtures/cloneset.js';
import { startKruiseRollout, type KruiseRollout } from '../support/cluster/kruise-rollout.js';
import { kubeconfigPath } from '../support/cluster/kube.js';
import { eventually } from '../support/cluster/testbed.js';
import {
  newStatefulSet,
  readSet,
  setPods,
  setsPath,
  waitForRunningAndReady,
  isReady,
  revisionOf,
  type TestStatefulSet,
} from '../support/fixtures/stateful.js';

const { client, ns } = controllerTestBed('kruise-rollout', { anyNode: true });
const NAME = 'web';
const REPLICAS = 4;
const V1 = 'tailor.local/busybox:v1';
const V2 = 'tailor.local/busybox:v2';
const WORKLOAD_TYPE = 'rollouts.kruise.io/workload-type';
const ROLLOUT_ID = 'rollouts.kruise.io/rollout-id';
const IN_PROGRESSING = 'rollouts.kruise.io/in-progressing';
const CASE_TIMEOUT = 420_000;
let kruise: KruiseRollout | undefined;

interface Rollout {
  metadata?: { generation?: number };
  status?: {
    phase?: string;
    observedGeneration?: number;
    canaryStatus?: { currentStepIndex?: number; currentStepState?: string };
  };
}
const rolloutPath = (name = ''): string =>
  `/apis/rollouts.kruise.io/v1beta1/namespaces/${ns}/rollouts${name ? `/${name}` : ''}`;
const readRollout = (): Promise<Rollout> => client.get<Rollout>(rolloutPath(NAME));

const imageOf = (pod: Pod): string | undefined => pod.spec?.containers?.[0]?.image;
const partitionOf = (set: TestStatefulSet): unknown =>
  (set.spec.updateStrategy as { rollingUpdate?: { partition?: unknown } } | undefined)?.rollingUpdate?.partition;

/** Sets the image, as `kubectl set image` would; returns the set as admitted (after Kruise Rollout's webhook). */
const setImage = (image: string): Promise<TestStatefulSet> =>
  client.patch<TestStatefulSet>(
    setsPath(ns, NAME),
    [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: image }],
    'json',
  );

/** What `kubectl-kruise rollout approve` writes: the paused step is ready to move on. */
const approve = (): Promise<unknown> =>
  client.patch(rolloutPath(NAME) + '/status', { status: { canaryStatus: { currentStepState: 'StepReady' } } }, 'merge');

/** When each change of the partition and of the pods' images was seen, from the start of a release. */
class Timeline {
  private readonly started = Date.now();
  readonly lines: string[] = [];
  private last = '';
  note(what: string): void {
    if (what === this.last) return;
    this.last = what;
    this.lines.push(`+${((Date.now() - this.started) / 1000).toFixed(1)} s ${what}`);
  }
  async observe(image: string): Promise<{ set: TestStatefulSet; pods: Pod[]; at: number }> {
    const [set, pods] = await Promise.all([readSet(client, ns, NAME), setPods(client, ns)]);
    const at = pods.filter((p) => imageOf(p) === image && isReady(p)).length;
    this.note(`partition ${JSON.stringify(partitionOf(set) ?? null)}, ${at}/${REPLICAS} pods on ${image} and Ready`);
    return { set, pods, at };
  }
}

/** Waits until `count` pods run `image` and are Ready, the partition as Kruise Rollout set it. */
async function waitForBatch(timeline: Timeline, image: string, count: number): Promise<Pod[]> {
  return eventually(
    `${count} of ${REPLICAS} pods on ${image}`,
    async () => {
      const { pods, at } = await timeline.observe(image);
      return at >= count ? pods : undefined;
    },
    CASE_TIMEOUT,
  );
}

async function waitForStep(timeline: Timeline, index: number, state: string): Promise<void> {
  await eventually(
    `the Rollout at step ${index}, ${state}`,
    async () => {
      const status = (await readRollout()).status?.canaryStatus;
      timeline.note(`Rollout step ${status?.currentStepIndex ?? '-'} ${status?.currentStepState ?? '-'}`);
      return status?.currentStepIndex === index && status.currentStepState === state ? true : undefined;
    },
    CASE_TIMEOUT,
  );
}

const conditionOf = (set: TestStatefulSet, type: string) => set.status?.conditions?.find((c) => c.type === type);

const uids = (pods: Pod[]): Record<string, string | undefined> =>
  Object.fromEntries(pods.map((p) => [p.metadata?.name ?? '', p.metadata?.uid]));

beforeAll(async () => {
  // A CloneSet's pod beside the set, as in any cluster running Tailor: Kruise Rollout reads every
  // pod's owner, and its Rollout controller did not start when it could not list CloneSets
  // (config/kruise-rollout/rbac.yaml grants it).
  await client.create(cloneSetPath(ns), cloneSetManifest('bystander', { replicas: 1 }));
  await waitForReady(client, ns, 'bystander', 1);
  kruise = await startKruiseRollout(client);
  const set = newStatefulSet(NAME, REPLICAS, {
    podManagementPolicy: 'Parallel',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
  });
  // The user labels the set: Kruise Rollout labels only the kinds it knows (research, §5).
  set.metadata.labels = { ...set.metadata.labels, [WORKLOAD_TYPE]: 'statefulset' };
  await client.create(setsPath(ns), set);
  await waitForRunningAndReady(client, ns, REPLICAS);
  await client.create(rolloutPath(), {
    apiVersion: 'rollouts.kruise.io/v1beta1',
    kind: 'Rollout',
    metadata: { name: NAME },
    spec: {
      workloadRef: { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'InPlaceStatefulSet', name: NAME },
      strategy: {
        canary: {
          steps: [
            { replicas: 1, pause: {} },
            { replicas: '50%', pause: { duration: 0 } },
            { replicas: '100%', pause: { duration: 0 } },
          ],
        },
      },
    },
  });
  await eventually('the Rollout Healthy', async () =>
    (await readRollout()).status?.phase === 'Healthy' ? true : undefined,
  );
}, 25 * 60_000); // a first run builds Kruise Rollout (minutes)

afterAll(async () => {
  await kruise?.stop();
}, 60_000);

describe('OpenKruise Rollout drives an InPlaceStatefulSet, unmodified', () => {
  it(
    'in batches of 1 pod (then an approval), 50 % and 100 %, every pod updated in place',
    async () => {
      const before = uids(await setPods(client, ns));
      const timeline = new Timeline();
      const admitted = await setImage(V2);
      // The webhook held the new template back from every pod before the set saw it.
      expect(partitionOf(admitted)).toBe(32767);
      timeline.note('template changed to v2; partition 32767 (Kruise Rollout webhook)');

      await waitForBatch(timeline, V2, 1);
      await waitForStep(timeline, 1, 'StepPaused');
      // Held at one pod while paused: nothing else moves until the approval.
      await new Promise((r) => setTimeout(r, 5_000));
      const held = await timeline.observe(V2);
      expect(held.at).toBe(1);
      expect(partitionOf(held.set)).toBe(REPLICAS - 1);
      // Read after the step is paused: Kruise Rollout labels a batch's pods before it calls the batch ready.
      const canary = held.pods.find((p) => imageOf(p) === V2);
      expect(canary?.metadata?.labels?.[ROLLOUT_ID]).toBeDefined();
      // `kubectl tailor status` says which batch the canary is at and what it waits for.
      const status = spawnSync(
        'node',
        ['bin/kubectl-tailor', 'status', `ipsts/${NAME}`, '-n', ns, '--no-watch', '--kubeconfig', kubeconfigPath()],
        { encoding: 'utf8' },
      );
      expect(`${status.stdout}${status.stderr}`).toContain(
        `Kruise Rollout ${NAME}: Progressing, batch 1 of 3 (1 pod), StepPaused: approve it`,
      );

      await approve();
      timeline.note('approved');
      await waitForBatch(timeline, V2, REPLICAS / 2);
      const after = await waitForBatch(timeline, V2, REPLICAS);
      await eventually('the Rollout Healthy again', async () =>
        (await readRollout()).status?.phase === 'Healthy' ? true : undefined,
      );
      await timeline.observe(V2);
      process.stdout.write(`[kruise-rollout] canary v1 → v2, batch timeline:\n  ${timeline.lines.join('\n  ')}\n`);

      expect(uids(after)).toEqual(before);
      // The labels Kruise Rollout put on the canary pod survived its in-place update.
      expect(after.find((p) => p.metadata?.name === canary?.metadata?.name)?.metadata?.labels?.[ROLLOUT_ID]).toBe(
        canary?.metadata?.labels?.[ROLLOUT_ID],
      );
    },
    CASE_TIMEOUT,
  );

  it(
    'rolls back in place when the template is reverted mid-way',
    async () => {
      const before = uids(await setPods(client, ns));
      const timeline = new Timeline();
      await setImage(V1);
      await waitForBatch(timeline, V1, 1);
      await waitForStep(timeline, 1, 'StepPaused');
      // The release is reverted (a GitOps revert): the template is v2 again.
      await setImage(V2);
      timeline.note('template reverted to v2');
      const after = await waitForBatch(timeline, V2, REPLICAS);
      await eventually('the Rollout Healthy again', async () =>
        (await readRollout()).status?.phase === 'Healthy' ? true : undefined,
      );
      process.stdout.write(`[kruise-rollout] rollback mid-way, timeline:\n  ${timeline.lines.join('\n  ')}\n`);
      expect(uids(after)).toEqual(before);
      expect(after.every((p) => imageOf(p) === V2)).toBe(true);
    },
    CASE_TIMEOUT,
  );

  it(
    'holds a change only in fields Kruise Rollout cannot see, says why, and lets go when it is reverted',
    async () => {
      const revisions = (await setPods(client, ns)).map(revisionOf).sort();
      // A container's resizePolicy (Kubernetes 1.27) is not in the driver's 1.26 types.
      const resizePolicy = '/spec/template/spec/containers/0/resizePolicy';
      const admitted = await client.patch<TestStatefulSet & { metadata: { annotations?: Record<string, string> } }>(
        setsPath(ns, NAME),
        [{ op: 'add', path: resizePolicy, value: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }] }],
        'json',
      );
      // Its webhook saw no change: the partition as it left it (0, its null stored as the default), no release taken.
      expect(partitionOf(admitted) ?? 0).toBe(0);
      expect(admitted.metadata.annotations?.[IN_PROGRESSING]).toBeUndefined();

      const held = await eventually('the UpdateHeld condition', async () => {
        const set = await readSet(client, ns, NAME);
        return conditionOf(set, 'UpdateHeld')?.status === 'True' ? set : undefined;
      });
      expect(conditionOf(held, 'UpdateHeld')?.message).toContain('spec.containers[0].resizePolicy');
      process.stdout.write(`[kruise-rollout] held: UpdateHeld ${conditionOf(held, 'UpdateHeld')?.message}\n`);
      expect(conditionOf(held, 'Reconciling')).toMatchObject({ status: 'False', reason: 'UpdateHeld' });
      const events = await client.list<{ reason?: string; involvedObject?: { name?: string } }>(
        `/api/v1/namespaces/${ns}/events`,
      );
      expect(events.items.some((e) => e.involvedObject?.name === NAME && e.reason === 'UpdateHeld')).toBe(true);
      // Held, not slow: a few seconds on, every pod still runs the revision it ran.
      await new Promise((r) => setTimeout(r, 5_000));
      expect((await setPods(client, ns)).map(revisionOf).sort()).toEqual(revisions);

      await client.patch(setsPath(ns, NAME), [{ op: 'remove', path: resizePolicy }], 'json');
      const released = await eventually('the hold lifted', async () => {
        const set = await readSet(client, ns, NAME);
        return conditionOf(set, 'UpdateHeld') === undefined && conditionOf(set, 'Reconciling')?.reason === 'Complete'
          ? set
          : undefined;
      });
      expect(released.status?.currentRevision).toBe(released.status?.updateRevision);
      expect((await setPods(client, ns)).map(revisionOf).sort()).toEqual(revisions);
    },
    CASE_TIMEOUT,
  );
});
