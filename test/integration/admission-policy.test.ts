// The admission policy of config/policy against a real kube-apiserver: only Tailor's controller
// may write apps.tailor.dev/resize-request and inplace-update-state, only Tailor's node agent
// resize-status, and the agent only on pods bound to its own node (the node-name claim of its
// token), where it may change nothing of the pod but resize-status; a binding (pods/binding or
// bindings), which copies its annotations onto the pod, may carry none of Tailor's, and the agent
// may not bind. Users are impersonated (Impersonate-User / Impersonate-Extra-*); each holds only pod
// get/list/patch in this test's namespace (and may bind its pods). The shipped policies are
// installed under names of this test's own, bound to this namespace only, so other tests (whose controllers run as cluster
// admin, exempt by the policy) and a `make dev` install on the same cluster are not disturbed.
// The CRD half: a CloneSet template cannot carry apps.tailor.dev/ annotations.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { resolve } from 'node:path';
import { KubeClient } from '../../src/runtime/kube-client.js';
import { ensureCrd } from '../support/cluster/crd.js';
import { createTestNamespace, loadTestKubeConfig } from '../support/cluster/kube.js';
import { grantPodPatch } from '../support/cluster/rbac.js';
import { eventually } from '../support/cluster/testbed.js';

const NS = `tailor-admission-${Date.now().toString(36)}`;
const SUFFIX = `-${NS}`;
const CONTROLLER = 'system:serviceaccount:tailor-system:tailor-controller';
const AGENT = 'system:serviceaccount:tailor-system:tailor-agent';
const EDITOR = 'pod-editor';
const NODE_CLAIM = 'authentication.kubernetes.io/node-name';
const REQUEST = 'apps.tailor.dev/resize-request';
const STATUS = 'apps.tailor.dev/resize-status';
const STATE = 'apps.tailor.dev/inplace-update-state';
const RESTART = 'apps.tailor.dev/restart-request';

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

/** A request sent as `as` (impersonated by the test bed's admin); the answer's code and message. */
async function send(
  as: As,
  method: 'PATCH' | 'POST',
  path: string,
  payload: object,
  contentType: string,
): Promise<Answer> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const server = new URL(kc.getCurrentCluster()?.server ?? '');
  const body = Buffer.from(JSON.stringify(payload));
  const headers: Record<string, string> = {
    'Content-Type': contentType,
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
        method,
        path,
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
    req.on('timeout', () => req.destroy(new Error(`${method} timed out`)));
    req.on('error', (err) => fail(new Error(`${method} ${path} as ${as.user}`, { cause: err })));
    req.end(body);
  });
}

/** A patch of the pod sent as `as` (a merge patch unless told). */
const patchPod = (as: As, pod: string, patch: object, type: 'merge' | 'strategic-merge' = 'merge'): Promise<Answer> =>
  send(as, 'PATCH', `/api/v1/namespaces/${NS}/pods/${pod}`, patch, `application/${type}-patch+json`);

/** A merge patch of the pod's annotations sent as `as`. */
const annotate = (as: As, pod: string, annotations: Record<string, string | null>): Promise<Answer> =>
  patchPod(as, pod, { metadata: { annotations } });

/** Binds `pod` to `node` as `as`, through pods/binding or the bindings resource, with these annotations on the Binding. */
const bind = (
  as: As,
  via: 'pods/binding' | 'bindings',
  pod: string,
  node: string,
  annotations: Record<string, string> = {},
): Promise<Answer> =>
  send(
    as,
    'POST',
    via === 'pods/binding' ? `/api/v1/namespaces/${NS}/pods/${pod}/binding` : `/api/v1/namespaces/${NS}/bindings`,
    {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: pod, annotations },
      target: { apiVersion: 'v1', kind: 'Node', name: node },
    },
    'application/json',
  );

