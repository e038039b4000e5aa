// The node agent holds no secret of its own (docs/decisions/0053-agent-reads-pull-secrets-as-its-node.md),
// against a real kube-apiserver with the Node and RBAC authorizers:
// - with the shipped config/agent/rbac.yaml applied, `kubectl auth can-i get secrets` as the
//   agent's service account answers "no", in any namespace;
// - the agent's node identity (NodeIdentityAuth: the API server and CA of the admin's kubeconfig,
//   the kubelet's client certificate) reads the pull secret of a pod bound to its node, and is
//   refused a secret no pod of its node names, and the secret of a pod bound to another node;
// - the service account reads no pod and no node: the node identity lists its node's pods, and is
//   refused the cluster's and another node's (decision 86).
// The shipped RBAC is applied under its real names (as `make dev` applies it) and removed
// afterwards only if this test created it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { NodeIdentityAuth } from '../../src/cli/kubeconfig.js';
import { isForbidden, isNotFound, KubeClient } from '../../src/runtime/kube-client.js';
import { createTestNamespace, kubeconfigPath, loadTestKubeConfig } from '../support/cluster/kube.js';
import { kubeBinary } from '../support/cluster/kube-version.js';
import { eventually } from '../support/cluster/testbed.js';
import { PKI_DIR } from '../support/cluster/bed.js';

const admin = new KubeClient(loadTestKubeConfig());
const NS = `agent-rbac-${Date.now().toString(36)}`;
const NODE = 'tailor-node';
const OTHER_NODE = 'another-node';
const AGENT = 'system:serviceaccount:tailor-system:tailor-agent';
const pki = PKI_DIR;
const scratch = mkdtempSync(join(tmpdir(), 'agent-rbac-'));

