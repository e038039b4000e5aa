// Tailor installed, upgraded and uninstalled with its Helm chart on the bed (issue 34 item 3), each
// step a real `helm` command (Helm v4, built from its Go module by hack/build-chart-tools.sh) with
// the bed's values (hack/dev-values.yaml, as `make dev` installs it):
//   - `helm install --wait` returns with the controller available (2 replicas, one holding the
//     Lease), the agent ready and the CRD established, kept by policy; that controller reconciles;
//   - the chart's FlowSchema classifies the controller's Lease requests into the leader-election
//     priority level (the API server's X-Kubernetes-PF-FlowSchema-UID response header);
//   - `helm upgrade` to another memory limit rolls the controller while a CloneSet is resized: the
//     resize and a later scale are carried out, and no pod of the CloneSet restarts;
//   - `helm install --wait` and `helm upgrade --wait` of an application chart that holds a CloneSet
//     (test/e2e/fixtures/cloneset-chart) return only once its rollout is done: Helm 4 waits with
//     kstatus, which reads the Reconciling/Stalled conditions Tailor writes (decision 22);
//   - `helm uninstall` removes Tailor but keeps the CRD (crds.keep), the CloneSets and their pods.
// The release is the bed's one Tailor (tailor-system is the only namespace the chart accepts). When
// `make dev`'s release is there, it is uninstalled first (its CRD and CloneSets are kept, like this
// file's) and installed again afterwards with the values `helm get values` read from it, so the bed
// ends as it was: `helm install` and `helm uninstall` cannot be tested against a release that
// exists, and `helm upgrade` + rollback would leave its history changed anyway. Without a release
// nothing is installed at the end.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isNotFound, KubeClient } from '../../src/runtime/kube-client.js';
import type { Pod } from '../../src/api/wire.js';
import { createTestNamespace, kubeconfigPath, loadTestKubeConfig } from '../support/cluster/kube.js';
import { eventually, RESIZE_WITHOUT_RESTART, sizedContainer } from '../support/cluster/testbed.js';
import { kubeBinary } from '../support/cluster/kube-version.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  TEST_CLONESET_LABEL,
  waitForCloneSet,
  waitForReady,
  type TestCloneSet,
} from '../support/fixtures/cloneset.js';

const RELEASE = 'tailor';
const SYSTEM = 'tailor-system';
const CHART = 'charts/tailor';
const BED_VALUES = 'hack/dev-values.yaml';
const APP_CHART = 'test/e2e/fixtures/cloneset-chart';
const APP = 'app';
const READY_AFTER_S = 3; // the fixture chart's readyAfterSeconds
const DEPLOYMENT = `/apis/apps/v1/namespaces/${SYSTEM}/deployments/tailor-controller`;
const DAEMONSET = `/apis/apps/v1/namespaces/${SYSTEM}/daemonsets/tailor-agent`;
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM}/leases/tailor-controller`;
const CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clonesets.apps.tailor.dev';

const client = new KubeClient(loadTestKubeConfig());
const ns = `helm-e2e-${Date.now().toString(36)}`;
const work = mkdtempSync(join(tmpdir(), 'tailor-helm-e2e-'));
let helmBin = '';

interface Meta {
  metadata?: {
    uid?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}
interface Deployment extends Meta {
  spec?: { template?: { spec?: { containers?: { command?: string[] }[] } } };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
}
interface DaemonSet extends Meta {
  status?: { numberReady?: number; desiredNumberScheduled?: number };
}
interface Crd extends Meta {
  status?: { conditions?: { type: string; status: string }[] };
}

interface HelmRun {
  stdout: string;
  ms: number;
  startedAt: number;
  endedAt: number;
}

/** Runs helm against the bed; rejects with its stderr when it exits non-zero. */
function helm(args: string[]): Promise<HelmRun> {
  const startedAt = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(helmBin, args, {
      env: { ...process.env, KUBECONFIG: kubeconfigPath() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const endedAt = Date.now();
      if (code === 0) resolve({ stdout, ms: endedAt - startedAt, startedAt, endedAt });
      else reject(new Error(`helm ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}
const helmOk = (args: string[]): Promise<boolean> =>
  helm(args).then(
    () => true,
    () => false,
  );

const exists = (path: string): Promise<boolean> =>
  client.get(path).then(
    () => true,
    (err: unknown) => {
      if (isNotFound(err)) return false;
      throw err;
    },
  );

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const timings: string[] = [];
const record = (line: string): void => {
  timings.push(line);
};