const pod = (name: string, node?: string): object => ({
  metadata: { name, labels: { app: 'web' } },
  spec: {
    ...(node === undefined ? {} : { nodeName: node }),
    containers: [{ name: 'app', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never' }],
  },
});

interface Named {
  metadata: { name: string };
  spec: Record<string, unknown>;
}
/** Every document of a file under config/policy. */
const policyDocuments = (file: string): Named[] =>
  loadAll(readFileSync(resolve(process.cwd(), 'config/policy', file), 'utf8')) as Named[];

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

  // Pending pods, and the right to bind pods in this namespace for the editor and the agent.
  for (const name of ['pending-1', 'pending-2', 'pending-3', 'pending-4'])
    await admin.create(`/api/v1/namespaces/${NS}/pods`, pod(name));
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
    metadata: { name: 'pod-bind' },
    rules: [{ apiGroups: [''], resources: ['pods/binding', 'bindings'], verbs: ['create'] }],
  });
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    metadata: { name: 'pod-bind' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-bind' },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: EDITOR },
      { kind: 'ServiceAccount', name: 'tailor-agent', namespace: 'tailor-system' },
    ],
  });

  // Two Nodes, and node patch for the editor, the agent and the controller (the policy narrows Tailor's).
  for (const node of [NODE_A, NODE_B])
    await admin.create('/api/v1/nodes', { metadata: { name: node, labels: { zone: 'z1' } } });
  await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    metadata: { name: `node-patch${SUFFIX}` },
    rules: [{ apiGroups: [''], resources: ['nodes', 'nodes/status'], verbs: ['get', 'patch'] }],
  });
  await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: `node-patch${SUFFIX}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `node-patch${SUFFIX}` },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: EDITOR },
      { kind: 'ServiceAccount', name: 'tailor-agent', namespace: 'tailor-system' },
      { kind: 'ServiceAccount', name: 'tailor-controller', namespace: 'tailor-system' },
    ],
  });

  // The shipped policies, renamed, and their bindings limited to this namespace (a cluster-scoped
  // Node is matched whatever the namespace selector).
  for (const policy of policyDocuments('policy.yaml')) {
    policy.metadata.name += SUFFIX;
    await admin.create('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', policy);
  }
  for (const binding of policyDocuments('binding.yaml')) {
    binding.metadata.name += SUFFIX;
    binding.spec['policyName'] = `${String(binding.spec['policyName'])}${SUFFIX}`;
    binding.spec['matchResources'] = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } } };
    await admin.create('/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', binding);
  }
  // The API server compiles and enforces the policy shortly after it is stored: probe with a new
  // value each time (setting an unchanged value is no change), then clear what got through.
  let probe = 0;
  await eventually(
    'the policy is enforced',
    async () =>
      (await annotate({ user: EDITOR }, 'on-b', { [REQUEST]: `probe-${probe++}` })).code === 403 ? true : undefined,
    30_000,
  );
  await admin.patch(`/api/v1/namespaces/${NS}/pods/on-b`, { metadata: { annotations: { [REQUEST]: null } } }, 'merge');
  await eventually(
    'the binding policy is enforced',
    async () =>
      (await bind({ user: AGENT, node: 'node-a' }, 'pods/binding', 'no-such-pod', 'node-a')).code === 403
        ? true
        : undefined,
    30_000,
  );
  await ensureCrd(admin);
}, 90_000);

afterAll(async () => {
  for (const name of ['tailor-pod-annotations', 'tailor-pod-bindings', 'tailor-node-annotations']) {
    await admin
      .delete(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${name}${SUFFIX}`)
      .catch(() => undefined);
    await admin
      .delete(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${name}${SUFFIX}`)
      .catch(() => undefined);
  }
  for (const node of [NODE_A, NODE_B]) await admin.delete(`/api/v1/nodes/${node}`).catch(() => undefined);
  await admin
    .delete(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/node-patch${SUFFIX}`)
    .catch(() => undefined);
  await admin.delete(`/apis/rbac.authorization.k8s.io/v1/clusterroles/node-patch${SUFFIX}`).catch(() => undefined);
  await admin.delete(`/api/v1/namespaces/${NS}`).catch(() => undefined);
}, 30_000);

