// kstatus's Reconciling and Stalled on a real kubelet (issue 32, decision 22): one CloneSet walked
// through the six steps (created and ready, an image rollout under way, the rollout done,
// a partition holding pods back, paused, an unpullable image past progressDeadlineSeconds) and a
// scale up, checking both conditions at each step, and waiting with `kubectl wait` exactly as the
// README prints it. It also measures how soon Reconciling turns False once the last pod is ready.
// Prints the timeline of the two conditions it saw.
// Owns: the CloneSets of its namespace. Must not: touch another namespace's objects.
import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { CloneSetCondition } from '../../src/api/types.js';
import type { Pod } from '../../src/api/wire.js';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { kubeBinary } from '../support/cluster/kube-version.js';
import { kubeconfigPath } from '../support/cluster/kube.js';
import { firstTime, RUN_UNTIL_TERM } from '../support/cluster/testbed.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  type TestCloneSet,
} from '../support/fixtures/cloneset.js';

const { client, ns } = controllerTestBed('kstatus');
const NAME = 'walk';
const V1 = 'tailor.local/busybox:v1';
const V2 = 'tailor.local/busybox:v2';
const UNPULLABLE = 'tailor.local/busybox:does-not-exist';
const DEADLINE_SECONDS = 15;

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
const run = promisify(execFile);

/**
 * kubectl of the test bed's release, run without blocking the event loop (the controller runs in
 * this process): the README's commands with only the kubeconfig and namespace added.
 */
async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(kubeBinary('kubectl'), ['--kubeconfig', kubeconfigPath(), '-n', ns, ...args], {
    encoding: 'utf8',
  });
  return stdout;
}

/** The README's `kubectl get clone web -o jsonpath='{.status.conditions[?(@.type=="Stalled")].status}'`. */
const stalledByJsonPath = (): Promise<string> =>
  kubectl('get', 'clone', NAME, '-o', 'jsonpath={.status.conditions[?(@.type=="Stalled")].status}');

const container = (image: string): Record<string, unknown> => ({
  name: 'main',
  image,
  imagePullPolicy: 'IfNotPresent',
  command: RUN_UNTIL_TERM,
  resources: { requests: { cpu: '10m', memory: '16Mi' } },
});

const patch = (spec: Record<string, unknown>): Promise<unknown> =>
  client.patch(cloneSetPath(ns, NAME), { spec }, 'merge');
const image = (value: string): Record<string, unknown> => ({ template: { spec: { containers: [container(value)] } } });

const find = (cs: TestCloneSet, type: string): CloneSetCondition | undefined =>
  cs.status?.conditions?.find((c) => c.type === type);
const said = (c: CloneSetCondition | undefined): string => (c ? `${c.status}/${c.reason ?? ''}` : 'absent');
/** Reconciling and Stalled as `status/reason`. */
const readiness = (cs: TestCloneSet): { reconciling: string; stalled: string } => ({
  reconciling: said(find(cs, 'Reconciling')),
  stalled: said(find(cs, 'Stalled')),
});
const observed = (cs: TestCloneSet): boolean => (cs.status?.observedGeneration ?? 0) >= (cs.metadata?.generation ?? 1);

/** The CloneSet once the controller has observed its generation (polled every 50 ms). */
async function observedCloneSet(timeoutMs = 30_000): Promise<TestCloneSet> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const cs = await readCloneSet(client, ns, NAME);
    if (observed(cs)) return cs;
    if (Date.now() > deadline)
      throw new Error(`generation ${cs.metadata?.generation} not observed: ${JSON.stringify(cs.status)}`);
    await sleep(50);
  }
}

