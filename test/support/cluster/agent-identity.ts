// The node agent's real, node-bound identity on the full bed, as the DaemonSet's pods get it
// (docs/architecture.md §5 Trust boundaries): the shipped RBAC (config/agent/rbac.yaml) and
// admission policies (config/policy) applied with kubectl; per node a small pod in tailor-system,
// bound to that node, running as the tailor-agent ServiceAccount; a token bound to that pod
// (TokenRequest with boundObjectRef kind Pod: the API server adds the node-name extra
// `authentication.kubernetes.io/node-name`, which the policies compare with the object's node);
// and a kubeconfig file per node with that token. Nothing is impersonated.
// Owns: the identity pods, the kubeconfig files, and whatever of tailor-system, the RBAC and the
// policies it created; remove() deletes exactly those. Must not: delete what was there before
// (`make dev`'s install), or label its pods as the agent (in-cluster-agent.ts counts those).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../../src/api/wire.js';
import { loadKubeAuth } from '../../../src/cli/kubeconfig.js';
import { KubeApiError } from '../../../src/runtime/pure/api-error.js';
import { isNotFound, KubeClient } from '../../../src/runtime/kube-client.js';
import { createTestNamespace, loadTestKubeConfig } from './kube.js';
import { eventually, kubectl, RUN_UNTIL_TERM } from './testbed.js';

export const AGENT_NAMESPACE = 'tailor-system';
export const AGENT_SERVICE_ACCOUNT = 'tailor-agent';
/** The token claim the policies fence the agent by. */
export const NODE_NAME_CLAIM = 'authentication.kubernetes.io/node-name';
/** What the agent's service account is refused with, and by whom, is the shipped config's. */
const SHIPPED = ['config/agent/rbac.yaml', 'config/policy/policy.yaml', 'config/policy/binding.yaml'];

export interface AgentIdentities {
  /** Per node, the kubeconfig file of its agent: the bed's API server and CA, the token bound to its pod on that node. */
  readonly kubeconfigs: ReadonlyMap<string, string>;
  /** Deletes the identity pods (their tokens die with them), the files, and what install created. */
  remove(): Promise<void>;
}

/** Applies the shipped files; returns the objects (kubectl's `kind/name`) that were not there before. */
function applyShipped(): string[] {
  const files = SHIPPED.flatMap((f) => ['-f', f]);
  const before = new Set(
    kubectl(['get', '-n', AGENT_NAMESPACE, ...files, '--ignore-not-found', '-o', 'name']).split('\n'),
  );
  const applied = kubectl(['apply', '-n', AGENT_NAMESPACE, ...files, '-o', 'name'])
    .split('\n')
    .filter(Boolean);
  return applied.filter((name) => !before.has(name));
}

/** A pod on `node` that does nothing but exist as the agent's service account, so a token can be bound to it. */
const identityPod = (name: string, node: string): Pod => ({
  metadata: { name, labels: { 'app.kubernetes.io/name': 'tailor-e2e-agent-identity' } },
  spec: {
    serviceAccountName: AGENT_SERVICE_ACCOUNT,
    automountServiceAccountToken: false,
    nodeSelector: { 'kubernetes.io/hostname': node },
    terminationGracePeriodSeconds: 1,
    containers: [{ name: 'idle', image: 'tailor.local/busybox:v1', imagePullPolicy: 'Never', command: RUN_UNTIL_TERM }],
  },
});

/** A token of the agent's service account bound to `pod` (valid while the pod exists, an hour at most). */
async function boundToken(admin: KubeClient, pod: Pod): Promise<string> {
  const request = await admin.create<{ status?: { token?: string } }>(
    `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts/${AGENT_SERVICE_ACCOUNT}/token`,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        expirationSeconds: 3600,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata?.name, uid: pod.metadata?.uid },
      },
    },
  );
  const token = request.status?.token;
  if (token === undefined) throw new Error(`no token in the TokenRequest for pod ${pod.metadata?.name}`);
  return token;
}

/** A kubeconfig with the bed's API server and CA and nothing but `token` to log in with. */
function tokenKubeconfig(token: string): string {
  const cluster = loadTestKubeConfig().getCurrentCluster();
  if (cluster?.caData === undefined) throw new Error("the bed's kubeconfig has no inline CA");
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'tailor', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } }],
    users: [{ name: 'agent', user: { token } }],
    contexts: [{ name: 'agent', context: { cluster: 'tailor', user: 'agent' } }],
    'current-context': 'agent',
  });
}

