// The controller's shipped identity for the cluster tiers (issue 47 item 1; decision 80): the test
// controllers log in as the chart's ServiceAccount, tailor-system/tailor-controller, bound to the
// chart's ClusterRole, so a verb the chart forgot fails a test instead of a user's rollback, and
// the admission policies that name that ServiceAccount judge the test controllers' writes as they
// judge the installed one's. The objects are config/rbac's (hack/gen-config.sh renders them from
// the chart; the chart tier checks they are current), applied server-side (concurrent test files
// agree) with the release's ownership metadata, so a later `helm install` or `make dev` of the
// chart adopts them instead of refusing, and its `helm uninstall` takes them away (the next
// controller start applies them again). Nothing is impersonated: a token of that ServiceAccount.
// Owns: applying those three objects and tailor-system if absent. Must not: grant anything the
// chart does not, or delete anything (an install may own them by then).
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { API_GROUP, API_VERSION } from '../../../src/api/types.js';
import { KubeApiError } from '../../../src/runtime/pure/api-error.js';
import { isNotFound, KubeClient } from '../../../src/runtime/kube-client.js';
import { loadTestKubeConfig } from './kube.js';
import { eventually } from './testbed.js';

export const CONTROLLER_NAMESPACE = 'tailor-system';
export const CONTROLLER_SERVICE_ACCOUNT = 'tailor-controller';
/** The chart's objects that make the controller's identity, as hack/gen-config.sh renders them. */
const SHIPPED = ['config/rbac/service_account.yaml', 'config/rbac/role.yaml', 'config/rbac/role_binding.yaml'];
const FIELD_MANAGER = 'tailor-e2e-identity';
/** Longer than any one test file runs; a token is requested per controller start. */
const TOKEN_SECONDS = 4 * 3600;
/** What Helm reads to adopt an object into its release (make dev's and helm.test.ts's: `tailor`). */
const RELEASE_OWNED = {
  labels: { 'app.kubernetes.io/managed-by': 'Helm' },
  annotations: { 'meta.helm.sh/release-name': 'tailor', 'meta.helm.sh/release-namespace': CONTROLLER_NAMESPACE },
};

export interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

/** The rules of the first object of `kind` in a shipped YAML file. */
export function shippedRules(file: string, kind: 'ClusterRole' | 'Role'): Rule[] {
  const docs = yaml.loadAll(readFileSync(file, 'utf8')) as ({ kind?: string; rules?: Rule[] } | null)[];
  const role = docs.find((d) => d?.kind === kind);
  if (role?.rules === undefined) throw new Error(`${file} holds no ${kind} with rules`);
  return role.rules;
}

interface Namespace {
  status?: { phase?: string };
}
interface Shipped {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}
const PLURAL: Readonly<Record<string, string>> = {
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
};
function pathOf(o: Shipped): string {
  const plural = PLURAL[o.kind];
  if (plural === undefined) throw new Error(`no path for a shipped ${o.kind}`);
  const base = o.apiVersion === 'v1' ? '/api/v1' : `/apis/${o.apiVersion}`;
  const ns = o.metadata.namespace === undefined ? '' : `/namespaces/${o.metadata.namespace}`;
  return `${base}${ns}/${plural}/${o.metadata.name}`;
}

async function applyIdentity(admin: KubeClient): Promise<void> {
  // A namespace another file is deleting (agent-identity.ts, helm.test.ts) takes no new objects: wait it out.
  await eventually(
    `namespace ${CONTROLLER_NAMESPACE} there and not terminating`,
    async () => {
      const ns = await admin.get<Namespace>(`/api/v1/namespaces/${CONTROLLER_NAMESPACE}`).catch((err: unknown) => {
        if (isNotFound(err))
          return admin.create<Namespace>('/api/v1/namespaces', { metadata: { name: CONTROLLER_NAMESPACE } });
        throw err;
      });
      return ns.status?.phase === 'Terminating' ? undefined : true;
    },
    180_000,
  );
  for (const file of SHIPPED) {
    for (const o of yaml.loadAll(readFileSync(file, 'utf8')) as (Shipped | null)[]) {
      if (o === null) continue;
      const metadata = {
        ...o.metadata,
        labels: { ...o.metadata.labels, ...RELEASE_OWNED.labels },
        annotations: { ...o.metadata.annotations, ...RELEASE_OWNED.annotations },
      };
      await admin.patch(pathOf(o), { ...o, metadata }, 'apply', { fieldManager: FIELD_MANAGER, force: true });
    }
  }
}

async function requestToken(admin: KubeClient): Promise<string> {
  const request = await admin.create<{ status?: { token?: string } }>(
    `/api/v1/namespaces/${CONTROLLER_NAMESPACE}/serviceaccounts/${CONTROLLER_SERVICE_ACCOUNT}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_SECONDS } },
  );
  const token = request.status?.token;
  if (token === undefined) throw new Error(`no token in the TokenRequest for ${CONTROLLER_SERVICE_ACCOUNT}`);
  return token;
}

function tokenKubeConfig(token: string): k8s.KubeConfig {
  const cluster = loadTestKubeConfig().getCurrentCluster();
  if (cluster === null) throw new Error("the bed's kubeconfig names no cluster");
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, name: 'tailor' }],
    users: [{ name: CONTROLLER_SERVICE_ACCOUNT, token }],
    contexts: [{ name: 'controller', cluster: 'tailor', user: CONTROLLER_SERVICE_ACCOUNT }],
    currentContext: 'controller',
  });
  return kc;
}

/**
 * A kubeconfig that logs in as the controller's shipped identity, once the API server's RBAC
 * grants it (a binding just applied reaches the authorizer a moment later).
 */
export async function controllerKubeConfig(admin: KubeClient): Promise<k8s.KubeConfig> {
  await applyIdentity(admin);
  const kc = tokenKubeConfig(await requestToken(admin));
  const controller = new KubeClient(kc);
  try {
    await eventually('the controller identity bound to its role', () =>
      controller.list(`/apis/${API_GROUP}/${API_VERSION}/clonesets`, { limit: 1 }).then(
        () => true,
        (err: unknown) => {
          if (err instanceof KubeApiError && err.statusCode === 403) return undefined;
          throw err;
        },
      ),
    );
  } finally {
    controller.close();
  }
  return kc;
}
