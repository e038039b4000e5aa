// RBAC for tests that act as a restricted user: a Role with pod get/list/patch in one namespace,
// bound to the given subjects. Owns nothing else; never grants anything cluster-wide.
import type { KubeClient } from '../../../src/runtime/kube-client.js';

export type Subject = { kind: 'User'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };

/** Grants `subjects` get/list/patch on pods in `ns` (Role and RoleBinding "pod-patch"). */
export async function grantPodPatch(
  client: Pick<KubeClient, 'create'>,
  ns: string,
  subjects: readonly Subject[],
): Promise<void> {
  await client.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    metadata: { name: 'pod-patch' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'patch'] }],
  });
  await client.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    metadata: { name: 'pod-patch' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-patch' },
    subjects: subjects.map((s) => (s.kind === 'User' ? { apiGroup: 'rbac.authorization.k8s.io', ...s } : s)),
  });
}
