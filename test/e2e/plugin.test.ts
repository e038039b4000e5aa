// `kubectl tailor status` against the real test-bed cluster with the controller running in this
// process: it follows an image rollout of a 2-pod CloneSet to the end and exits 0; it exits 1 and
// says why when a resize is Infeasible and the strategy waits; kubectl finds it on PATH; it exits
// 2 when the timeout passes first; bad input (unknown CloneSet, wrong namespace, no cluster) is
// one line on stderr and exit 3. The rollout verbs: history lists revisions with what changed;
// undo puts a template back in place and the controller reuses its revision; pause holds a change
// back until resume; restart writes restartedAt and history names the new revision; kubectl
// completes the plugin's words through kubectl_complete-tailor. The plugin runs as a child process (`node bin/kubectl-tailor`,
// after a build), never synchronously, so the in-process controller keeps reconciling meanwhile.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeClient } from '../../src/runtime/kube-client.js';
import {
  activePods,
  cloneSetManifest,
  cloneSetPath,
  readCloneSet,
  patchTemplateAndWait,
  waitForCloneSet,
  waitForReady,
} from '../support/fixtures/cloneset.js';
import { startController, type RunningController } from '../support/cluster/controller.js';
import { controllerKubeConfig } from '../support/cluster/controller-identity.js';
import { ensureCrd } from '../support/cluster/crd.js';
import { kubeconfigPath, loadTestKubeConfig } from '../support/cluster/kube.js';
import { kubeBinary } from '../support/cluster/kube-version.js';
import { eventually } from '../support/cluster/testbed.js';
import { newStatefulSet, readSet, setPods, setsPath, waitForRunningAndReady } from '../support/fixtures/stateful.js';

const kc = loadTestKubeConfig();
const client = new KubeClient(kc);
const ns = `plugin-e2e-${Date.now().toString(36)}`;
const kubeconfig = resolve(kubeconfigPath());
const plugin = resolve('bin/kubectl-tailor');
const kubectlBin = kubeBinary('kubectl');
const scratch = mkdtempSync(join(tmpdir(), 'kubectl-tailor-'));
let controller: RunningController | undefined;

const container = (cpu: string, image = 'tailor.local/busybox:v1'): Record<string, unknown> => ({
  name: 'main',
  image,
  imagePullPolicy: 'Never',
  command: ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
  resources: { requests: { cpu, memory: '32Mi' }, limits: { cpu, memory: '32Mi' } },
  resizePolicy: [
    { resourceName: 'cpu', restartPolicy: 'NotRequired' },
    { resourceName: 'memory', restartPolicy: 'NotRequired' },
  ],
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command without blocking this process (the controller lives here). */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 150_000): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

const tailor = (...args: string[]): Promise<Run> => run(process.execPath, [plugin, ...args]);
const status = (name: string, ...args: string[]): Promise<Run> =>
  tailor('status', name, '-n', ns, '--kubeconfig', kubeconfig, ...args);
const lines = (text: string): string[] => text.split('\n').filter(Boolean);

beforeAll(async () => {
  // The plugin runs the build output. Other work in the tree may not type-check at this moment;
  // tsc still emits, and what matters here is that the plugin was built.
  const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { encoding: 'utf8' });
  if (!existsSync('dist/cli/plugin.js') || !existsSync('dist/cli/pure/status-view.js')) {
    throw new Error(`build failed: ${build.stdout}${build.stderr}`);
  }
  await ensureCrd(client);
  await client.create('/api/v1/namespaces', { metadata: { name: ns } });
  await eventually('default service account', () =>
    client.get(`/api/v1/namespaces/${ns}/serviceaccounts/default`).catch(() => undefined),
  );
  controller = startController(await controllerKubeConfig(client), ns);
}, 180_000);

