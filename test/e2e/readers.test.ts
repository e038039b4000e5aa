// What the tools that gate deploys say of one CloneSet at each step of its life, on the real
// kubelet (issue 32.6), read with their own code: Argo CD's verdict from the shipped
// customization (config/argocd/health.lua) in Argo CD's Lua engine, and kstatus's from
// sigs.k8s.io/cli-utils v0.37.2 (Flux's `wait: true`, Helm 4's `--wait`), both through
// test/readers (built by its build.sh). The steps are issue 32's table:
//   created, all ready | image rollout in progress | rollout done | partition holding pods back |
//   paused | an image that cannot start, past progressDeadlineSeconds.
// Each step prints both verdicts; the test asserts the wanted ones. The same steps for an
// InPlaceStatefulSet (issue 42.4), read through the same health.lua (shipped under both kinds' keys).
import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { controllerTestBed } from '../support/cluster/controller-testbed.js';
import { eventually } from '../support/cluster/testbed.js';
import {
  cloneSetManifest,
  cloneSetPath,
  waitForCloneSet,
  waitForReady,
  type TestCloneSet,
} from '../support/fixtures/cloneset.js';
import {
  newStatefulSet,
  patchSet,
  readSet,
  setsPath,
  waitForRunningAndReady,
  type TestStatefulSet,
} from '../support/fixtures/stateful.js';

const { client, ns } = controllerTestBed('readers-e2e');
const HEALTH = resolve(process.cwd(), 'config/argocd/health.lua');

interface Verdicts {
  argocd: { status: string; message: string };
  kstatus: { status: string; message: string };
}

let verdictsBinary = '';
beforeAll(() => {
  verdictsBinary = execFileSync('bash', ['test/readers/build.sh'], { encoding: 'utf8' }).trim().split('\n').pop() ?? '';
}, 600_000);

const verdictsOf = async (name: string, path = cloneSetPath(ns, name)): Promise<Verdicts> => {
  const cs = await client.get<TestCloneSet>(path);
  return JSON.parse(
    execFileSync(verdictsBinary, [HEALTH], { input: JSON.stringify(cs), encoding: 'utf8' }),
  ) as Verdicts;
};

/** Waits until both tools give the wanted verdicts; prints them. */
async function expectVerdicts(
  step: string,
  name: string,
  [argocd, kstatus]: [string, string],
  { timeoutMs = 120_000, path = cloneSetPath(ns, name) }: { timeoutMs?: number; path?: string } = {},
): Promise<void> {
  let last: Verdicts | undefined;
  try {
    await eventually(
      `${step}: Argo CD ${argocd}, kstatus ${kstatus}`,
      async () => {
        last = await verdictsOf(name, path);
        return last.argocd.status === argocd && last.kstatus.status === kstatus ? true : undefined;
      },
      timeoutMs,
    );
  } finally {
    process.stdout.write(
      `[readers] ${step}: Argo CD ${last?.argocd.status} "${last?.argocd.message}" | kstatus ${last?.kstatus.status} "${last?.kstatus.message}"\n`,
    );
  }
  expect([last?.argocd.status, last?.kstatus.status]).toEqual([argocd, kstatus]);
}

const container = (image: string): Record<string, unknown> => ({
  name: 'main',
  image,
  imagePullPolicy: 'Never',
  command: ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
});
const setImage = (name: string, image: string, strategy: Record<string, unknown> = {}): Promise<unknown> =>
  client.patch(
    cloneSetPath(ns, name),
    { spec: { updateStrategy: strategy, template: { spec: { containers: [container(image)] } } } },
    'merge',
  );