const kubectl = (args: string[]): { status: number | null; stdout: string } => {
  const run = spawnSync(kubeBinary('kubectl'), ['--kubeconfig', kubeconfigPath(), ...args], { encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout.trim() };
};

let createdRbac = false;
beforeAll(async () => {
  createdRbac = kubectl(['get', 'clusterrole', 'tailor-agent']).status !== 0;
  if (kubectl(['get', 'namespace', 'tailor-system']).status !== 0) await createTestNamespace(admin, 'tailor-system');
  const applied = kubectl(['apply', '-n', 'tailor-system', '-f', resolve(process.cwd(), 'config/agent/rbac.yaml')]);
  expect(applied.status).toBe(0);

  await createTestNamespace(admin, NS);
  const dockerConfig = Buffer.from(JSON.stringify({ auths: { 'registry.example': { auth: 'dTpw' } } })).toString(
    'base64',
  );
  for (const name of ['regcred', 'unreferenced', 'other-node-cred']) {
    await admin.create(`/api/v1/namespaces/${NS}/secrets`, {
      metadata: { name },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': dockerConfig },
    });
  }
  // Pods bound to a node at creation (no scheduler needed): the Node authorizer's graph links each
  // node to the secrets its pods name.
  const pod = (name: string, nodeName: string, secret: string): object => ({
    metadata: { name },
    spec: {
      nodeName,
      imagePullSecrets: [{ name: secret }],
      containers: [{ name: 'c', image: 'tailor.local/busybox:v1' }],
    },
  });
  await admin.create(`/api/v1/namespaces/${NS}/pods`, pod('on-node', NODE, 'regcred'));
  await admin.create(`/api/v1/namespaces/${NS}/pods`, pod('on-other-node', OTHER_NODE, 'other-node-cred'));
}, 60_000);

afterAll(async () => {
  await admin.delete(`/api/v1/namespaces/${NS}`).catch(() => undefined);
  if (createdRbac) {
    kubectl([
      'delete',
      '--ignore-not-found',
      '-n',
      'tailor-system',
      '-f',
      resolve(process.cwd(), 'config/agent/rbac.yaml'),
    ]);
  }
  admin.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the node agent's service account", () => {
  it.each(['kube-system', 'tailor-system', NS])(
    'may not get secrets in %s (kubectl auth can-i answers no)',
    (namespace) => {
      const answer = kubectl(['auth', 'can-i', 'get', 'secrets', '-n', namespace, `--as=${AGENT}`]);
      expect(answer.stdout).toBe('no');
    },
  );

  it('may not list or watch secrets cluster-wide', () => {
    for (const verb of ['list', 'watch']) {
      expect(kubectl(['auth', 'can-i', verb, 'secrets', '--all-namespaces', `--as=${AGENT}`]).stdout).toBe('no');
    }
  });

  it.each(['list', 'watch', 'get'])(
    "may not %s pods or nodes: it reads its node's as the node (decision 86)",
    (verb) => {
      expect(kubectl(['auth', 'can-i', verb, 'pods', '--all-namespaces', `--as=${AGENT}`]).stdout).toBe('no');
      expect(kubectl(['auth', 'can-i', verb, 'nodes', `--as=${AGENT}`]).stdout).toBe('no');
    },
  );

  it('still holds what it uses: it may patch pods and nodes (each narrowed by the admission policies)', () => {
    expect(kubectl(['auth', 'can-i', 'patch', 'pods', '--all-namespaces', `--as=${AGENT}`]).stdout).toBe('yes');
    expect(kubectl(['auth', 'can-i', 'patch', 'nodes', `--as=${AGENT}`]).stdout).toBe('yes');
  });
});

describe("the agent's node identity (the kubelet's certificate, judged by the Node authorizer)", () => {
  const pem = join(scratch, 'kubelet-client-current.pem');
  let asNode: KubeClient;
  beforeAll(() => {
    const [crt, key] = ['crt', 'key'].map((ext) => readFileSync(join(pki, `kubelet-client-${NODE}.${ext}`), 'utf8'));
    writeFileSync(pem, `${crt}${key}`, {
      mode: 0o600,
    });
    asNode = new KubeClient(new NodeIdentityAuth(loadTestKubeConfig(), pem));
  });
  afterAll(() => asNode.close());

  const secret = (name: string): Promise<unknown> => asNode.get(`/api/v1/namespaces/${NS}/secrets/${name}`);

  it('reads the pull secret a pod bound to its node names', async () => {
    // The authorizer's graph follows the pod's creation within moments.
    const read = await eventually(
      'the node to read regcred',
      () =>
        secret('regcred').catch((err: unknown) => {
          if (!isForbidden(err)) throw err;
          return undefined;
        }),
      10_000,
    );
    expect(read).toMatchObject({ metadata: { name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson' });
  });

  it("lists the pods bound to its node, as the agent's informer does (fieldSelector spec.nodeName)", async () => {
    const list = await asNode.list<{ metadata?: { name?: string; namespace?: string } }>('/api/v1/pods', {
      fieldSelector: `spec.nodeName=${NODE}`,
    });
    expect(list.items.filter((p) => p.metadata?.namespace === NS).map((p) => p.metadata?.name)).toEqual(['on-node']);
  });

  it("is refused every pod of the cluster, and another node's pods", async () => {
    for (const fieldSelector of [undefined, `spec.nodeName=${OTHER_NODE}`]) {
      const err = await asNode.list('/api/v1/pods', fieldSelector ? { fieldSelector } : {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isForbidden(err)).toBe(true);
    }
  });

  it.each([
    ['a secret no pod names', 'unreferenced'],
    ['the secret of a pod bound to another node', 'other-node-cred'],
    ['a secret in kube-system', 'anything'],
  ])('is refused %s', async (_what, name) => {
    const path =
      name === 'anything'
        ? '/api/v1/namespaces/kube-system/secrets/anything'
        : `/api/v1/namespaces/${NS}/secrets/${name}`;
    const err = await asNode.get(path).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isForbidden(err)).toBe(true);
    expect(isNotFound(err)).toBe(false);
  });
});