afterAll(async () => {
  await controller?.stop();
  await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  client.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('kubectl tailor status', () => {
  it('follows an in-place image rollout of 2 pods to the end and exits 0', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'web',
        { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        { containers: [container('50m')] },
      ),
    );
    await waitForReady(client, ns, 'web', 2, 120_000);
    await client.patch(
      cloneSetPath(ns, 'web'),
      { spec: { template: { spec: { containers: [container('50m', 'tailor.local/busybox:v2')] } } } },
      'merge',
    );

    const result = await status('web', '--timeout', '120s');

    expect(result).toMatchObject({ code: 0, stderr: '' });
    // Not a terminal: one summary line per change, then kubectl rollout status' last line.
    expect(lines(result.stdout).at(-1)).toMatch(
      /^clone "web" successfully rolled out: 2 of 2 pods run revision \S+ and are ready$/,
    );
    expect(
      lines(result.stdout)
        .slice(0, -1)
        .every((l) => l.startsWith('web: [')),
    ).toBe(true);
    const cs = await waitForCloneSet(client, ns, 'web', 'status', () => true);
    expect(cs.status).toMatchObject({ updatedReadyReplicas: 2, replicas: 2 });
  });

  it('is found by kubectl on PATH as `kubectl tailor`', async () => {
    symlinkSync(plugin, join(scratch, 'kubectl-tailor'));
    const result = await run(kubectlBin, ['tailor', 'status', 'web', '-n', ns], {
      PATH: `${scratch}:${process.env.PATH}`,
      KUBECONFIG: kubeconfig,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('clone "web" successfully rolled out');
    const help = await run(kubectlBin, ['tailor', '--help'], { PATH: `${scratch}:${process.env.PATH}` });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('status [options] <clone>');
  });

  it('exits 1 and says why when a resize is Infeasible and the strategy waits', async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'big',
        { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible', resizeStrategy: { onInfeasible: 'Wait' } } },
        { containers: [container('50m')] },
      ),
    );
    await waitForReady(client, ns, 'big', 1, 120_000);
    await client.patch(
      cloneSetPath(ns, 'big'),
      { spec: { template: { spec: { containers: [container('500')] } } } },
      'merge',
    );

    const result = await status('big', '--timeout', '120s');

    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/^error: clone "big" rollout is blocked: .*Infeasible/);
    // The full view explains it: the pod, its resize state and the kubelet's words.
    expect(result.stdout).toContain('Blocked:');
    expect(result.stdout).toMatch(/big-\S+\s+\S+\s+yes\s+yes\s+\S+\s+Infeasible/);
  });

  it('exits 2 when the timeout passes before the rollout finishes', async () => {
    // A paused rollout with a change pending never finishes by itself.
    await client.patch(
      cloneSetPath(ns, 'web'),
      {
        spec: {
          updateStrategy: { paused: true },
          template: { spec: { containers: [container('50m', 'tailor.local/busybox:v1')] } },
        },
      },
      'merge',
    );
    const started = Date.now();
    const result = await status('web', '--timeout', '3s', '--interval', '500ms');
    expect(result.code).toBe(2);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/^error: timed out after 3s waiting for clone "web": /),
    ]);
    expect(result.stdout).toContain('Status: progressing');
  });

  it('gives one clear line and a non-zero exit for bad input', async () => {
    const unknown = await status('nope');
    expect(unknown.code).toBe(3);
    expect(unknown.stdout).toBe('');
    expect(lines(unknown.stderr)).toEqual([
      `error: CloneSet "nope" not found in namespace "${ns}" (CloneSets there: big, web)`,
    ]);

    const wrongNs = await tailor('status', 'web', '-n', `${ns}-missing`, '--kubeconfig', kubeconfig);
    expect(wrongNs.code).toBe(3);
    expect(lines(wrongNs.stderr)).toEqual([
      `error: namespace "${ns}-missing" not found (pass the CloneSet's namespace with -n)`,
    ]);

    const dead = join(scratch, 'dead.kubeconfig');
    writeFileSync(
      dead,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    const noCluster = await tailor('status', 'web', '--kubeconfig', dead);
    expect(noCluster.code).toBe(3);
    expect(lines(noCluster.stderr)).toEqual([
      expect.stringMatching(/^error: cannot reach the cluster at https:\/\/127\.0\.0\.1:1: /),
    ]);

    const usage = await tailor('status');
    expect(usage.code).toBe(3);
    expect(lines(usage.stderr)).toEqual(["error: missing required argument 'clone'"]);
  });
});

