// The node agent refuses to run where the API server does not enforce Tailor's admission
// policies (config/policy), unless the operator allows it. Against a real kube-apiserver:
// - the check itself reads the policies and bindings by name: under names of this test's own, it
//   finds them missing, then enforced once the shipped ones are installed under those names, and
//   it names a binding weakened to Warn;
// - the real `tailor agent` process (dist/) exits non-zero naming the missing policy before it
//   touches the container runtime; with --allow-missing-admission-policy it goes on (and stops at
//   the runtime this tier does not have); with the shipped policies installed it passes the check.
// The shipped policies are installed under their real names only when absent (as `make dev`
// installs them; exempting system:masters, so the other tests' controllers are not affected) and
// removed afterwards only if this test created them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadAll } from 'js-yaml';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { policyProblems, readPolicies, REQUIRED_POLICIES } from '../../src/agent/policy-check.js';
import { isNotFound, KubeClient } from '../../src/runtime/kube-client.js';
import { kubeconfigPath, loadTestKubeConfig } from '../support/cluster/kube.js';

const API = '/apis/admissionregistration.k8s.io/v1';
const SUFFIX = `-check-${Date.now().toString(36)}`;
const client = new KubeClient(loadTestKubeConfig());

interface Named {
  metadata: { name: string };
  spec: Record<string, unknown>;
}
const documents = (file: string): Named[] =>
  loadAll(readFileSync(resolve(process.cwd(), 'config/policy', file), 'utf8')) as Named[];

/** Creates the shipped policies and bindings with `suffix` after each name; returns what it created, for deletion. */
async function install(suffix: string): Promise<string[]> {
  const created: string[] = [];
  for (const policy of documents('policy.yaml')) {
    policy.metadata.name += suffix;
    await client.create(`${API}/validatingadmissionpolicies`, policy);
    created.push(`${API}/validatingadmissionpolicies/${policy.metadata.name}`);
  }
  for (const binding of documents('binding.yaml')) {
    binding.metadata.name += suffix;
    binding.spec['policyName'] = `${String(binding.spec['policyName'])}${suffix}`;
    await client.create(`${API}/validatingadmissionpolicybindings`, binding);
    created.push(`${API}/validatingadmissionpolicybindings/${binding.metadata.name}`);
  }
  return created;
}

const toDelete: string[] = [];
afterAll(async () => {
  for (const path of toDelete.reverse()) await client.delete(path).catch(() => undefined);
  client.close();
}, 30_000);

const suffixed = REQUIRED_POLICIES.map((p) => ({
  ...p,
  policy: `${p.policy}${SUFFIX}`,
  binding: `${p.binding}${SUFFIX}`,
}));

describe('the admission policy check', () => {
  it('finds policies that do not exist missing, naming each', async () => {
    const problems = policyProblems(await readPolicies(client, suffixed));
    expect(problems).toContain(`ValidatingAdmissionPolicy tailor-pod-annotations${SUFFIX} does not exist`);
    expect(problems).toContain(
      `ValidatingAdmissionPolicyBinding tailor-pod-bindings${SUFFIX} does not exist, so tailor-pod-bindings${SUFFIX} is not enforced`,
    );
  });

  it('finds the shipped policies enforced once installed', async () => {
    toDelete.push(...(await install(SUFFIX)));
    expect(policyProblems(await readPolicies(client, suffixed))).toEqual([]);
  });

  it('names a binding that only warns', async () => {
    const path = `${API}/validatingadmissionpolicybindings/tailor-pod-bindings${SUFFIX}`;
    await client.patch(path, { spec: { validationActions: ['Warn'] } }, 'merge');
    expect(policyProblems(await readPolicies(client, suffixed))).toEqual([
      `ValidatingAdmissionPolicyBinding tailor-pod-bindings${SUFFIX} does not deny (validationActions: Warn)`,
    ]);
  });
});

/** Runs `tailor agent` against this cluster and a runtime socket that does not exist. */
function runAgent(...extra: string[]): { status: number | null; output: string } {
  const result = spawnSync(
    process.execPath,
    [
      'dist/cli/main.js',
      'agent',
      '--node-name=policy-check-node',
      `--kubeconfig=${kubeconfigPath()}`,
      '--cri-endpoint=unix:///run/tailor/no-such-runtime.sock',
      '--metrics-bind-address=0',
      '--health-probe-bind-address=0',
      ...extra,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('tailor agent at start', () => {
  let installedHere = false;
  beforeAll(async () => {
    const present = await client.get(`${API}/validatingadmissionpolicies/${REQUIRED_POLICIES[0]?.policy ?? ''}`).then(
      () => true,
      (err: unknown) => {
        if (isNotFound(err)) return false;
        throw err;
      },
    );
    installedHere = !present;
  });

  it('refuses to start without the policies, naming them, before it touches the runtime', () => {
    if (!installedHere) return; // a `make dev` install on this cluster already has them: the next test covers it
    const run = runAgent();
    expect(run.status).toBe(1);
    expect(run.output).toMatch(
      /tailor: Tailor's admission policies are not enforced: ValidatingAdmissionPolicy tailor-pod-annotations does not exist;.*--allow-missing-admission-policy/,
    );
    expect(run.output).not.toMatch(/container runtime/);
  }, 90_000);

  it('starts without them when the operator allows it, reporting them missing', () => {
    if (!installedHere) return;
    const run = runAgent('--allow-missing-admission-policy');
    expect(run.output).toMatch(/admission policies are not enforced/);
    expect(run.output).toMatch(/cannot reach the container runtime at unix:\/\/\/run\/tailor\/no-such-runtime\.sock/);
  }, 90_000);

  it('passes the check once the policies are installed', async () => {
    if (installedHere) toDelete.push(...(await install('')));
    const run = runAgent();
    expect(run.output).toMatch(/Tailor's admission policies are enforced/);
    expect(run.output).toMatch(/cannot reach the container runtime/);
  }, 90_000);
});