/** A CloneSet this file's Tailor reconciles: without the test label make dev's selector skips. */
function appCloneSet(name: string, replicas: number, cpu: string): TestCloneSet {
  const cs = cloneSetManifest(
    name,
    { replicas, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
    { containers: [sizedContainer(cpu, '64Mi', { resizePolicy: RESIZE_WITHOUT_RESTART })] },
  );
  delete cs.metadata?.labels?.[TEST_CLONESET_LABEL];
  return cs;
}

/** Pod UID -> restart count of the CloneSet's pods. */
async function restarts(app: string): Promise<Map<string, number>> {
  return new Map(
    (await activePods(client, ns, app)).map((p) => [
      p.metadata?.uid ?? '',
      p.status?.containerStatuses?.[0]?.restartCount ?? -1,
    ]),
  );
}

/** Polls `probe` every 100 ms until stopped; the first moment it held, and what `note` saw on the way. */
function observe(probe: () => Promise<{ done: boolean; note?: string }>): {
  stop(): Promise<{ doneAt?: number; notes: string[] }>;
} {
  let stopped = false;
  let doneAt: number | undefined;
  const notes: string[] = [];
  const loop = (async () => {
    while (!stopped) {
      try {
        const { done, note } = await probe();
        if (done && doneAt === undefined) doneAt = Date.now();
        if (note !== undefined && notes.at(-1) !== note) notes.push(note);
      } catch {
        // a read that failed is retried
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { doneAt, notes };
    },
  };
}

const condition = (cs: TestCloneSet, type: string): string => {
  const c = cs.status?.conditions?.find((x) => x.type === type);
  return c ? `${c.status}/${c.reason ?? ''}` : 'absent';
};
/** The rollout is done: the generation observed and every replica updated and ready. */
const rolledOut = (cs: TestCloneSet): boolean =>
  (cs.status?.observedGeneration ?? 0) >= (cs.metadata?.generation ?? 1) &&
  cs.status?.updatedReadyReplicas === cs.spec.replicas &&
  cs.status?.readyReplicas === cs.spec.replicas &&
  cs.status?.replicas === cs.spec.replicas;

type Prior = { kind: 'release'; values: string } | { kind: 'unmanaged' } | { kind: 'none' };
let prior: Prior = { kind: 'none' };
let takeOwnership = false;

beforeAll(async () => {
  let started = Date.now();
  helmBin =
    /^HELM=(.*)$/m.exec(execFileSync('bash', ['hack/build-chart-tools.sh', 'helm'], { encoding: 'utf8' }))?.[1] ?? '';
  expect(helmBin).not.toBe('');
  // The image the chart's pods run (tailor.local/tailor:dev, never pulled on the bed): the code
  // under test, as make dev builds it.
  execFileSync('bash', ['hack/image.sh'], { stdio: 'pipe' });
  record(`helm and the image ready in ${seconds(Date.now() - started)}`);

  if (await helmOk(['status', RELEASE, '-n', SYSTEM])) {
    const values = join(work, 'prior-values.yaml');
    writeFileSync(values, (await helm(['get', 'values', RELEASE, '-n', SYSTEM, '-o', 'yaml'])).stdout);
    prior = { kind: 'release', values };
    started = Date.now();
    await helm(['uninstall', RELEASE, '-n', SYSTEM, '--wait', '--timeout', '3m']);
    record(
      `make dev's release uninstalled for the test in ${seconds(Date.now() - started)} (installed again afterwards)`,
    );
  } else if (await exists(DEPLOYMENT)) {
    prior = { kind: 'unmanaged' }; // an older make dev's kubectl apply -k
  }
  // Objects Helm did not create (the CRD the other tiers apply from crds/, an older make dev's
  // kustomize install) need --take-ownership, as they would for a user who applied them by hand.
  // Every install passes --force-conflicts: the other tiers merge-patch the CRD from crds/ (and an
  // older make dev applied with kubectl), so a changed CRD field has another manager, with which
  // Helm's server-side apply conflicts otherwise.
  const crd = await client.get<Crd>(CRD).catch(() => undefined);
  takeOwnership =
    prior.kind === 'unmanaged' ||
    (crd !== undefined && crd.metadata?.annotations?.['meta.helm.sh/release-name'] !== RELEASE);
  await createTestNamespace(client, ns);
}, 600_000);

afterAll(async () => {
  await helmOk(['uninstall', APP, '-n', ns, '--wait']);
  await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  if (await helmOk(['status', RELEASE, '-n', SYSTEM]))
    await helm(['uninstall', RELEASE, '-n', SYSTEM, '--wait', '--timeout', '3m']);
  const started = Date.now();
  if (prior.kind === 'release') {
    await helm([
      'install',
      RELEASE,
      CHART,
      '-n',
      SYSTEM,
      '-f',
      prior.values,
      '--force-conflicts',
      '--wait',
      '--timeout',
      '5m',
    ]);
    record(`make dev's release installed again with its own values in ${seconds(Date.now() - started)}`);
  } else if (prior.kind === 'unmanaged') {
    await helm([
      'install',
      RELEASE,
      CHART,
      '-n',
      SYSTEM,
      '-f',
      BED_VALUES,
      '--take-ownership',
      '--force-conflicts',
      '--wait',
      '--timeout',
      '5m',
    ]);
    record(
      `the earlier kubectl-applied Tailor replaced by a release with the bed's values in ${seconds(Date.now() - started)}`,
    );
  }
  rmSync(work, { recursive: true, force: true });
  client.close();
  process.stdout.write(`helm e2e timings:\n${timings.map((t) => `  ${t}`).join('\n')}\n`);
}, 600_000);

describe('Tailor installed with its Helm chart', () => {
  it('helm install --wait returns with the controller available and leading, the agent ready and the CRD established and kept', async () => {
    const run = await helm([
      'install',
      RELEASE,
      CHART,
      '-n',
      SYSTEM,
      '--create-namespace',
      '-f',
      BED_VALUES,
      '--wait',
      '--timeout',
      '5m',
      '--force-conflicts',
      ...(takeOwnership ? ['--take-ownership'] : []),
    ]);
    record(`helm install --wait of Tailor${takeOwnership ? ' (--take-ownership of the CRD)' : ''}: ${seconds(run.ms)}`);
    // Read at once: --wait is what made these true.
    const deployment = await client.get<Deployment>(DEPLOYMENT);
    expect(deployment.status?.availableReplicas).toBe(2);
    expect(deployment.status?.updatedReplicas).toBe(2);
    const agent = await client.get<DaemonSet>(DAEMONSET);
    expect(agent.status?.numberReady).toBe(agent.status?.desiredNumberScheduled);
    expect(agent.status?.numberReady).toBeGreaterThanOrEqual(1);
    const crd = await client.get<Crd>(CRD);
    expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    expect(crd.metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(crd.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
    expect((await helm(['status', RELEASE, '-n', SYSTEM, '-o', 'json'])).stdout).toMatch(/"status":\s*"deployed"/);
    const controllers = (
      await client.list<Pod>(`/api/v1/namespaces/${SYSTEM}/pods`, {
        labelSelector: 'app.kubernetes.io/component=controller',
      })
    ).items;
    const holder = await eventually('a controller to hold the Lease', async () => {
      const h = (await client.get<{ spec?: { holderIdentity?: string } }>(LEASE)).spec?.holderIdentity;
      return h && controllers.some((p) => p.metadata?.name === h) ? h : undefined;
    });
    expect(controllers.map((p) => p.metadata?.name)).toContain(holder);

    // The installed controller reconciles a CloneSet nobody else acts on.
    const started = Date.now();
    await client.create(cloneSetPath(ns), appCloneSet('steady', 3, '100m'));
    await waitForReady(client, ns, 'steady', 3, 120_000);
    record(`a CloneSet of 3 created and ready under the installed controller: ${seconds(Date.now() - started)}`);
  }, 600_000);

  it("classifies the controller's Lease requests into the leader-election priority level (the chart's FlowSchema)", async () => {
    const schema = await client.get<{ metadata?: { uid?: string } }>(
      '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/tailor-leader-election',
    );
    // The API server names the FlowSchema and priority level that classified a request in its
    // response headers (X-Kubernetes-PF-*), which kubectl prints at -v=8.
    const asController = [
      `--as=system:serviceaccount:${SYSTEM}:tailor-controller`,
      '--as-group=system:serviceaccounts',
    ];
    const run = spawnSync(
      kubeBinary('kubectl'),
      ['--kubeconfig', kubeconfigPath(), '-n', SYSTEM, 'get', 'lease', 'tailor-controller', '-v=8', ...asController],
      { encoding: 'utf8' },
    );
    const header = /X-Kubernetes-Pf-Flowschema-Uid: (\S+)/i.exec(run.stderr)?.[1];
    expect(header).toBe(schema.metadata?.uid);
  });

  it('helm upgrade to another memory limit rolls the controller; a resize during it and a scale after are carried out, no CloneSet pod restarts', async () => {
    const before = await restarts('steady');
    expect(before.size).toBe(3);
    const oldControllers = new Set(
      (
        await client.list<Pod>(`/api/v1/namespaces/${SYSTEM}/pods`, {
          labelSelector: 'app.kubernetes.io/component=controller',
        })
      ).items.map((p) => p.metadata?.uid),
    );
    const generation = (await client.get<Deployment>(DEPLOYMENT)).metadata?.generation ?? 0;

    const upgrade = helm([
      'upgrade',
      RELEASE,
      CHART,
      '-n',
      SYSTEM,
      '-f',
      BED_VALUES,
      '--set',
      'controller.resources.limits.memory=640Mi',
      '--wait',
      '--timeout',
      '5m',
    ]);
    // The edit lands while the controller rolls: once the Deployment has the new template.
    await eventually('the upgrade to reach the Deployment', async () =>
      ((await client.get<Deployment>(DEPLOYMENT)).metadata?.generation ?? 0) > generation ? true : undefined,
    );
    const editedAt = Date.now();
    await client.patch(
      cloneSetPath(ns, 'steady'),
      [
        { op: 'replace', path: '/spec/template/spec/containers/0/resources/requests/cpu', value: '150m' },
        { op: 'replace', path: '/spec/template/spec/containers/0/resources/limits/cpu', value: '150m' },
      ],
      'json',
    );
    const run = await upgrade;
    record(`helm upgrade --wait (controller memory 512Mi -> 640Mi): ${seconds(run.ms)}`);

    const deployment = await client.get<Deployment>(DEPLOYMENT);
    expect(deployment.status?.availableReplicas).toBe(2);
    expect(deployment.status?.updatedReplicas).toBe(2);
    expect(deployment.status?.replicas).toBe(2);
    expect(deployment.spec?.template?.spec?.containers?.[0]?.command).toContain('--max-old-space-size=480');
    // The old pods may still be terminating (their grace period); none of them is running.
    const controllers = (
      await client.list<Pod>(`/api/v1/namespaces/${SYSTEM}/pods`, {
        labelSelector: 'app.kubernetes.io/component=controller',
      })
    ).items.filter((p) => !p.metadata?.deletionTimestamp);
    expect(controllers).toHaveLength(2);
    expect(controllers.filter((p) => oldControllers.has(p.metadata?.uid))).toEqual([]);
    await eventually('a new controller to hold the Lease', async () => {
      const h = (await client.get<{ spec?: { holderIdentity?: string } }>(LEASE)).spec?.holderIdentity;
      return h && controllers.some((p) => p.metadata?.name === h) ? true : undefined;
    });

    await waitForCloneSet(
      client,
      ns,
      'steady',
      'the resize made during the upgrade',
      (cs, pods) =>
        cs.status?.updatedReadyReplicas === 3 &&
        (cs.status?.resize?.resizing ?? 1) === 0 &&
        pods.length === 3 &&
        pods.every((p) => p.status?.containerStatuses?.[0]?.resources?.limits?.['cpu'] === '150m'),
      120_000,
    );
    record(`the resize edited during the upgrade done ${seconds(Date.now() - editedAt)} after the edit`);
    expect(await restarts('steady')).toEqual(before);

    // And after it: a scale, by the new controller.
    const scaledAt = Date.now();
    await client.patch(cloneSetPath(ns, 'steady'), { spec: { replicas: 4 } }, 'merge');
    await waitForReady(client, ns, 'steady', 4, 120_000);
    record(`a scale 3 -> 4 after the upgrade: ${seconds(Date.now() - scaledAt)}`);
    const after = await restarts('steady');
    for (const [uid, count] of before) expect(after.get(uid)).toBe(count);
  }, 600_000);

  it('helm install --wait of a chart with a CloneSet returns once the rollout is done; helm upgrade --wait of its image once the in-place rollout is', async () => {
    const probe = (generation: number) => async (): Promise<{ done: boolean; note?: string }> => {
      const cs = await readCloneSet(client, ns, APP);
      return {
        done: (cs.metadata?.generation ?? 0) >= generation && rolledOut(cs),
        note: `gen ${cs.metadata?.generation}/${cs.status?.observedGeneration ?? '-'} updatedReady ${cs.status?.updatedReadyReplicas ?? '-'} Reconciling ${condition(cs, 'Reconciling')}`,
      };
    };

    let watch = observe(probe(1));
    const install = await helm(['install', APP, APP_CHART, '-n', ns, '--wait', '--timeout', '3m']);
    let cs = await readCloneSet(client, ns, APP);
    let seen = await watch.stop();
    process.stdout.write(
      `helm install of the app chart, the CloneSet as polled while helm waited:\n  ${seen.notes.join('\n  ')}\n`,
    );
    record(
      `helm install --wait of a chart with a CloneSet of 3 (ready ${READY_AFTER_S} s after start): ${seconds(install.ms)}; rollout done ${
        seen.doneAt === undefined
          ? 'not seen by the 100 ms poll before helm returned'
          : `seen ${seconds(seen.doneAt - install.startedAt)} after helm started`
      }`,
    );
    expect(rolledOut(cs)).toBe(true);
    expect(condition(cs, 'Reconciling')).toBe('False/Complete');
    expect(condition(cs, 'Stalled')).toMatch(/^False\//);
    expect(install.ms).toBeGreaterThanOrEqual(READY_AFTER_S * 1000);
    const pods = await activePods(client, ns, APP);
    expect(pods).toHaveLength(3);
    const uids = new Set(pods.map((p) => p.metadata?.uid));

    watch = observe(probe(2));
    const upgrade = await helm([
      'upgrade',
      APP,
      APP_CHART,
      '-n',
      ns,
      '--set',
      'image=tailor.local/busybox:v2',
      '--wait',
      '--timeout',
      '3m',
    ]);
    cs = await readCloneSet(client, ns, APP);
    seen = await watch.stop();
    process.stdout.write(
      `helm upgrade of the app chart to busybox:v2, the CloneSet as polled while helm waited:\n  ${seen.notes.join('\n  ')}\n`,
    );
    record(
      `helm upgrade --wait of its image (in place, one pod at a time): ${seconds(upgrade.ms)}; rollout done ${
        seen.doneAt === undefined
          ? 'not seen by the 100 ms poll before helm returned'
          : `seen ${seconds(seen.doneAt - upgrade.startedAt)} after helm started`
      }`,
    );
    // Read right after helm returned: every replica updated and ready, in place.
    expect(cs.status?.updatedReadyReplicas).toBe(3);
    expect(rolledOut(cs)).toBe(true);
    expect(seen.notes.some((n) => n.includes('Reconciling True/'))).toBe(true);
    const updated = await activePods(client, ns, APP);
    expect(new Set(updated.map((p) => p.metadata?.uid))).toEqual(uids);
    expect(updated.every((p) => p.status?.containerStatuses?.[0]?.image === 'tailor.local/busybox:v2')).toBe(true);
    // Three pods, one at a time, each ready READY_AFTER_S after its container restarted.
    expect(upgrade.ms).toBeGreaterThanOrEqual(3 * READY_AFTER_S * 1000);
  }, 600_000);

  it('helm uninstall removes Tailor and keeps the CRD, the CloneSets and their pods', async () => {
    const pods = new Map([...(await restarts('steady')), ...(await restarts(APP))]);
    const run = await helm(['uninstall', RELEASE, '-n', SYSTEM, '--wait', '--timeout', '3m']);
    record(`helm uninstall --wait of Tailor: ${seconds(run.ms)}`);
    expect(run.stdout).toMatch(
      /kept due to the resource policy:\s*\n.*CustomResourceDefinition.*clonesets\.apps\.tailor\.dev/,
    );
    for (const path of [
      DEPLOYMENT,
      DAEMONSET,
      `/api/v1/namespaces/${SYSTEM}/serviceaccounts/tailor-controller`,
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/tailor-controller',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/tailor-pod-annotations',
    ]) {
      expect({ path, exists: await exists(path) }).toEqual({ path, exists: false });
    }
    const crd = await client.get<Crd>(CRD);
    expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    expect((await readCloneSet(client, ns, 'steady')).spec.replicas).toBe(4);
    expect((await readCloneSet(client, ns, APP)).spec.replicas).toBe(3);
    // The pods run on, untouched, with nobody reconciling them.
    await new Promise((r) => setTimeout(r, 3000));
    expect(new Map([...(await restarts('steady')), ...(await restarts(APP))])).toEqual(pods);
  }, 600_000);
});