describe('kubectl tailor rollout verbs', () => {
  const verb = (name: string, ...args: string[]): Promise<Run> =>
    tailor(name, ...args, '-n', ns, '--kubeconfig', kubeconfig);
  const podUids = async (name: string): Promise<string[]> =>
    (await activePods(client, ns, name)).map((p) => p.metadata?.uid ?? '').sort();
  /** The history table's rows: revision, name, status, change. */
  const rows = (text: string): string[][] =>
    lines(text)
      .slice(1)
      .map((l) => {
        const [revision = '', name = '', ...rest] = l.split(/\s{3,}/);
        return [revision, name, ...rest];
      });

  beforeAll(async () => {
    await client.create(
      cloneSetPath(ns),
      cloneSetManifest(
        'app',
        { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } },
        { containers: [container('50m')] },
      ),
    );
    await waitForReady(client, ns, 'app', 2, 120_000);
    await client.patch(
      cloneSetPath(ns, 'app'),
      { spec: { template: { spec: { containers: [container('50m', 'tailor.local/busybox:v2')] } } } },
      'merge',
    );
    expect((await status('app', '--timeout', '120s')).code).toBe(0);
  }, 300_000);

  it('history lists the revisions in order with what each changed, and prints one revision', async () => {
    const cs = await waitForCloneSet(
      client,
      ns,
      'app',
      'revisions settled',
      (c) => c.status?.currentRevision === c.status?.updateRevision,
    );
    const result = await verb('history', 'app');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(lines(result.stdout)[0]).toMatch(/^REVISION\s+NAME\s+STATUS\s+CHANGE$/);
    expect(rows(result.stdout)).toEqual([
      ['1', expect.stringMatching(/^app-\w+$/), '-', '-'],
      ['2', cs.status?.updateRevision, 'current, update', 'image main=tailor.local/busybox:v2'],
    ]);

    const one = await verb('history', 'app', '--revision', '1');
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^# clone "app" revision 1 \(app-\w+\)\n/);
    expect(one.stdout).toContain('image: tailor.local/busybox:v1');
    const json = await verb('history', 'app', '--revision', '2', '-o', 'json');
    expect((JSON.parse(json.stdout) as { spec: { containers: { image: string }[] } }).spec.containers[0]?.image).toBe(
      'tailor.local/busybox:v2',
    );

    const missing = await verb('history', 'app', '--revision', '9');
    expect(missing.code).toBe(3);
    expect(lines(missing.stderr)).toEqual(['error: clone "app" has no revision 9 (revisions: 1, 2)']);
  });

  it('undo puts the previous template back in place, reusing its revision; an unknown revision is refused', async () => {
    const before = (await verb('history', 'app')).stdout;
    const [first, second] = rows(before);
    const uids = await podUids('app');

    const refused = await verb('undo', 'app', '--to-revision', '9');
    expect(refused.code).toBe(3);
    expect(lines(refused.stderr)).toEqual([
      'error: cannot roll back clone "app": revision 9 not found (revisions: 1, 2)',
    ]);

    const result = await verb('undo', 'app');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(lines(result.stdout)).toEqual([
      `clone "app" rolled back to revision 1 (${first?.[1]}): image main=tailor.local/busybox:v1`,
      `follow it: kubectl tailor status app -n ${ns}`,
    ]);
    expect((await status('app', '--timeout', '120s')).code).toBe(0);
    expect(await podUids('app')).toEqual(uids);
    const pods = await activePods(client, ns, 'app');
    expect(pods.map((p) => p.spec?.containers[0]?.image)).toEqual([
      'tailor.local/busybox:v1',
      'tailor.local/busybox:v1',
    ]);

    // The controller reused revision 1's ControllerRevision and made it the newest: no new name.
    // Revision 2 is now the oldest listed, so nothing precedes it to diff against.
    const after = rows((await verb('history', 'app')).stdout);
    expect(after).toEqual([
      ['2', second?.[1], '-', '-'],
      ['3', first?.[1], 'current, update', 'image main=tailor.local/busybox:v1'],
    ]);

    const again = await verb('undo', 'app', '--to-revision', '3');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`clone "app" skipped rollback: its template already is revision 3 (${first?.[1]})\n`);
  });

  it('pause holds a template change back until resume; both say when there is nothing to do', async () => {
    const paused = await verb('pause', 'app');
    expect(paused).toMatchObject({ code: 0, stdout: 'clone "app" paused\n', stderr: '' });
    expect((await readCloneSet(client, ns, 'app')).spec.updateStrategy?.paused).toBe(true);
    expect((await verb('pause', 'app')).stdout).toBe('clone "app" is already paused\n');

    await patchTemplateAndWait(client, ns, 'app', {
      template: { spec: { containers: [container('50m', 'tailor.local/busybox:v2')] } },
      what: 'the paused change observed',
      until: () => true,
    });
    await new Promise((r) => setTimeout(r, 3000));
    const held = await activePods(client, ns, 'app');
    expect(held.map((p) => p.spec?.containers[0]?.image)).toEqual([
      'tailor.local/busybox:v1',
      'tailor.local/busybox:v1',
    ]);

    const resumed = await verb('resume', 'app');
    expect(resumed.code).toBe(0);
    expect(lines(resumed.stdout)).toEqual(['clone "app" resumed', `follow it: kubectl tailor status app -n ${ns}`]);
    expect((await verb('resume', 'app')).stdout).toBe('clone "app" is not paused (nothing to resume)\n');
    expect((await status('app', '--timeout', '120s')).code).toBe(0);
  });

  it('restart writes restartedAt, which the controller records as a new revision that history names', async () => {
    const before = await readCloneSet(client, ns, 'app');
    const result = await verb('restart', 'app');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const [said, next] = lines(result.stdout);
    expect(said).toMatch(
      /^clone "app" restarting: every container restarts in place, pod by pod \(restartedAt \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/,
    );
    expect(next).toBe(`follow it: kubectl tailor status app -n ${ns}`);

    const at = said?.match(/restartedAt (\S+)\)$/)?.[1];
    const cs = await waitForCloneSet(
      client,
      ns,
      'app',
      'a new update revision',
      (c) => c.status?.updateRevision !== before.status?.updateRevision,
    );
    expect(cs.spec.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']).toBe(at);

    // No node agent runs in this test: the pods may only be drained; the revision is what the verb guarantees.
    const history = rows((await verb('history', 'app')).stdout);
    expect(history.at(-1)).toEqual([
      expect.stringMatching(/^\d+$/),
      cs.status?.updateRevision,
      expect.stringMatching(/update/),
      `restart (restartedAt ${at})`,
    ]);
  });

  it('completes verbs, CloneSets and revisions through kubectl', async () => {
    if (!existsSync(join(scratch, 'kubectl_complete-tailor')))
      symlinkSync(resolve('bin/kubectl_complete-tailor'), join(scratch, 'kubectl_complete-tailor'));
    const env = { PATH: `${scratch}:${process.env.PATH}`, KUBECONFIG: kubeconfig };
    const complete = async (...words: string[]): Promise<string[]> => {
      const result = await run(kubectlBin, ['__complete', 'tailor', ...words], env);
      expect(result.code).toBe(0);
      return lines(result.stdout).map((l) => l.split('\t')[0] ?? '');
    };
    expect(await complete('re')).toEqual(['resume', 'restart', ':4']);
    expect(await complete('history', '-n', ns, '')).toEqual(['app', 'big', 'web', ':4']);
    expect(await complete('undo', 'app', '-n', ns, '--to-revision', '')).toEqual([
      expect.stringMatching(/^\d+$/),
      expect.stringMatching(/^\d+$/),
      expect.stringMatching(/^\d+$/),
      ':4',
    ]);
  });

  it('gives one clear line and exit 3 for an unknown CloneSet or namespace', async () => {
    for (const name of ['history', 'undo', 'pause', 'resume', 'restart']) {
      const unknown = await verb(name, 'nope');
      expect(unknown.code).toBe(3);
      expect(unknown.stdout).toBe('');
      expect(lines(unknown.stderr)).toEqual([
        `error: CloneSet "nope" not found in namespace "${ns}" (CloneSets there: app, big, web)`,
      ]);
    }
    const wrongNs = await tailor('pause', 'app', '-n', `${ns}-missing`, '--kubeconfig', kubeconfig);
    expect(wrongNs.code).toBe(3);
    expect(lines(wrongNs.stderr)).toEqual([
      `error: namespace "${ns}-missing" not found (pass the CloneSet's namespace with -n)`,
    ]);
  });
});