// Every change of the two conditions the poller saw, for the printed timeline.
const timeline: string[] = [];
let polling = true;
const started = Date.now();
const poller = (async (): Promise<void> => {
  let last = '';
  while (polling) {
    try {
      const cs = await readCloneSet(client, ns, NAME);
      const r = readiness(cs);
      const line = `gen ${cs.metadata?.generation}/${cs.status?.observedGeneration ?? '-'} Reconciling ${r.reconciling} Stalled ${r.stalled}`;
      if (line !== last) timeline.push(`${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
      last = line;
    } catch (err) {
      // Not created yet, or gone at the end; say so once.
      const line = `read failed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 160);
      if (line !== last) timeline.push(`${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
      last = line;
    }
    await sleep(100);
  }
})();

afterAll(async () => {
  polling = false;
  await poller;
  process.stdout.write(`[kstatus] Reconciling/Stalled as they changed:\n${timeline.join('\n')}\n`);
});

/** What the pods say: how many run `img` and are Ready. */
const readyOn = (pods: Pod[], img: string): number =>
  pods.filter(
    (p) =>
      p.spec?.containers[0]?.image === img &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
  ).length;

describe('Reconciling and Stalled through the six steps of issue 32', () => {
  it('walks one CloneSet from created to stalled, each step reading as kstatus and kubectl wait expect', async () => {
    const steps: string[] = [];
    const record = (step: string, cs: TestCloneSet): void => {
      const r = readiness(cs);
      steps.push(`${step.padEnd(44)} Reconciling ${r.reconciling.padEnd(24)} Stalled ${r.stalled}`);
    };

    // 1. Created, all ready. The README's wait returns once the pods are there and available.
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        NAME,
        {
          replicas: 3,
          progressDeadlineSeconds: DEADLINE_SECONDS,
          updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 },
        },
        { containers: [container(V1)] },
      ),
    );
    await kubectl('wait', `clone/${NAME}`, '--for=condition=Reconciling=false', '--timeout=120s');
    let cs = await readCloneSet(client, ns, NAME);
    record('1. created, all ready', cs);
    expect(cs.status?.availableReplicas).toBe(3);
    expect(readiness(cs)).toEqual({ reconciling: 'False/Complete', stalled: 'False/NotStalled' });
    expect(cs.spec.updateStrategy).toMatchObject({ partition: 0, maxUnavailable: 1, maxSurge: 0 });
    expect(await stalledByJsonPath()).toBe('False');

    // 2. An image rollout: Reconciling True from the first status that observed the edit.
    await patch(image(V2));
    cs = await observedCloneSet();
    record('2. image rollout in progress', cs);
    expect(readiness(cs)).toEqual({ reconciling: 'True/RolloutInProgress', stalled: 'False/NotStalled' });
    expect(find(cs, 'Reconciling')?.message).toMatch(
      /^rolling out revision walk-\w+: \d of 3 pods updated, \d available$/,
    );

    // 3. Rollout done: Reconciling False within about a second of the last pod becoming ready.
    const podsDone = await firstTime(
      'every pod to run v2 and be ready',
      async () => readyOn(await activePods(client, ns, NAME), V2) === 3,
    );
    const statusDone = await firstTime('Reconciling False', async () => {
      cs = await readCloneSet(client, ns, NAME);
      return find(cs, 'Reconciling')?.status === 'False';
    });
    const lag = Math.max(0, statusDone - podsDone) / 1000;
    process.stdout.write(
      `[kstatus] Reconciling False ${lag.toFixed(2)} s after the last pod of the rollout was ready\n`,
    );
    expect(lag).toBeLessThan(2.5);
    record('3. rollout done', cs);
    expect(readiness(cs)).toEqual({ reconciling: 'False/Complete', stalled: 'False/NotStalled' });
    expect(find(cs, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'CloneSetAvailable',
      message: 'CloneSet is available',
    });

    // Scale up by the scale subresource: Scaling, then Complete again.
    await kubectl('scale', `clone/${NAME}`, '--replicas=4');
    cs = await observedCloneSet();
    record('   scaled up to 4', cs);
    expect(readiness(cs)).toEqual({ reconciling: 'True/Scaling', stalled: 'False/NotStalled' });
    await kubectl('wait', `clone/${NAME}`, '--for=condition=Reconciling=false', '--timeout=120s');
    cs = await readCloneSet(client, ns, NAME);
    record('   scaled up, all ready', cs);
    expect(readiness(cs)).toEqual({ reconciling: 'False/Complete', stalled: 'False/NotStalled' });
    await kubectl('scale', `clone/${NAME}`, '--replicas=3');
    await kubectl('wait', `clone/${NAME}`, '--for=condition=Reconciling=false', '--timeout=120s');
    cs = await readCloneSet(client, ns, NAME);
    record('   scaled down to 3', cs);
    expect(cs.status?.replicas).toBe(3);
    expect(readiness(cs)).toEqual({ reconciling: 'False/Complete', stalled: 'False/NotStalled' });

    // 4. A partition holding pods back: one pod goes to v1, two stay; nothing moves, on purpose.
    await patch({ ...image(V1), updateStrategy: { partition: 2 } });
    await kubectl('wait', `clone/${NAME}`, '--for=condition=Reconciling=false', '--timeout=120s');
    cs = await readCloneSet(client, ns, NAME);
    record('4. partition holding pods back', cs);
    expect(cs.status).toMatchObject({ updatedReplicas: 1, updatedAvailableReplicas: 1, expectedUpdatedReplicas: 1 });
    expect(readiness(cs)).toEqual({ reconciling: 'False/PartitionHeld', stalled: 'False/NotStalled' });

    // 5. Paused: the partition lifted, yet nothing moves, on purpose.
    await patch({ updateStrategy: { partition: null, paused: true } });
    cs = await observedCloneSet();
    expect(cs.spec.updateStrategy?.partition).toBe(0);
    await sleep(3_000);
    cs = await readCloneSet(client, ns, NAME);
    record('5. paused', cs);
    expect(cs.status?.updatedReplicas).toBe(1);
    expect(readiness(cs)).toEqual({ reconciling: 'False/Paused', stalled: 'False/NotStalled' });

    // 6. An unpullable image: Reconciling while the deadline runs, then Stalled (the README's wait).
    await patch({ ...image(UNPULLABLE), updateStrategy: { paused: false } });
    cs = await observedCloneSet();
    record('6a. unpullable image, before the deadline', cs);
    expect(readiness(cs)).toEqual({ reconciling: 'True/RolloutInProgress', stalled: 'False/NotStalled' });
    const edited = Date.now();
    await kubectl('wait', `clone/${NAME}`, '--for=condition=Stalled=true', '--timeout=120s');
    cs = await readCloneSet(client, ns, NAME);
    record('6. unpullable image, past the deadline', cs);
    process.stdout.write(
      `[kstatus] Stalled ${((Date.now() - edited) / 1000).toFixed(1)} s after the edit (progressDeadlineSeconds ${DEADLINE_SECONDS})\n`,
    );
    expect(readiness(cs)).toEqual({ reconciling: 'False/Stalled', stalled: 'True/ProgressDeadlineExceeded' });
    expect(find(cs, 'Stalled')?.message).toMatch(
      /^CloneSet revision walk-\w+ has timed out progressing \(\d of 3 pods updated, 0 available\)$/,
    );
    expect(find(cs, 'Progressing')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(await stalledByJsonPath()).toBe('True');

    process.stdout.write(`[kstatus] the six steps on the real kubelet:\n${steps.join('\n')}\n`);
  }, 360_000);
});
