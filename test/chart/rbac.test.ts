// The controller's RBAC against the requests its code sends on ControllerRevisions (issue 47: a
// rollback PUTs the reused revision back whole, and the chart granted patch, not update, so a
// rollback never happened on a Helm install; decision 72). The table is derived, not written down:
// RevisionStore (src/workload/revision-store.ts, every write the controller makes on
// ControllerRevisions) runs a create, a rollback, a name collision and a prune against a KubeClient
// whose one transport method records each request, and each request is turned into its RBAC
// (group, resource, verb) as the API server does. Only the informer's list and watch
// (src/workload/setup.ts) are stated by hand. Both installs are checked: the chart's ClusterRole and
// the kustomize copy, config/rbac/role.yaml.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { API_GROUP, API_VERSION, LABEL_CONTROLLER_REVISION_HASH } from '../../src/api/types.js';
import type { Pod, PodTemplate, WireCloneSet } from '../../src/api/wire.js';
import { KubeApiError } from '../../src/runtime/pure/api-error.js';
import type { Informer } from '../../src/runtime/informer.js';
import type { RequestOptions } from '../../src/runtime/kube-client.js';
import { clientAnswering, storedRevision } from '../support/fixtures/revisions.js';
import { RevisionStore, trimRevision } from '../../src/workload/revision-store.js';
import type { ControllerRevision } from '../../src/api/revision.js';
import { must, objects, type Obj } from './render.js';
import { CLONESET } from '../../src/cloneset/kind.js';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}
/** One request as RBAC sees it. */
interface Access {
  group: string;
  resource: string;
  verb: string;
}
const key = (a: Access): string => `${a.group || 'core'}/${a.resource} ${a.verb}`;

/** The informer of src/workload/setup.ts lists and watches ControllerRevisions: the one part not recorded. */
const INFORMER: Access[] = ['list', 'watch'].map((verb) => ({ group: 'apps', resource: 'controllerrevisions', verb }));

/** The RBAC access a request needs, by the API server's rules (apiserver's RequestInfo). */
function accessOf(method: string, path: string, query: RequestOptions['query']): Access {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)(?:\/namespaces\/[^/]+)?\/([^/]+)(?:\/([^/]+)(?:\/([^/]+))?)?$/.exec(
    path,
  );
  if (!m) throw new Error(`not a resource path: ${path}`);
  const [, group = '', resource = '', name, sub] = m;
  const verbs: Record<string, string> = {
    GET: name ? 'get' : query?.['watch'] ? 'watch' : 'list',
    POST: 'create',
    PUT: 'update',
    PATCH: 'patch',
    DELETE: name ? 'delete' : 'deletecollection',
  };
  const verb = verbs[method];
  if (!verb) throw new Error(`no RBAC verb for ${method}`);
  return { group, resource: sub ? `${resource}/${sub}` : resource, verb };
}

const NS = 'rbac';
const template = (image: string): PodTemplate => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image }] },
});
const stored = (name: string, revision: number, image: string): ControllerRevision =>
  storedRevision(name, revision, template(image), NS);
const cloneSet = (image: string, status: WireCloneSet['status'] = {}): WireCloneSet => ({
  apiVersion: `${API_GROUP}/${API_VERSION}`,
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: NS, uid: 'uid-web', generation: 1 },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: template(image),
    revisionHistoryLimit: 0,
  },
  status,
});
const podOn = (revision: string): Pod => ({
  metadata: { name: 'web-a', labels: { [LABEL_CONTROLLER_REVISION_HASH]: revision } },
});

/**
 * A RevisionStore over `revisions` (the informer's cache) and a KubeClient whose json() (which
 * get, create, patch and delete call too) records each request and answers it: a named GET with
 * the stored revision, POST with `created` (a value, or an error to throw), anything else with {}.
 */
