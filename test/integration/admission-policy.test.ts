// The admission policy of config/policy against a real kube-apiserver: only Tailor's controller
// may write apps.tailor.dev/resize-request and inplace-update-state, only Tailor's node agent
// resize-status, and the agent only on pods bound to its own node (the node-name claim of its
// token). Users are impersonated (Impersonate-User / Impersonate-Extra-*); each holds only pod
// get/list/patch in this test's namespace. The shipped policy is installed under a name of this
// test's own, bound to this namespace only, so other tests (whose controllers run as cluster
// admin, exempt by the policy) and a `make dev` install on the same cluster are not disturbed.
// The CRD half: a CloneSet template cannot carry apps.tailor.dev/ annotations.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import { load } from 'js-yaml';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { resolve } from 'node:path';
import { KubeClient } from '../../src/runtime/kube-client.js';
import { ensureCrd } from '../support/crd.js';
import { createTestNamespace, loadTestKubeConfig } from '../support/kube.js';
import { grantPodPatch } from '../support/rbac.js';
import { eventually } from '../support/testbed.js';

const NS = `tailor-admission-${Date.now().toString(36)}`;
const POLICY = `tailor-pod-annotations-${NS}`;
const CONTROLLER = 'system:serviceaccount:tailor-system:tailor-controller';
const AGENT = 'system:serviceaccount:tailor-system:tailor-agent';
const EDITOR = 'pod-editor';
const NODE_CLAIM = 'authentication.kubernetes.io/node-name';
const REQUEST = 'apps.tailor.dev/resize-request';
const STATUS = 'apps.tailor.dev/resize-status';
const STATE = 'apps.tailor.dev/inplace-update-state';

const kc: k8s.KubeConfig = loadTestKubeConfig();
const admin = new KubeClient(kc);

interface As {
  readonly user: string;
  readonly node?: string;
}
interface Answer {
  readonly code: number;
  readonly message: string;
}

/** A merge patch of the pod's annotations sent as `as` (impersonated by the test bed's admin). */
async function annotate(as: As, pod: string, annotations: Record<string, string | null>): Promise<Answer> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const server = new URL(kc.getCurrentCluster()?.server ?? '');
  const body = Buffer.from(JSON.stringify({ metadata: { annotations } }));
  const headers: Record<string, string> = {
    'Content-Type': 'application/merge-patch+json',
    'Content-Length': String(body.length),
    Accept: 'application/json',
    'Impersonate-User': as.user,
  };
  if (as.node !== undefined) headers[`Impersonate-Extra-${encodeURIComponent(NODE_CLAIM)}`] = as.node;
  return new Promise<Answer>((done, fail) => {
    const req = https.request(
      {
        ...opts,
        host: server.hostname,
        port: server.port,
        method: 'PATCH',
        path: `/api/v1/namespaces/${NS}/pods/${pod}`,
        headers: { ...(opts.headers ?? {}), ...headers },
        timeout: 15_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let message = text;
          try {
            const parsed = (JSON.parse(text) as { message?: unknown }).message;
            message = typeof parsed === 'string' ? parsed : '';
          } catch {
            // not a Status: keep the text
          }
          done({ code: res.statusCode ?? 0, message });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('PATCH timed out')));
    req.on('error', (err) => fail(new Error(`PATCH pod ${pod} as ${as.user}`, { cause: err })));
    req.end(body);
  });
}

const pod = (name: string, node: string): object => ({
  metadata: { name },
  spec: { nodeName: node, containers: [{ name: 'app', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never' }] },
});

beforeAll(async () => {
  await createTestNamespace(admin, NS);
  // Pod get/list/patch in this namespace, and nothing else, for the editor and both Tailor accounts.
  await grantPodPatch(admin, NS, [
    { kind: 'User', name: EDITOR },
    { kind: 'ServiceAccount', name: 'tailor-controller', namespace: 'tailor-system' },
    { kind: 'ServiceAccount', name: 'tailor-agent', namespace: 'tailor-system' },
  ]);
  await admin.create(`/api/v1/namespaces/${NS}/pods`, pod('on-a', 'node-a'));
  await admin.create(`/api/v1/namespaces/${NS}/pods`, pod('on-b', 'node-b'));

  // The shipped policy, renamed, and a binding limited to this namespace.
  const policy = load(readFileSync(resolve(process.cwd(), 'config/policy/policy.yaml'), 'utf8')) as { metadata: { name: string } };
  const binding = load(readFileSync(resolve(process.cwd(), 'config/policy/binding.yaml'), 'utf8')) as {
    metadata: { name: string };
    spec: Record<string, unknown>;
  };
  policy.metadata.name = POLICY;
  binding.metadata.name = POLICY;
  binding.spec['policyName'] = POLICY;
  binding.spec['matchResources'] = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } } };
  await admin.create('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', policy);
  await admin.create('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', binding);
  // The API server compiles and enforces the policy shortly after it is stored: probe with a new
  // value each time (setting an unchanged value is no change), then clear what got through.
  let probe = 0;
  await eventually(
    'the policy is enforced',
    async () => ((await annotate({ user: EDITOR }, 'on-b', { [REQUEST]: `probe-${probe++}` })).code === 403 ? true : undefined),
    30_000,
  );
  await admin.patch(`/api/v1/namespaces/${NS}/pods/on-b`, { metadata: { annotations: { [REQUEST]: null } } }, 'merge');
  await ensureCrd(admin);
}, 90_000);

afterAll(async () => {
  await admin.delete(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${POLICY}`).catch(() => undefined);
  await admin.delete(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${POLICY}`).catch(() => undefined);
  await admin.delete(`/api/v1/namespaces/${NS}`).catch(() => undefined);
}, 30_000);