/** Nodes of this test alone (API objects; no kubelet behind them). */
const NODE_A = `a${SUFFIX}`.slice(0, 63);
const NODE_B = `b${SUFFIX}`.slice(0, 63);
const PULLED = 'apps.tailor.dev/pulled-images';
const patchNode = (as: As, node: string, patch: object): Promise<Answer> =>
  send(as, 'PATCH', `/api/v1/nodes/${node}`, patch, 'application/merge-patch+json');

const annotations = async (name: string): Promise<Record<string, string>> =>
  (await admin.get<{ metadata?: { annotations?: Record<string, string> } }>(`/api/v1/namespaces/${NS}/pods/${name}`))
    .metadata?.annotations ?? {};

describe('the admission policy for Tailor pod annotations', () => {
  // The type check is reported by kube-controller-manager's policy status controller: on the
  // control-plane test bed (no controller-manager) the status stays empty and this only shows the
  // API server accepted both policies; on a full cluster it compares the warnings too.
  it.each(['tailor-pod-annotations', 'tailor-pod-bindings', 'tailor-node-annotations'])(
    '%s is accepted and has no type-check warnings',
    async (name) => {
      const got = await admin.get<{ status?: { typeChecking?: { expressionWarnings?: unknown[] } } }>(
        `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${name}${SUFFIX}`,
      );
      expect(got.status?.typeChecking?.expressionWarnings ?? []).toEqual([]);
    },
  );

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
    [RESTART, /apps\.tailor\.dev\/restart-request may be set, changed or removed only by Tailor's controller/],
  ])(
    'refuses %s from a user who may patch pods, naming the annotation and who may write it',
    async (annotation, message) => {
      const answer = await annotate({ user: EDITOR }, 'on-a', {
        [annotation]: '{"revision":"forged","state":"","since":"2026-01-01T00:00:00Z","applied":{}}',
      });
      expect(answer.code).toBe(403);
      expect(answer.message).toMatch(message);
      expect(answer.message).toMatch(/ValidatingAdmissionPolicy/);
      expect(await annotations('on-a')).not.toHaveProperty(annotation);
    },
  );

  it('lets the same user change other annotations', async () => {
    expect((await annotate({ user: EDITOR }, 'on-a', { 'example.com/note': 'hello' })).code).toBe(200);
    expect(await annotations('on-a')).toMatchObject({ 'example.com/note': 'hello' });
  });

  it("lets the controller's service account set resize-request, inplace-update-state and restart-request", async () => {
    const answer = await annotate({ user: CONTROLLER }, 'on-a', {
      [REQUEST]: '{"revision":"r2"}',
      [STATE]: '{"revision":"r2"}',
      [RESTART]: '{"revision":"r2","containers":{}}',
    });
    expect(answer).toMatchObject({ code: 200 });
    expect(await annotations('on-a')).toMatchObject({
      [REQUEST]: '{"revision":"r2"}',
      [STATE]: '{"revision":"r2"}',
      [RESTART]: '{"revision":"r2","containers":{}}',
    });
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
    expect((await annotate({ user: AGENT, node: 'node-a' }, 'on-a', { [REQUEST]: '{"revision":"r9"}' })).code).toBe(
      403,
    );
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

describe('the node agent is fenced to its one annotation', () => {
  const agentOnA = { user: AGENT, node: 'node-a' };
  const FENCE =
    /node agent \(system:serviceaccount:tailor-system:tailor-agent\) may change only the annotation apps\.tailor\.dev\/resize-status/;

  it.each<[string, object]>([
    ['a label', { metadata: { labels: { app: 'stolen' } } }],
    ['a new label', { metadata: { labels: { extra: 'x' } } }],
    ['another annotation', { metadata: { annotations: { 'example.com/note': 'agent was here' } } }],
    [
      'another annotation together with resize-status',
      { metadata: { annotations: { [STATUS]: '{"revision":"r5"}', 'example.com/x': 'y' } } },
    ],
    ['the image', { spec: { containers: [{ name: 'app', image: 'tailor.local/busybox:v2' }] } }],
    [
      'the owner references',
      {
        metadata: {
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: '00000000-0000-0000-0000-000000000001' },
          ],
        },
      },
    ],
    ['the finalizers', { metadata: { finalizers: ['example.com/hold'] } }],
  ])('refuses the agent changing %s of a pod on its own node, and the pod stays as it was', async (_, patch) => {
    const before = await admin.get<{ metadata?: object; spec?: object }>(`/api/v1/namespaces/${NS}/pods/on-a`);
    // Strategic merge: the image patch merges into the containers by name, so only the image changes.
    const answer = await patchPod(agentOnA, 'on-a', patch, 'strategic-merge');
    expect(answer.code).toBe(403);
    expect(answer.message).toMatch(FENCE);
    const after = await admin.get<{ metadata?: { resourceVersion?: string }; spec?: object }>(
      `/api/v1/namespaces/${NS}/pods/on-a`,
    );
    expect(after.metadata?.resourceVersion).toBe((before.metadata as { resourceVersion?: string }).resourceVersion);
    expect(after.spec).toEqual(before.spec);
  });

  it('still lets the agent change resize-status alone, and remove it', async () => {
    expect(await annotate(agentOnA, 'on-a', { [STATUS]: '{"revision":"r6"}' })).toMatchObject({ code: 200 });
    expect(await annotations('on-a')).toMatchObject({ [STATUS]: '{"revision":"r6"}' });
    expect(await annotate(agentOnA, 'on-a', { [STATUS]: null })).toMatchObject({ code: 200 });
    expect(await annotations('on-a')).not.toHaveProperty(STATUS);
  });

  it("leaves a pod editor free to change labels and images (only Tailor's accounts are fenced)", async () => {
    expect((await patchPod({ user: EDITOR }, 'on-a', { metadata: { labels: { tier: 'front' } } })).code).toBe(200);
  });
});

describe("the node agent's image pre-pull report on its Node", () => {
  const agentOnA = { user: AGENT, node: NODE_A };
  const report = (n: number): string =>
    JSON.stringify({ [`img:v${n}`]: { state: 'Pulled', since: '2026-01-01T00:00:00Z' } });
  const nodeAnnotations = async (node: string): Promise<Record<string, string>> =>
    (await admin.get<{ metadata?: { annotations?: Record<string, string> } }>(`/api/v1/nodes/${node}`)).metadata
      ?.annotations ?? {};

  it('lets the agent set, change and remove the report on its own Node', async () => {
    // The policy is compiled a moment after it is stored: the first write may come before it.
    let n = 0;
    await eventually(
      'the node policy is enforced',
      async () =>
        (await patchNode({ user: EDITOR }, NODE_B, { metadata: { annotations: { [PULLED]: report(n++) } } })).code ===
        403
          ? true
          : undefined,
      30_000,
    );
    expect(await patchNode(agentOnA, NODE_A, { metadata: { annotations: { [PULLED]: report(1) } } })).toMatchObject({
      code: 200,
    });
    expect(await nodeAnnotations(NODE_A)).toMatchObject({ [PULLED]: report(1) });
    expect(await patchNode(agentOnA, NODE_A, { metadata: { annotations: { [PULLED]: null } } })).toMatchObject({
      code: 200,
    });
    expect(await nodeAnnotations(NODE_A)).not.toHaveProperty(PULLED);
  });

  const OWN_NODE_ONLY =
    /node agent may change only the annotation apps\.tailor\.dev\/pulled-images, and only on the\s+Node it runs on/;
  it.each<[string, As, string, object, RegExp]>([
    [
      'the report on another Node',
      agentOnA,
      NODE_B,
      { metadata: { annotations: { [PULLED]: report(2) } } },
      OWN_NODE_ONLY,
    ],
    [
      'the report with a token that names no node',
      { user: AGENT },
      NODE_A,
      { metadata: { annotations: { [PULLED]: report(3) } } },
      OWN_NODE_ONLY,
    ],
    ['a label of its own Node', agentOnA, NODE_A, { metadata: { labels: { zone: 'stolen' } } }, OWN_NODE_ONLY],
    [
      'the taints of its own Node',
      agentOnA,
      NODE_A,
      { spec: { taints: [{ key: 'x', effect: 'NoSchedule' }] } },
      OWN_NODE_ONLY,
    ],
    [
      'another annotation with the report',
      agentOnA,
      NODE_A,
      { metadata: { annotations: { [PULLED]: report(4), 'example.com/x': 'y' } } },
      OWN_NODE_ONLY,
    ],
    [
      'the report, as anyone but the agent',
      { user: EDITOR },
      NODE_A,
      { metadata: { annotations: { [PULLED]: report(5) } } },
      /apps\.tailor\.dev\/pulled-images may be set, changed or removed only by Tailor's node\s+agent/,
    ],
  ])('refuses %s', async (_, as, node, patch, message) => {
    const answer = await patchNode(as, node, patch);
    expect(answer.code).toBe(403);
    expect(answer.message).toMatch(message);
  });

  // Issue 31.7: the status subresource keeps metadata changes, so it is fenced too.
  it('refuses the report forged or removed through nodes/status, and leaves status writes alone', async () => {
    const viaStatus = (as: As, patch: object): Promise<Answer> =>
      send(as, 'PATCH', `/api/v1/nodes/${NODE_A}/status`, patch, 'application/merge-patch+json');
    const forged = await viaStatus({ user: EDITOR }, { metadata: { annotations: { [PULLED]: report(6) } } });
    expect(forged.code).toBe(403);
    expect(forged.message).toMatch(
      /apps\.tailor\.dev\/pulled-images may be set, changed or removed only by Tailor's node\s+agent/,
    );
    expect(await patchNode(agentOnA, NODE_A, { metadata: { annotations: { [PULLED]: report(7) } } })).toMatchObject({
      code: 200,
    });
    expect((await viaStatus({ user: EDITOR }, { metadata: { annotations: { [PULLED]: null } } })).code).toBe(403);
    expect(await nodeAnnotations(NODE_A)).toMatchObject({ [PULLED]: report(7) });
    const condition = {
      type: 'ExampleProblem',
      status: 'False',
      reason: 'Fine',
      message: 'a status write as a kubelet makes',
    };
    expect((await viaStatus({ user: EDITOR }, { status: { conditions: [condition] } })).code).toBe(200);
  });

  it('leaves a node editor free to change labels (only the report is fenced)', async () => {
    expect((await patchNode({ user: EDITOR }, NODE_A, { metadata: { labels: { tier: 'front' } } })).code).toBe(200);
  });
});

// Decision 94: the controller names on a Node the revisions its agent pre-pulls, and may write nothing else of a Node.
describe('the revisions the controller names on a Node for its agent', () => {
  const NAMED = 'apps.tailor.dev/prepull-revisions';
  const controller = { user: CONTROLLER };
  const ONLY_THE_CONTROLLER =
    /apps\.tailor\.dev\/prepull-revisions may be set, changed or removed only by Tailor's\s+controller/;
  const ONLY_THAT_KEY = /controller may change only the annotation apps\.tailor\.dev\/prepull-revisions of a Node/;

  it('lets the controller set and remove them on any Node', async () => {
    for (const node of [NODE_A, NODE_B]) {
      const set = await patchNode(controller, node, { metadata: { annotations: { [NAMED]: '["ns/web-2"]' } } });
      expect([node, set.code]).toEqual([node, 200]);
    }
    expect((await patchNode(controller, NODE_B, { metadata: { annotations: { [NAMED]: null } } })).code).toBe(200);
  });

  it.each<[string, As, object, RegExp]>([
    [
      'them, as the agent',
      { user: AGENT, node: NODE_A },
      { metadata: { annotations: { [NAMED]: '["ns/x-1"]' } } },
      ONLY_THE_CONTROLLER,
    ],
    [
      'them, as anyone else',
      { user: EDITOR },
      { metadata: { annotations: { [NAMED]: '["ns/x-1"]' } } },
      ONLY_THE_CONTROLLER,
    ],
    [
      "the agent's report, as the controller",
      controller,
      { metadata: { annotations: { [PULLED]: '{}' } } },
      /only by Tailor's node\s+agent/,
    ],
    ['a label, as the controller', controller, { metadata: { labels: { zone: 'moved' } } }, ONLY_THAT_KEY],
    [
      'the taints, as the controller',
      controller,
      { spec: { taints: [{ key: 'x', effect: 'NoSchedule' }] } },
      ONLY_THAT_KEY,
    ],
    [
      'another annotation with them, as the controller',
      controller,
      { metadata: { annotations: { [NAMED]: '["ns/web-3"]', 'example.com/x': 'y' } } },
      ONLY_THAT_KEY,
    ],
  ])('refuses %s', async (_, as, patch, message) => {
    const answer = await patchNode(as, NODE_A, patch);
    expect(answer.code).toBe(403);
    expect(answer.message).toMatch(message);
  });
});

describe('bindings cannot carry Tailor annotations onto a pod', () => {
  it.each<['pods/binding' | 'bindings', string]>([
    ['pods/binding', 'pending-1'],
    ['bindings', 'pending-2'],
  ])('refuses a %s that carries resize-request, naming it, and the pod stays unbound without it', async (via, name) => {
    const answer = await bind({ user: EDITOR }, via, name, 'node-a', {
      [REQUEST]: '{"revision":"forged","containers":{}}',
    });
    expect(answer.code).toBe(403);
    expect(answer.message).toMatch(
      /a binding may not carry annotations under apps\.tailor\.dev\/ .*: apps\.tailor\.dev\/resize-request/,
    );
    const got = await admin.get<{ spec?: { nodeName?: string }; metadata?: { annotations?: Record<string, string> } }>(
      `/api/v1/namespaces/${NS}/pods/${name}`,
    );
    expect(got.spec?.nodeName).toBeUndefined();
    expect(got.metadata?.annotations ?? {}).not.toHaveProperty(REQUEST);
  });

  it('lets a binding without Tailor annotations through', async () => {
    expect((await bind({ user: EDITOR }, 'pods/binding', 'pending-3', 'node-a', { 'example.com/a': 'b' })).code).toBe(
      201,
    );
    const got = await admin.get<{ spec?: { nodeName?: string } }>(`/api/v1/namespaces/${NS}/pods/pending-3`);
    expect(got.spec?.nodeName).toBe('node-a');
  });

  it('refuses the agent binding a pod at all', async () => {
    const answer = await bind({ user: AGENT, node: 'node-a' }, 'bindings', 'pending-4', 'node-a');
    expect(answer.code).toBe(403);
    expect(answer.message).toMatch(/node agent .* does not bind pods/);
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
          metadata: {
            labels: { app: 'smuggler' },
            annotations: { [REQUEST]: '{"revision":"x","containers":{"app":{}}}' },
          },
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
        template: {
          ...cs.spec.template,
          metadata: { labels: { app: 'smuggler' }, annotations: { 'example.com/a': 'b' } },
        },
      },
    };
    await expect(admin.create(`/apis/apps.tailor.dev/v1alpha1/namespaces/${NS}/clonesets`, ok)).resolves.toBeDefined();
  });
});