function recording(revisions: ControllerRevision[], created: unknown = undefined) {
  const seen: Access[] = [];
  const byName = new Map(revisions.map((r) => [r.metadata?.name ?? '', r]));
  const client = clientAnswering(<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> => {
    seen.push(accessOf(method, path, options.query));
    if (method === 'POST')
      return created instanceof Error ? Promise.reject(created) : Promise.resolve(options.body as T);
    const named = method === 'GET' ? byName.get(path.split('/').pop() ?? '') : undefined;
    return Promise.resolve((named ?? {}) as T);
  });
  const informer = { byIndex: () => revisions.map(trimRevision) } as unknown as Informer<ControllerRevision>;
  return { store: new RevisionStore(client, CLONESET, informer), seen };
}

/** What RevisionStore sends, over the four paths through it. */
async function revisionStoreAccess(): Promise<Access[]> {
  const v1 = stored('web-v1', 1, 'busybox:v1');
  const v2 = stored('web-v2', 2, 'busybox:v2');
  const seen: Access[] = [];
  // A new template: the revision is created.
  const created = recording([v1]);
  await created.store.sync(cloneSet('busybox:v3'), []);
  // Back to v1's template while a pod runs v2: v1 is read and written back renumbered, v2's template fetched.
  const rollback = recording([v1, v2]);
  await rollback.store.sync(cloneSet('busybox:v1'), [podOn('web-v2')]);
  // A name taken by another template: read it, then bump the CloneSet's collisionCount.
  const exists = new KubeApiError('POST', '', 409, { reason: 'AlreadyExists' });
  const collision = recording([v1], exists);
  await collision.store.sync(cloneSet('busybox:v3'), []);
  // History beyond revisionHistoryLimit (0): deleted.
  const pruned = recording([v1, v2]);
  await pruned.store.prune(cloneSet('busybox:v2'), [], {
    currentRevision: 'web-v2',
    updateRevision: 'web-v2',
  });
  for (const r of [created, rollback, collision, pruned]) seen.push(...r.seen);
  return seen;
}

const grants = (rules: Rule[], a: Access): boolean =>
  rules.some(
    (r) =>
      r.resourceNames === undefined &&
      (r.apiGroups ?? []).some((g) => g === a.group || g === '*') &&
      (r.resources ?? []).some((x) => x === a.resource || x === '*') &&
      r.verbs.some((v) => v === a.verb || v === '*'),
  );
const verbsOn = (rules: Rule[], group: string, resource: string): string[] => [
  ...new Set(
    rules.filter((r) => r.apiGroups?.includes(group) && r.resources?.includes(resource)).flatMap((r) => r.verbs),
  ),
];

describe('the controller’s RBAC and the requests it sends on ControllerRevisions', () => {
  const roles: [string, () => Rule[]][] = [
    ['the chart’s ClusterRole', () => must(objects(), 'ClusterRole', 'tailor-controller')['rules'] as Rule[]],
    [
      'config/rbac/role.yaml',
      () => (yaml.load(readFileSync('config/rbac/role.yaml', 'utf8')) as Obj)['rules'] as Rule[],
    ],
  ];

  it('a rollback writes the reused revision back whole: an update (PUT), not a patch', async () => {
    const sent = (await revisionStoreAccess()).map(key);
    expect(sent).toContain('apps/controllerrevisions update');
    expect(sent).not.toContain('apps/controllerrevisions patch');
  });

  it.each(roles)('%s grants every request RevisionStore sends', async (_where, rules) => {
    const refused = (await revisionStoreAccess()).filter((a) => !grants(rules(), a)).map(key);
    expect(refused).toEqual([]);
  });

  it.each(roles)('%s grants exactly the verbs the controller uses on controllerrevisions', async (_where, rules) => {
    const used = [...(await revisionStoreAccess()), ...INFORMER]
      .filter((a) => a.group === 'apps' && a.resource === 'controllerrevisions')
      .map((a) => a.verb);
    expect(verbsOn(rules(), 'apps', 'controllerrevisions').sort()).toEqual([...new Set(used)].sort());
  });
});