const annotations = async (name: string): Promise<Record<string, string>> =>
  (await admin.get<{ metadata?: { annotations?: Record<string, string> } }>(`/api/v1/namespaces/${NS}/pods/${name}`)).metadata
    ?.annotations ?? {};

describe('the admission policy for Tailor pod annotations', () => {
  it('compiles without type errors', async () => {
    const got = await admin.get<{ status?: { typeChecking?: { expressionWarnings?: unknown[] } } }>(
      `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${POLICY}`,
    );
    expect(got.status?.typeChecking?.expressionWarnings ?? []).toEqual([]);
  });

  it.each([
    [
      REQUEST,
      /apps\.tailor\.dev\/resize-request may be set, changed or removed only by Tailor's controller \(system:serviceaccount:tailor-system:tailor-controller\)/,
    ],
    [
      STATUS,
      /apps\.tailor\.dev\/resize-status may be set or changed only by Tailor's node agent \(system:serviceaccount:tailor-system:tailor-agent\)/,
    ],
    [STATE, /apps\.tailor\.dev\/inplace-update-state may be set, changed or removed only by Tailor's controller/],
  ])('refuses %s from a user who may patch pods, naming the annotation and who may write it', async (annotation, message) => {
    const answer = await annotate({ user: EDITOR }, 'on-a', {
      [annotation]: '{"revision":"forged","state":"","since":"2026-01-01T00:00:00Z","applied":{}}',
    });
    expect(answer.code).toBe(403);
    expect(answer.message).toMatch(message);
    expect(answer.message).toMatch(/ValidatingAdmissionPolicy/);
    expect(await annotations('on-a')).not.toHaveProperty(annotation);
  });

  it('lets the same user change other annotations', async () => {
    expect((await annotate({ user: EDITOR }, 'on-a', { 'example.com/note': 'hello' })).code).toBe(200);
    expect(await annotations('on-a')).toMatchObject({ 'example.com/note': 'hello' });
  });

  it("lets the controller's service account set resize-request and inplace-update-state", async () => {
    const answer = await annotate({ user: CONTROLLER }, 'on-a', { [REQUEST]: '{"revision":"r2"}', [STATE]: '{"revision":"r2"}' });
    expect(answer).toMatchObject({ code: 200 });
    expect(await annotations('on-a')).toMatchObject({ [REQUEST]: '{"revision":"r2"}', [STATE]: '{"revision":"r2"}' });
  });

  it("lets the agent's service account set resize-status on a pod bound to its own node", async () => {
    const answer = await annotate({ user: AGENT, node: 'node-a' }, 'on-a', { [STATUS]: '{"revision":"r2"}' });
    expect(answer).toMatchObject({ code: 200 });
    expect(await annotations('on-a')).toMatchObject({ [STATUS]: '{"revision":"r2"}' });
  });

  it('refuses the agent writing a pod bound to another node, naming both nodes', async () => {
    const answer = await annotate({ user: AGENT, node: 'node-a' }, 'on-b', { [STATUS]: '{"revision":"r2"}' });
    expect(answer.code).toBe(403);
    expect(answer.message).toMatch(
      /node agent may write only pods bound to its own node: its token names node node-a, the pod is bound to node-b/,
    );
    expect(await annotations('on-b')).not.toHaveProperty(STATUS);
  });

  it('refuses the agent when its token carries no node claim', async () => {
    const answer = await annotate({ user: AGENT }, 'on-a', { [STATUS]: '{"revision":"r3"}' });
    expect(answer.code).toBe(403);
    expect(answer.message).toMatch(/its token names node \(none\)/);
  });

  it("refuses each Tailor account the other one's annotation", async () => {
    expect((await annotate({ user: AGENT, node: 'node-a' }, 'on-a', { [REQUEST]: '{"revision":"r9"}' })).code).toBe(403);
    expect((await annotate({ user: CONTROLLER }, 'on-a', { [STATUS]: '{"revision":"r9"}' })).code).toBe(403);
  });

  it('lets the controller remove resize-status together with a stale request', async () => {
    const answer = await annotate({ user: CONTROLLER }, 'on-a', { [REQUEST]: null, [STATUS]: null });
    expect(answer).toMatchObject({ code: 200 });
    const now = await annotations('on-a');
    expect(now).not.toHaveProperty(REQUEST);
    expect(now).not.toHaveProperty(STATUS);
  });
});

describe('the CloneSet CRD', () => {
  it('refuses apps.tailor.dev/ annotations in the pod template, so a template cannot smuggle them into pods', async () => {
    const cs = {
      apiVersion: 'apps.tailor.dev/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'smuggler' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'smuggler' } },
        template: {
          metadata: { labels: { app: 'smuggler' }, annotations: { [REQUEST]: '{"revision":"x","containers":{"app":{}}}' } },
          spec: { containers: [{ name: 'app', image: 'tailor.local/busybox:v1' }] },
        },
      },
    };
    const err = await admin.create(`/apis/apps.tailor.dev/v1alpha1/namespaces/${NS}/clonesets`, cs).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/annotations under apps\.tailor\.dev\/ are Tailor's own/);
    const ok = {
      ...cs,
      metadata: { name: 'plain' },
      spec: {
        ...cs.spec,
        template: { ...cs.spec.template, metadata: { labels: { app: 'smuggler' }, annotations: { 'example.com/a': 'b' } } },
      },
    };
    await expect(admin.create(`/apis/apps.tailor.dev/v1alpha1/namespaces/${NS}/clonesets`, ok)).resolves.toBeDefined();
  });
});