describe("Argo CD's and kstatus's verdicts through a CloneSet's life", () => {
  it('created, rolling out, done, held by partition, paused, and stalled past its deadline', async () => {
    const name = 'gated';
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        name,
        // minReadySeconds keeps each updated pod unavailable for a while, so the rollout is seen moving.
        {
          replicas: 3,
          minReadySeconds: 5,
          progressDeadlineSeconds: 30,
          updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 },
        },
        { containers: [container('tailor.local/busybox:v1')] },
      ),
    );
    await waitForReady(client, ns, name, 3);
    await expectVerdicts('created, all ready', name, ['Healthy', 'Current']);

    await setImage(name, 'tailor.local/busybox:v2');
    // Once the controller has observed the edit: the verdict comes from the status, not the generation lag.
    await waitForCloneSet(
      client,
      ns,
      name,
      'the edit observed, the rollout moving',
      (cs) =>
        cs.status?.observedGeneration === cs.metadata?.generation && (cs.status?.updatedAvailableReplicas ?? 0) < 3,
      30_000,
    );
    await expectVerdicts('image rollout in progress', name, ['Progressing', 'InProgress'], { timeoutMs: 10_000 });

    await waitForCloneSet(client, ns, name, 'rolled out', (cs) => cs.status?.updatedAvailableReplicas === 3, 180_000);
    await expectVerdicts('rollout done', name, ['Healthy', 'Current']);

    await setImage(name, 'tailor.local/busybox:v1', { partition: 2 });
    await waitForCloneSet(
      client,
      ns,
      name,
      'one pod updated, two held',
      (cs) => cs.status?.updatedAvailableReplicas === 1,
      180_000,
    );
    await expectVerdicts('partition holding pods back', name, ['Suspended', 'Current']);

    await client.patch(cloneSetPath(ns, name), { spec: { updateStrategy: { partition: 0, paused: true } } }, 'merge');
    await expectVerdicts('paused', name, ['Suspended', 'Current']);

    // An image the node does not have, never pulled (imagePullPolicy Never): the pod cannot start.
    await setImage(name, 'tailor.local/busybox:not-on-the-node', { paused: false, partition: 0 });
    await expectVerdicts('an image that cannot start, past progressDeadlineSeconds', name, ['Degraded', 'Failed'], {
      timeoutMs: 180_000,
    });
  }, 900_000);
});

describe("Argo CD's and kstatus's verdicts through an InPlaceStatefulSet's life", () => {
  it('created, rolling out, done, held by partition, paused, and stalled past its deadline', async () => {
    const name = 'ss2';
    const path = setsPath(ns, name);
    const set = newStatefulSet(name, 3, { minReadySeconds: 5, progressDeadlineSeconds: 30 });
    set.spec.template.spec.containers = [container('tailor.local/busybox:v1')];
    await client.create(setsPath(ns), set);
    const setTemplate = (image: string, rollingUpdate: Record<string, unknown> = {}): Promise<void> =>
      patchSet(client, ns, name, {
        spec: {
          updateStrategy: { rollingUpdate },
          template: { ...set.spec.template, spec: { ...set.spec.template.spec, containers: [container(image)] } },
        },
      });
    const waitFor = (what: string, until: (s: NonNullable<TestStatefulSet['status']>) => boolean): Promise<unknown> =>
      eventually(
        what,
        async () => {
          const now = await readSet(client, ns, name);
          return now.status?.observedGeneration === now.metadata.generation && until(now.status ?? {})
            ? true
            : undefined;
        },
        180_000,
      );
    await waitForRunningAndReady(client, ns, 3);
    await expectVerdicts('created, all ready', name, ['Healthy', 'Current'], { path });

    await setTemplate('tailor.local/busybox:v2');
    await waitFor('the rollout moving', (s) => (s.updatedAvailableReplicas ?? 0) < 3);
    await expectVerdicts('image rollout in progress', name, ['Progressing', 'InProgress'], { timeoutMs: 10_000, path });

    await waitFor('rolled out', (s) => s.updatedAvailableReplicas === 3);
    await expectVerdicts('rollout done', name, ['Healthy', 'Current'], { path });

    await setTemplate('tailor.local/busybox:v1', { partition: 2 });
    await waitFor('one pod updated, two held', (s) => s.updatedAvailableReplicas === 1);
    await expectVerdicts('partition holding pods back', name, ['Suspended', 'Current'], { path });

    await patchSet(client, ns, name, { spec: { updateStrategy: { rollingUpdate: { partition: 0, paused: true } } } });
    await expectVerdicts('paused', name, ['Suspended', 'Current'], { path });

    await setTemplate('tailor.local/busybox:not-on-the-node', { paused: false, partition: 0 });
    await expectVerdicts('an image that cannot start, past progressDeadlineSeconds', name, ['Degraded', 'Failed'], {
      timeoutMs: 180_000,
      path,
    });
  }, 900_000);
});