/** A client that logs in as the identity of a kubeconfig file, loaded as the agent loads it. */
export async function clientOf(kubeconfig: string): Promise<KubeClient> {
  return new KubeClient(await loadKubeAuth(kubeconfig));
}

/**
 * Resolves once the API server enforces the pod policy (a policy just created takes a moment to
 * reach admission): the agent of `pods[0]`'s node is refused, by the policy and not by RBAC, a
 * dry-run write of resize-status on the identity pod of another node.
 */
async function policyInForce(kubeconfig: string, otherPod: string): Promise<void> {
  const agent = await clientOf(kubeconfig);
  const path = `/api/v1/namespaces/${AGENT_NAMESPACE}/pods/${otherPod}`;
  const patch = { metadata: { annotations: { 'apps.tailor.dev/resize-status': '{}' } } };
  try {
    await eventually('the admission policy to be in force', () =>
      agent.patch(path, patch, 'merge', { dryRun: 'All' }).then(
        () => undefined,
        (err: unknown) =>
          err instanceof KubeApiError && err.statusCode === 403 && /ValidatingAdmissionPolicy/.test(err.message)
            ? true
            : undefined,
      ),
    );
  } finally {
    agent.close();
  }
}

/** The identity pod once it runs (as the DaemonSet's pod would before its agent acts). */
const running = (admin: KubeClient, name: string): Promise<Pod> =>
  eventually(`the agent identity pod ${name} running`, async () => {
    const pod = await admin.get<Pod>(`/api/v1/namespaces/${AGENT_NAMESPACE}/pods/${name}`);
    return pod.status?.phase === 'Running' ? pod : undefined;
  });

/** Deletes tailor-system and waits until it is gone, so a later install (helm, make dev) finds none. */
async function deleteNamespace(admin: KubeClient): Promise<void> {
  await admin.delete(`/api/v1/namespaces/${AGENT_NAMESPACE}`);
  await eventually(
    `${AGENT_NAMESPACE} gone`,
    () =>
      admin.get(`/api/v1/namespaces/${AGENT_NAMESPACE}`).then(
        () => undefined,
        (err: unknown) => (isNotFound(err) ? true : undefined),
      ),
    120_000,
  );
}

/** Installs the shipped RBAC and policies (tailor-system too, if missing) and gives each of `nodes` its agent's identity. */
export async function installAgentIdentities(admin: KubeClient, nodes: readonly string[]): Promise<AgentIdentities> {
  const ownNamespace = await admin.get(`/api/v1/namespaces/${AGENT_NAMESPACE}`).then(
    () => false,
    (err: unknown) => {
      if (isNotFound(err)) return true;
      throw err;
    },
  );
  if (ownNamespace) await createTestNamespace(admin, AGENT_NAMESPACE, { anyNode: true });
  const created = applyShipped();
  const dir = mkdtempSync(join(tmpdir(), 'agent-identity-'));
  const suffix = Date.now().toString(36);
  const pods = nodes.map((node) => `e2e-agent-identity-${node}-${suffix}`);
  const kubeconfigs = new Map<string, string>();
  const remove = async (): Promise<void> => {
    for (const name of pods) {
      await admin
        .delete(`/api/v1/namespaces/${AGENT_NAMESPACE}/pods/${name}`, { gracePeriodSeconds: 0 })
        .catch(() => undefined);
    }
    rmSync(dir, { recursive: true, force: true });
    if (created.length > 0) kubectl(['delete', '-n', AGENT_NAMESPACE, '--ignore-not-found', ...created]);
    if (ownNamespace) await deleteNamespace(admin);
  };
  try {
    for (const [i, node] of nodes.entries()) {
      await admin.create(`/api/v1/namespaces/${AGENT_NAMESPACE}/pods`, identityPod(pods[i] ?? '', node));
    }
    for (const [i, node] of nodes.entries()) {
      const file = join(dir, `${node}.kubeconfig`);
      writeFileSync(file, tokenKubeconfig(await boundToken(admin, await running(admin, pods[i] ?? ''))), {
        mode: 0o600,
      });
      kubeconfigs.set(node, file);
    }
    const [first, second] = nodes;
    if (first !== undefined && second !== undefined) await policyInForce(kubeconfigs.get(first) ?? '', pods[1] ?? '');
  } catch (err) {
    await remove();
    throw err;
  }
  return { kubeconfigs, remove };
}
