// WorkloadReconciler over fake informers (maps behind get and byIndex) and a recording API
// client: one round observed, planned, acted on and concluded. Checks what reaches the API and in
// what order (creates, a lifecycle move's two writes, the status), that the plan's claims hold a
// create back, that an in-place update goes to the updater, that a refused write becomes the
// status condition and a failed round, and that the next round waits for the cache to see our
// creates. The planner's decisions themselves are tested in planner.test.ts and its neighbours.
import { describe, expect, it } from '@jest/globals';
import { ownedIndexValue } from '../../../src/api/owner.js';
import {
  LABEL_INSTANCE_ID,
  LABEL_LIFECYCLE_STATE,
  type CloneSetLifecycle,
  type VolumeClaimTemplate,
} from '../../../src/api/types.js';
import type { KubeObject, Pod, WireCloneSet } from '../../../src/api/wire.js';
import { claimName, type Claim } from '../../../src/workload/pure/claims.js';
import { NodeEvidenceIndex } from '../../../src/workload/node-evidence.js';
import { WorkloadReconciler } from '../../../src/workload/reconciler.js';
import type { ControllerRevision } from '../../../src/api/revision.js';
import { templateDigest } from '../../../src/workload/pure/revision.js';
import type { InPlaceUpdater } from '../../../src/inplace/engine.js';
import type { EventRecorder } from '../../../src/runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../../src/runtime/expectations.js';
import type { Informer } from '../../../src/runtime/informer.js';
import type { KubeClient } from '../../../src/runtime/kube-client.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import { NEW, NOW, OLD, TEMPLATES, cloneSet, pod, type CloneSetSpec } from '../../support/fixtures/planner-fixtures.js';
import { CLONESET } from '../../../src/cloneset/kind.js';

const KEY = 'ns/web';

/** An informer of these objects: get by namespace/name, byIndex by controlling owner (the OWNER_INDEX). */
function informer<T extends KubeObject>(objects: readonly T[]): Informer<T> {
  const owner = (o: T): string =>
    ownedIndexValue(o.metadata?.namespace, o.metadata?.ownerReferences?.find((r) => r.controller === true)?.uid);
  return {
    get: (key: string) => objects.find((o) => `${o.metadata?.namespace}/${o.metadata?.name}` === key),
    byIndex: (_index: string, value: string) => objects.filter((o) => owner(o) === value),
  } as unknown as Informer<T>;
}