describe('kubectl tailor on an InPlaceStatefulSet (ipsts/<name>)', () => {
  const verb = (name: string, ...args: string[]): Promise<Run> =>
    tailor(name, ...args, '-n', ns, '--kubeconfig', kubeconfig);
  const set = newStatefulSet('db', 2);
  const withImage = (image: string): Record<string, unknown> => {
    const template = structuredClone(set.spec.template);
    template.spec.containers[0] = { ...template.spec.containers[0], image };
    return { spec: { template } };
  };
  const uids = async (): Promise<string[]> => (await setPods(client, ns)).map((p) => p.metadata?.uid ?? '');

  it('status, pause, resume, history and undo work on the set, in place', async () => {
    await client.create(setsPath(ns), set);
    await waitForRunningAndReady(client, ns, 2);
    expect((await status('ipsts/db', '--timeout', '120s')).code).toBe(0);
    const before = await uids();

    expect(await verb('pause', 'ipsts/db')).toMatchObject({ code: 0, stdout: 'InPlaceStatefulSet "db" paused\n' });
    expect((await readSet(client, ns, 'db')).spec.updateStrategy).toMatchObject({ rollingUpdate: { paused: true } });
    await client.patch(setsPath(ns, 'db'), withImage('tailor.local/busybox:v2'), 'merge');
    await new Promise((r) => setTimeout(r, 3000));
    for (const pod of await setPods(client, ns)) expect(pod.spec?.containers[0]?.image).toBe('tailor.local/busybox:v1');
    expect((await verb('resume', 'ipsts/db')).code).toBe(0);
    expect((await status('ipsts/db', '--timeout', '120s')).code).toBe(0);
    for (const pod of await setPods(client, ns)) expect(pod.spec?.containers[0]?.image).toBe('tailor.local/busybox:v2');

    const history = await verb('history', 'ipsts/db');
    expect(history.code).toBe(0);
    expect(lines(history.stdout)).toHaveLength(3);
    const undone = await verb('undo', 'ipsts/db');
    expect(undone.code).toBe(0);
    expect(lines(undone.stdout)[0]).toMatch(/^InPlaceStatefulSet "db" rolled back to revision 1 /);
    expect((await status('ipsts/db', '--timeout', '120s')).code).toBe(0);
    for (const pod of await setPods(client, ns)) expect(pod.spec?.containers[0]?.image).toBe('tailor.local/busybox:v1');
    expect(await uids()).toEqual(before);

    const unknown = await verb('status', 'sts/db');
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('ipsts/db for an InPlaceStatefulSet');
  }, 300_000);
});