const OWNED = [
  { apiVersion: 'apps.tailor.dev/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'cs-uid', controller: true },
];

/** The cached revisions OLD (number 1) and NEW (2), templates as digests, as the controller caches them. */
const revisions = (template: unknown): ControllerRevision[] => [
  {
    metadata: { name: OLD, namespace: 'ns', uid: 'rev-old', ownerReferences: OWNED },
    revision: 1,
    templateDigest: templateDigest(TEMPLATES.old),
  },
  {
    metadata: { name: NEW, namespace: 'ns', uid: 'rev-new', ownerReferences: OWNED },
    revision: 2,
    templateDigest: templateDigest(template),
  },
];

interface World {
  reconciler: WorkloadReconciler;
  /** Each API request, `VERB path`, in the order sent. */
  calls: string[];
  /** The bodies of patches, by path. */
  patches: Map<string, unknown>;
  /** `reason: message` of each event. */
  events: string[];
  /** `write pod` of each in-place write handed to the updater. */
  inPlace: string[];
}

interface WorldOptions {
  pods?: Pod[];
  claims?: Claim[];
  /** Makes pod creates fail with this message. */
  refuseCreates?: string;
  /** Cached revisions besides OLD and NEW (each fetched as TEMPLATES.old). */
  moreRevisions?: ControllerRevision[];
}

function world(cs: WireCloneSet, options: WorldOptions = {}): World {
  const calls: string[] = [];
  const patches = new Map<string, unknown>();
  const events: string[] = [];
  const inPlace: string[] = [];
  const patch = (path: string, body: unknown): { metadata: { resourceVersion: string } } => {
    calls.push(`PATCH ${path}`);
    patches.set(path, body);
    return { metadata: { resourceVersion: '11' } };
  };
  const client = {
    create: async <T>(path: string, body: T): Promise<T> => {
      calls.push(`POST ${path}`);
      if (options.refuseCreates !== undefined && path.endsWith('/pods')) throw new Error(options.refuseCreates);
      return body;
    },
    delete: async (path: string): Promise<void> => void calls.push(`DELETE ${path}`),
    get: async <T>(path: string): Promise<T> => {
      calls.push(`GET ${path}`);
      return { data: { template: TEMPLATES.old } } as T;
    },
    patch: async <T>(path: string, body: unknown): Promise<T> => patch(path, body) as T,
    patchMetadata: async (path: string, body: unknown) => patch(path, body),
  } as unknown as KubeClient;
  const record = (_o: unknown, _type: string, reason: string, message: string): number =>
    events.push(`${reason}: ${message}`);
  const write =
    (what: string) =>
    async (...args: unknown[]) => {
      const target = args.find((a): a is Pod => (a as Pod | undefined)?.kind === 'Pod');
      inPlace.push(`${what} ${target?.metadata?.name}`);
    };
  const updater = {
    drain: write('drain'),
    apply: write('apply'),
    settle: write('settle'),
    markGateReady: write('markGateReady'),
    rerouteToKubelet: write('reroute'),
  } as unknown as InPlaceUpdater;
  const reconciler = new WorkloadReconciler({
    kind: CLONESET,
    client,
    cloneSets: informer([cs]),
    pods: informer(options.pods ?? []),
    nodeEvidence: new NodeEvidenceIndex(),
    revisions: informer([...revisions(cs.spec.template), ...(options.moreRevisions ?? [])]),
    claims: informer(options.claims ?? []),
    scaleExpectations: new ScaleExpectations(),
    podExpectations: new ResourceVersionExpectations(),
    events: { event: record, batch: record } as unknown as EventRecorder,
    logger: silentLogger(),
    inPlace: { updater },
    resize: { backend: 'kubelet' },
    now: () => NOW,
  });
  return { reconciler, calls, patches, events, inPlace };
}

const statusPath = '/apis/apps.tailor.dev/v1alpha1/namespaces/ns/clonesets/web/status';
const withSpec = (s: CloneSetSpec, spec: Record<string, unknown>): WireCloneSet => {
  const cs = cloneSet(s);
  return { ...cs, spec: { ...cs.spec, ...spec } };
};
const writtenStatus = (w: World): Record<string, unknown> =>
  (w.patches.get(statusPath) as { status: Record<string, unknown> }).status;

describe('WorkloadReconciler', () => {
  it('writes nothing for a CloneSet gone from the cache', async () => {
    const w = world(cloneSet({ replicas: 1 }));
    await expect(w.reconciler.reconcile('ns/gone')).resolves.toBeUndefined();
    expect(w.calls).toEqual([]);
  });

  it('creates the missing pods, then writes the status; the next round waits until the cache has seen them', async () => {
    const w = world(cloneSet({ replicas: 2, status: { currentRevision: NEW } }));
    await w.reconciler.reconcile(KEY);
    expect(w.calls).toEqual([
      'POST /api/v1/namespaces/ns/pods',
      'POST /api/v1/namespaces/ns/pods',
      `PATCH ${statusPath}`,
    ]);
    expect(w.events.filter((e) => e.startsWith('SuccessfulCreate'))).toHaveLength(1);
    expect(writtenStatus(w)).toMatchObject({ updateRevision: NEW, currentRevision: NEW, observedGeneration: 2 });
    const next = await w.reconciler.reconcile(KEY);
    expect(next).toMatchObject({ requeueAfterMs: expect.any(Number) });
    expect(w.calls).toHaveLength(3);
  });

  it('holds back the create whose predecessor still terminates with the claims it will take, and deletes no claim', async () => {
    const datadir: VolumeClaimTemplate = {
      metadata: { name: 'datadir' },
      spec: { resources: { requests: { storage: '1Gi' } } },
    };
    const cs = withSpec({ replicas: 2, status: { currentRevision: NEW } }, { volumeClaimTemplates: [datadir] });
    const live = pod(
      { name: 'web-aaaaa', revision: NEW, labels: { [LABEL_INSTANCE_ID]: 'aaaaa' } },
      new Map([[NEW, TEMPLATES.image]]),
    );
    const leaving = pod({
      name: 'web-bbbbb',
      revision: NEW,
      terminating: true,
      labels: { [LABEL_INSTANCE_ID]: 'bbbbb' },
    });
    const claims: Claim[] = ['aaaaa', 'bbbbb'].map((id) => ({
      metadata: {
        name: claimName('datadir', 'web', id),
        namespace: 'ns',
        labels: { [LABEL_INSTANCE_ID]: id },
        ownerReferences: OWNED,
      },
    }));
    const w = world(cs, { pods: [live, leaving], claims });
    await w.reconciler.reconcile(KEY);
    expect(w.calls).toEqual([`PATCH ${statusPath}`]);
  });

  it('hands an in-place update to the updater: the picked pod is drained, nothing is created or deleted', async () => {
    const cs = cloneSet({ replicas: 2, maxUnavailable: 1 });
    const w = world(cs, { pods: [pod({ name: 'web-1' }), pod({ name: 'web-2' })] });
    await w.reconciler.reconcile(KEY);
    expect(w.inPlace).toHaveLength(1);
    expect(w.inPlace[0]).toMatch(/^drain web-[12]$/);
    expect(w.calls.filter((c) => c.startsWith('POST') || c.startsWith('DELETE'))).toEqual([]);
    expect(w.calls).toContain(`GET /apis/apps/v1/namespaces/ns/controllerrevisions/${OLD}`);
  });

  it("sends a lifecycle move as planned: the gate False to the pod's status first, then the state label", async () => {
    const lifecycle: CloneSetLifecycle = {
      preDelete: { finalizersHandler: ['example.com/hold'], markPodNotReady: true },
    };
    const cs = withSpec({ replicas: 1, status: { currentRevision: NEW } }, { lifecycle });
    const hooked = (name: string): Pod => {
      const p = pod(
        { name, revision: NEW, labels: { [LABEL_LIFECYCLE_STATE]: 'Normal' } },
        new Map([[NEW, TEMPLATES.image]]),
      );
      return { ...p, metadata: { ...p.metadata, finalizers: ['example.com/hold'] } };
    };
    const w = world(cs, { pods: [hooked('web-1'), hooked('web-2')] });
    await w.reconciler.reconcile(KEY);
    const podWrites = w.calls.filter((c) => c.includes('/pods/'));
    expect(podWrites).toHaveLength(2);
    const path = podWrites[1]!.slice('PATCH '.length);
    expect(podWrites[0]).toBe(`PATCH ${path}/status`);
    expect(w.patches.get(`${path}/status`)).toMatchObject({
      status: { conditions: [{ status: 'False', reason: 'LifecyclePreparingDelete' }] },
    });
    expect(w.patches.get(path)).toMatchObject({ metadata: { labels: { [LABEL_LIFECYCLE_STATE]: 'PreparingDelete' } } });
    expect(w.calls.filter((c) => c.startsWith('DELETE'))).toEqual([]);
  });

  it('past the cap of revisions in use, fetches only the template of the pod the rollout moves, then updates it in place', async () => {
    const others = Array.from({ length: 12 }, (_, i) => `web-x${i}`);
    const moreRevisions: ControllerRevision[] = others.map((name) => ({
      metadata: { name, namespace: 'ns', uid: `rev-${name}`, ownerReferences: OWNED },
      revision: 1, // older than NEW (2): nothing is renumbered
      templateDigest: templateDigest(TEMPLATES.old),
      templateChars: JSON.stringify(TEMPLATES.old).length,
    }));
    const pods = others.map((revision, i) => pod({ name: `web-${i}`, revision }));
    const w = world(cloneSet({ replicas: 12, maxUnavailable: 1 }), { pods, moreRevisions });
    await w.reconciler.reconcile(KEY);
    const gets = w.calls.filter((c) => c.startsWith('GET'));
    // The current revision's, then the one pod's the first plan picked: not the twelve.
    expect(gets).toHaveLength(2);
    expect(gets[0]).toBe(`GET /apis/apps/v1/namespaces/ns/controllerrevisions/${OLD}`);
    expect(w.inPlace).toEqual([expect.stringMatching(/^drain web-\d+$/)]);
    expect(w.calls.filter((c) => c.startsWith('POST') || c.startsWith('DELETE'))).toEqual([]);
    const conditions = writtenStatus(w)['conditions'] as { type: string; reason: string }[];
    expect(conditions.find((c) => c.type === 'RevisionsInUse')).toMatchObject({ reason: 'TooManyRevisions' });
  });

  it('folds a refused create into the status as FailedScale and fails the round so the key backs off', async () => {
    const w = world(cloneSet({ replicas: 1, status: { currentRevision: NEW } }), { refuseCreates: 'exceeded quota' });
    await expect(w.reconciler.reconcile(KEY)).rejects.toThrow('create pods: exceeded quota');
    const conditions = writtenStatus(w)['conditions'] as { type: string; status: string; message: string }[];
    expect(conditions.find((c) => c.type === 'FailedScale')).toMatchObject({
      status: 'True',
      message: 'create pods: exceeded quota',
    });
    expect(w.events).toContain('FailedCreate: create pods: exceeded quota');
  });
});
