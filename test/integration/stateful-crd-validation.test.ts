// The InPlaceStatefulSet CRD against a real kube-apiserver: a native StatefulSet manifest is
// accepted with only apiVersion and kind changed and gets the schema's defaults, an Advanced
// StatefulSet's fields are kept, every invalid manifest is rejected with a message that says what
// to fix, and the scale/status subresources and printer columns work. Owns its own namespace;
// applies (creates or replaces) the CRD from crds/ but never deletes it, since other tests share it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../src/api/types.js';
import {
  INPLACESTATEFULSET_CRD_NAME,
  INPLACESTATEFULSET_KIND,
  INPLACESTATEFULSET_PLURAL,
  withStatefulDefaults,
  type InPlaceStatefulSet,
} from '../../src/api/stateful-types.js';
import { loadTestKubeConfig } from '../support/cluster/kube.js';
import { apiError, applyCrd } from '../support/cluster/crd-apply.js';

const GROUP = API_GROUP;
const VERSION = API_VERSION;
const PLURAL = INPLACESTATEFULSET_PLURAL;
const CRD_NAME = INPLACESTATEFULSET_CRD_NAME;
const NAMESPACE = `tailor-ipsts-crd-${Date.now().toString(36)}`;

type Json = Record<string, unknown>;
type Manifest = Json & { metadata: { name: string; labels?: Record<string, string> }; spec: Json };

/**
 * The StatefulSet of the Kubernetes documentation's StatefulSet page ("web", nginx, a headless
 * Service and one claim template), as an apps/v1 manifest would have it: only apiVersion and kind
 * differ. Cases below break one thing each.
 */
function nativeStatefulSet(name: string): Manifest {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: INPLACESTATEFULSET_KIND,
    metadata: { name, labels: { 'tailor.dev/test': 'true' } },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      serviceName: 'nginx',
      replicas: 3,
      minReadySeconds: 10,
      template: {
        metadata: { labels: { app: 'nginx' } },
        spec: {
          terminationGracePeriodSeconds: 10,
          containers: [
            {
              name: 'nginx',
              image: 'registry.k8s.io/nginx-slim:0.24',
              ports: [{ containerPort: 80, name: 'web' }],
              volumeMounts: [{ name: 'www', mountPath: '/usr/share/nginx/html' }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'www' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: 'my-storage-class',
            resources: { requests: { storage: '1Gi' } },
          },
        },
      ],
    },
  };
}

/** The native manifest without minReadySeconds, so a case about it breaks one thing only. */
function valid(name: string): Manifest {
  const m = nativeStatefulSet(name);
  delete m.spec.minReadySeconds;
  return m;
}

type Mutate = (m: Manifest) => void;
const spec = (m: Manifest): Json => m.spec;
const podSpec = (m: Manifest): Json => (spec(m).template as Json).spec as Json;
const rollingUpdate = (m: Manifest, r: Json, type?: string): void => {
  spec(m).updateStrategy = { ...(type === undefined ? {} : { type }), rollingUpdate: r };
};

interface InvalidCase {
  name: string;
  mutate: Mutate;
  /** Every substring must appear in the API server's message. */
  expect: string[];
}

const invalid: InvalidCase[] = [
  {
    name: 'a reserveOrdinals range that ends before it starts ("5-3")',
    mutate: (m) => {
      spec(m).reserveOrdinals = [1, '5-3'];
    },
    expect: ['spec.reserveOrdinals[1]', 'a range "a-b" with a <= b, such as "3-5"'],
  },
  {
    name: 'a reserveOrdinals entry that is neither an ordinal nor a range',
    mutate: (m) => {
      spec(m).reserveOrdinals = ['two'];
    },
    expect: ['spec.reserveOrdinals[0]', 'must be an integer >= 0 or a range "a-b"'],
  },
  {
    name: 'a negative reserveOrdinals entry',
    mutate: (m) => {
      spec(m).reserveOrdinals = [-1];
    },
    expect: ['spec.reserveOrdinals[0]', 'must be an integer >= 0'],
  },
  {
    name: 'a reserveOrdinals range of 10-digit ordinals (pod names keep within 63 characters)',
    mutate: (m) => {
      spec(m).reserveOrdinals = ['1-9999999999'];
    },
    expect: ['spec.reserveOrdinals[0]', 'must be an integer >= 0 or a range "a-b"'],
  },
  {
    name: 'a negative ordinals.start',
    mutate: (m) => {
      spec(m).ordinals = { start: -1 };
    },
    expect: ['spec.ordinals.start', 'greater than or equal to 0'],
  },
  {
    name: 'rollingUpdate with type OnDelete',
    mutate: (m) => rollingUpdate(m, { partition: 1 }, 'OnDelete'),
    expect: [
      'spec.updateStrategy.rollingUpdate',
      'only when updateStrategy.type is RollingUpdate',
      'remove rollingUpdate or set type to RollingUpdate',
    ],
  },
  {
    name: 'a maxUnavailable of 0',
    mutate: (m) => rollingUpdate(m, { maxUnavailable: 0 }),
    expect: [
      'spec.updateStrategy.rollingUpdate.maxUnavailable',
      'maxUnavailable must be an integer >= 1 or a percentage from "1%" to "100%"',
    ],
  },
  {
    name: 'a maxUnavailable of "0%"',
    mutate: (m) => rollingUpdate(m, { maxUnavailable: '0%' }),
    expect: ['spec.updateStrategy.rollingUpdate.maxUnavailable', 'an integer >= 1 or a percentage from "1%"'],
  },
  {
    name: 'a maxUnavailable written as a number in quotes',
    mutate: (m) => rollingUpdate(m, { maxUnavailable: '2' }),
    expect: ['spec.updateStrategy.rollingUpdate.maxUnavailable', 'an integer >= 1 or a percentage'],
  },
  {
    name: 'a partition written as a percentage (an integer in apps/v1)',
    mutate: (m) => rollingUpdate(m, { partition: '50%' }),
    expect: ['spec.updateStrategy.rollingUpdate.partition', 'must be of type integer'],
  },
  {
    name: 'a negative partition',
    mutate: (m) => rollingUpdate(m, { partition: -1 }),
    expect: ['spec.updateStrategy.rollingUpdate.partition', 'greater than or equal to 0'],
  },
  {
    name: 'a rollingUpdate.minReadySeconds of 301',
    mutate: (m) => rollingUpdate(m, { minReadySeconds: 301 }),
    expect: ['spec.updateStrategy.rollingUpdate.minReadySeconds', 'less than or equal to 300'],
  },
  {
    name: 'a progressDeadlineSeconds not above minReadySeconds',
    mutate: (m) => {
      spec(m).minReadySeconds = 20;
      spec(m).progressDeadlineSeconds = 20;
    },
    expect: ['spec.progressDeadlineSeconds', 'progressDeadlineSeconds must be greater than minReadySeconds'],
  },
  {
    name: 'a name of 53 characters, whose revision label and pod names could not fit 63',
    mutate: (m) => {
      m.metadata.name = `n${'x'.repeat(52)}`;
    },
    expect: ['metadata.name must be at most 52 characters', 'label values are limited to 63 characters'],
  },
  {
    name: 'an unknown podManagementPolicy',
    mutate: (m) => {
      spec(m).podManagementPolicy = 'Ordered';
    },
    expect: ['spec.podManagementPolicy', 'Unsupported value: "Ordered"', '"OrderedReady"', '"Parallel"'],
  },
  {
    name: 'an unknown update strategy type',
    mutate: (m) => {
      spec(m).updateStrategy = { type: 'InPlaceIfPossible' };
    },
    expect: ['spec.updateStrategy.type', 'Unsupported value: "InPlaceIfPossible"', '"RollingUpdate"', '"OnDelete"'],
  },
  {
    name: 'an unknown podUpdatePolicy',
    mutate: (m) => rollingUpdate(m, { podUpdatePolicy: 'InPlace' }),
    expect: ['spec.updateStrategy.rollingUpdate.podUpdatePolicy', 'Unsupported value: "InPlace"'],
  },
  {
    name: 'resizeStrategy onInfeasible Recreate with podUpdatePolicy InPlaceOnly',
    mutate: (m) => {
      spec(m).updateStrategy = {
        rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' },
        resizeStrategy: { onInfeasible: 'Recreate' },
      };
    },
    expect: ['spec.updateStrategy.resizeStrategy', 'InPlaceOnly never recreates pods'],
  },
  {
    name: 'an unordered update whose priorityStrategy is empty',
    mutate: (m) => rollingUpdate(m, { unorderedUpdate: { priorityStrategy: {} } }),
    expect: [
      'spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy',
      'priorityStrategy must set exactly one of weightPriority and orderPriority',
    ],
  },
  {
    name: 'an unknown persistentVolumeClaimRetentionPolicy',
    mutate: (m) => {
      spec(m).persistentVolumeClaimRetentionPolicy = { whenScaled: 'Keep' };
    },
    expect: ['spec.persistentVolumeClaimRetentionPolicy.whenScaled', 'Unsupported value: "Keep"'],
  },
  {
    name: "Advanced StatefulSet's volumeClaimUpdateStrategy type OnDelete (KEP-4650 says OnClaimDelete)",
    mutate: (m) => {
      spec(m).volumeClaimUpdateStrategy = { type: 'OnDelete' };
    },
    expect: ['spec.volumeClaimUpdateStrategy.type', 'Unsupported value: "OnDelete"', '"OnClaimDelete"'],
  },
  {
    name: 'a scaleStrategy maxUnavailable of "10"',
    mutate: (m) => {
      spec(m).scaleStrategy = { maxUnavailable: '10' };
    },
    expect: ['spec.scaleStrategy.maxUnavailable', 'scaleStrategy.maxUnavailable must be an integer >= 0'],
  },
  {
    name: 'a serviceName longer than a Service name may be',
    mutate: (m) => {
      spec(m).serviceName = 's'.repeat(64);
    },
    expect: ['spec.serviceName', 'may not be more than 63 bytes'],
  },
  {
    name: 'a selector whose matchLabels the template labels do not carry',
    mutate: (m) => {
      spec(m).selector = { matchLabels: { app: 'nginx', track: 'stable' } };
    },
    expect: ['spec.template.metadata.labels', 'selector does not match template labels'],
  },
  {
    name: 'a selector on controller-revision-hash',
    mutate: (m) => {
      spec(m).selector = { matchExpressions: [{ key: 'controller-revision-hash', operator: 'Exists' }] };
    },
    expect: ['spec.selector', 'selector must not use controller-revision-hash'],
  },
  {
    name: 'a restartPolicy of Never',
    mutate: (m) => {
      podSpec(m).restartPolicy = 'Never';
    },
    expect: ['spec.template.spec.restartPolicy', 'restartPolicy must be Always', 'set it to Always'],
  },
  {
    name: 'a template label lifecycle.apps.tailor.dev/state',
    mutate: (m) => {
      ((spec(m).template as Json).metadata as { labels: Record<string, string> }).labels[
        'lifecycle.apps.tailor.dev/state'
      ] = 'Normal';
    },
    expect: ['spec.template.metadata.labels', 'labels under lifecycle.apps.tailor.dev/ (state) are Tailor'],
  },
  {
    name: 'two volumeClaimTemplates of one name',
    mutate: (m) => {
      const [claim] = spec(m).volumeClaimTemplates as Json[];
      spec(m).volumeClaimTemplates = [claim, claim];
    },
    expect: ['spec.volumeClaimTemplates', 'names must be unique'],
  },
  {
    name: 'replicas above 100000',
    mutate: (m) => {
      spec(m).replicas = 1_000_000;
    },
    expect: ['spec.replicas', 'less than or equal to 100000'],
  },
];

let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;

const create = (body: Manifest, dryRun?: string): Promise<Json> =>
  custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NAMESPACE,
    plural: PLURAL,
    body,
    dryRun,
  });

const get = (name: string): Promise<Manifest> =>
  custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural: PLURAL, name });

const mergePatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

const patch = (name: string, body: Json): Promise<Manifest> =>
  custom.patchNamespacedCustomObject(
    { group: GROUP, version: VERSION, namespace: NAMESPACE, plural: PLURAL, name, body },
    mergePatch,
  ) as Promise<Manifest>;

/** The failure of a call that must fail; undefined if it succeeded. */
const failureOf = (call: Promise<unknown>): Promise<{ code: number; message: string } | undefined> =>
  call.then(
    () => undefined,
    (err: unknown) => apiError(err),
  );

beforeAll(async () => {
  kc = loadTestKubeConfig();
  core = kc.makeApiClient(k8s.CoreV1Api);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await core.createNamespace({
    body: { metadata: { name: NAMESPACE, labels: { 'tailor.dev/test': 'stateful-crd-validation' } } },
  });
  await applyCrd(kc, 'apps.tailor.dev_inplacestatefulsets.yaml', CRD_NAME, () => create(valid('probe'), 'All'));
}, 90_000);

afterAll(async () => {
  if (core === undefined) return;
  await core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
}, 30_000);

describe('the InPlaceStatefulSet CRD', () => {
  it('accepts a native StatefulSet manifest with only apiVersion and kind changed, and fills in the defaults', async () => {
    const manifest = nativeStatefulSet('native');
    await create(manifest);
    const stored = await get('native');
    const { template: storedTemplate, ...storedSpec } = stored.spec;
    const { template: givenTemplate, ...givenSpec } = manifest.spec;
    expect(storedSpec).toEqual({
      ...givenSpec,
      podManagementPolicy: 'OrderedReady',
      revisionHistoryLimit: 10,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      updateStrategy: {
        type: 'RollingUpdate',
        resizeStrategy: { deferredTimeoutSeconds: 300, inProgressTimeoutSeconds: 3600 },
      },
    });
    // What the schema cannot default (rollingUpdate exists for RollingUpdate only; ordinals is
    // optional), the controller reads with withStatefulDefaults' values.
    const read = withStatefulDefaults(stored as unknown as InPlaceStatefulSet);
    expect(read.spec.updateStrategy?.rollingUpdate).toEqual({
      partition: 0,
      maxUnavailable: 1,
      podUpdatePolicy: 'InPlaceIfPossible',
    });
    expect(read.spec.ordinals).toEqual({ start: 0 });
    // Pod template fields outside the declared schema survive pruning.
    expect(storedTemplate).toEqual(givenTemplate);
    // A set not yet observed reads as in progress (observedGeneration 0), with every counter 0.
    expect(stored.status).toEqual({
      observedGeneration: 0,
      replicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      updatedReplicas: 0,
      updatedReadyReplicas: 0,
      updatedAvailableReplicas: 0,
      expectedUpdatedReplicas: 0,
    });
  });

  it('defaults replicas to 1, and the rollingUpdate fields whenever rollingUpdate is written', async () => {
    const m = valid('explicit-type');
    delete m.spec.replicas;
    m.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { partition: 2 } };
    await create(m);
    const stored = await get('explicit-type');
    expect(stored.spec.replicas).toBe(1);
    expect(stored.spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { partition: 2, maxUnavailable: 1, podUpdatePolicy: 'InPlaceIfPossible' },
      resizeStrategy: { deferredTimeoutSeconds: 300, inProgressTimeoutSeconds: 3600 },
    });
  });

  it('accepts OnDelete without rollingUpdate and adds none', async () => {
    const m = valid('on-delete');
    m.spec.updateStrategy = { type: 'OnDelete' };
    await create(m);
    expect((await get('on-delete')).spec.updateStrategy).toEqual({
      type: 'OnDelete',
      resizeStrategy: { deferredTimeoutSeconds: 300, inProgressTimeoutSeconds: 3600 },
    });
  });

  it('has at least 14 invalid cases in its table', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(14);
  });

  it.each(invalid.map((c, i) => ({ ...c, index: i })))(
    'rejects $name',
    async ({ mutate, expect: substrings, index }) => {
      const manifest = valid(`invalid-${index}`);
      mutate(manifest);
      const failure = await failureOf(create(manifest));
      expect(failure).toBeDefined();
      expect(failure?.code).toBe(422);
      for (const s of substrings) expect(failure?.message).toContain(s);
    },
  );

  it('accepts a claim retention policy of Delete, on delete and on scale-down, and keeps it', async () => {
    const m = valid('retention-delete');
    m.spec.persistentVolumeClaimRetentionPolicy = { whenDeleted: 'Delete', whenScaled: 'Delete' };
    const created = await create(m);
    expect((created.spec as Record<string, unknown>)['persistentVolumeClaimRetentionPolicy']).toEqual({
      whenDeleted: 'Delete',
      whenScaled: 'Delete',
    });
  });

  it('accepts a name of exactly 52 characters', async () => {
    await expect(create(valid(`n${'x'.repeat(51)}`))).resolves.toBeDefined();
  });

  it('accepts the same minReadySeconds in both places, and progressDeadlineSeconds MaxInt32', async () => {
    const m = valid('min-ready-both');
    m.spec.minReadySeconds = 30;
    m.spec.progressDeadlineSeconds = 2147483647;
    m.spec.updateStrategy = { rollingUpdate: { minReadySeconds: 30 } };
    await expect(create(m)).resolves.toBeDefined();
  });

  it("accepts an Advanced StatefulSet's fields as Kruise writes them and keeps them", async () => {
    const m = valid('kruise');
    const fields = {
      podManagementPolicy: 'Parallel',
      reserveOrdinals: [0, '2-5', 9],
      ordinals: { start: 2 },
      scaleStrategy: { maxUnavailable: 2 },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      lifecycle: {
        preDelete: { labelsHandler: { 'example.com/drained': 'false' }, markPodNotReady: true },
        inPlaceUpdate: { finalizersHandler: ['example.com/upgrade'] },
      },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          partition: 32767,
          maxUnavailable: '50%',
          podUpdatePolicy: 'InPlaceOnly',
          paused: true,
          unorderedUpdate: { priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } },
          inPlaceUpdateStrategy: { gracePeriodSeconds: 10 },
          minReadySeconds: 3,
        },
        resizeStrategy: { onTimeout: 'Wait', onInfeasible: 'Wait' },
      },
      progressDeadlineSeconds: 600,
    };
    Object.assign(m.spec, fields);
    await create(m);
    const stored = await get('kruise');
    expect(stored.spec).toMatchObject({
      ...fields,
      updateStrategy: {
        ...fields.updateStrategy,
        resizeStrategy: {
          deferredTimeoutSeconds: 300,
          inProgressTimeoutSeconds: 3600,
          onTimeout: 'Wait',
          onInfeasible: 'Wait',
        },
      },
    });
  });

  it('defaults volumeClaimUpdateStrategy.type to OnClaimDelete once the strategy is written', async () => {
    const m = valid('claim-update');
    m.spec.volumeClaimUpdateStrategy = {};
    await create(m);
    expect((await get('claim-update')).spec.volumeClaimUpdateStrategy).toEqual({ type: 'OnClaimDelete' });
  });

  it('keeps the selector immutable and lets what apps/v1 lets change change', async () => {
    await create(valid('immutable'));
    const selector = await failureOf(
      patch('immutable', {
        spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } } } },
      }),
    );
    expect(selector?.code).toBe(422);
    expect(selector?.message).toContain('spec.selector');
    expect(selector?.message).toContain('selector is immutable');
    const patched = await patch('immutable', {
      spec: { replicas: 5, ordinals: { start: 1 }, updateStrategy: { rollingUpdate: { partition: 2 } } },
    });
    expect(patched.spec).toMatchObject({ replicas: 5, ordinals: { start: 1 } });
  });

  it.each([
    { field: 'serviceName', change: { serviceName: 'other' }, says: 'serviceName cannot change once the set exists' },
    {
      field: 'podManagementPolicy',
      change: { podManagementPolicy: 'Parallel' },
      says: 'podManagementPolicy cannot change once the set exists',
    },
  ])('keeps $field as it was created, as a StatefulSet does', async ({ field, change, says }) => {
    const name = `fixed-${field.toLowerCase()}`;
    await create(valid(name));
    const failure = await failureOf(patch(name, { spec: change }));
    expect(failure?.code).toBe(422);
    expect(failure?.message).toContain(says);
  });

  it('moves to OnDelete by its type, once a rollingUpdate written is removed (null in a merge patch)', async () => {
    await create(valid('to-on-delete'));
    const moved = await patch('to-on-delete', { spec: { updateStrategy: { type: 'OnDelete' } } });
    expect(moved.spec.updateStrategy).toMatchObject({ type: 'OnDelete' });
    const m = valid('rolling-to-on-delete');
    m.spec.updateStrategy = { rollingUpdate: { partition: 1 } };
    await create(m);
    const kept = await failureOf(patch('rolling-to-on-delete', { spec: { updateStrategy: { type: 'OnDelete' } } }));
    expect(kept?.code).toBe(422);
    expect(kept?.message).toContain('remove rollingUpdate');
    const removed = await patch('rolling-to-on-delete', {
      spec: { updateStrategy: { type: 'OnDelete', rollingUpdate: null } },
    });
    expect(removed.spec.updateStrategy).toEqual({
      type: 'OnDelete',
      resizeStrategy: { deferredTimeoutSeconds: 300, inProgressTimeoutSeconds: 3600 },
    });
  });

  // Kruise Rollout's steps (docs/research/stateful-kind-facts.md §5): initialize sets partition
  // 32767 and paused false, finalize merge-patches partition to null; the schema default brings 0 back.
  it('takes the partition patches of Kruise Rollout and sets partition back to 0 on null', async () => {
    await create(valid('rollout'));
    const held = await patch('rollout', {
      spec: { updateStrategy: { rollingUpdate: { partition: 32767, paused: false } } },
    });
    expect(held.spec.updateStrategy).toMatchObject({ rollingUpdate: { partition: 32767, paused: false } });
    const released = await patch('rollout', { spec: { updateStrategy: { rollingUpdate: { partition: null } } } });
    expect(released.spec.updateStrategy).toMatchObject({
      type: 'RollingUpdate',
      rollingUpdate: { partition: 0, maxUnavailable: 1, podUpdatePolicy: 'InPlaceIfPossible', paused: false },
    });
  });

  it('serves the scale subresource from spec.replicas and status, within the replicas bound', async () => {
    const m = valid('scaled');
    m.spec.replicas = 2;
    await create(m);
    await custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: PLURAL,
        name: 'scaled',
        body: { status: { replicas: 2, labelSelector: 'app=nginx' } },
      },
      mergePatch,
    );
    const scaleOf = { group: GROUP, version: VERSION, namespace: NAMESPACE, plural: PLURAL, name: 'scaled' };
    const scale = (await custom.getNamespacedCustomObjectScale(scaleOf)) as {
      spec: { replicas: number };
      status: { replicas: number; selector: string };
    };
    expect(scale.spec.replicas).toBe(2);
    expect(scale.status).toEqual({ replicas: 2, selector: 'app=nginx' });
    await custom.patchNamespacedCustomObjectScale({ ...scaleOf, body: { spec: { replicas: 4 } } }, mergePatch);
    expect((await get('scaled')).spec.replicas).toBe(4);
    const refused = await failureOf(
      custom.patchNamespacedCustomObjectScale({ ...scaleOf, body: { spec: { replicas: 1_000_000 } } }, mergePatch),
    );
    expect(refused?.code).toBe(422);
    expect(refused?.message).toMatch(/spec.replicas.*less than or equal to 100000/);
  });

  it('takes the status the CloneSet status writer writes', async () => {
    await create(valid('status'));
    await custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: PLURAL,
        name: 'status',
        body: {
          status: {
            observedGeneration: 1,
            replicas: 3,
            updatedReplicas: 2,
            currentRevision: 'status-5d8f7c9b6d',
            updateRevision: 'status-7f9c8d6b5a',
            collisionCount: 0,
            labelSelector: 'app=nginx',
            conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' }],
            resize: { resizing: 1, inProgress: 1, pods: [{ name: 'status-2', state: 'InProgress' }] },
          },
        },
      },
      mergePatch,
    );
    expect((await get('status')).status).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      updatedReplicas: 2,
      readyReplicas: 0,
      updatedReadyReplicas: 0,
      currentRevision: 'status-5d8f7c9b6d',
      resize: { resizing: 1, proposed: 0, inProgress: 1, deferred: 0, infeasible: 0 },
    });
  });

  it('shows the progress columns and the resize counts, with images and selector in wide output', async () => {
    await create(valid('columns'));
    await custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: PLURAL,
        name: 'columns',
        body: {
          status: {
            replicas: 3,
            readyReplicas: 2,
            updatedReplicas: 1,
            labelSelector: 'app=nginx',
            resize: { resizing: 1, deferred: 1, infeasible: 2 },
          },
        },
      },
      mergePatch,
    );
    const table = (await custom.getNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace: NAMESPACE, plural: PLURAL, name: 'columns' },
      k8s.setHeaderOptions('Accept', 'application/json;as=Table;v=v1;g=meta.k8s.io'),
    )) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    const names = table.columnDefinitions.map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'Name',
        'DESIRED',
        'UPDATED',
        'READY',
        'RESIZING',
        'INFEASIBLE',
        'AGE',
        'IMAGES',
        'SELECTOR',
      ]),
    );
    expect(names.slice(-2)).toEqual(['IMAGES', 'SELECTOR']);
    const cells = table.rows[0]?.cells ?? [];
    const cell = (name: string): unknown => cells[names.indexOf(name)];
    expect([cell('DESIRED'), cell('UPDATED'), cell('READY')]).toEqual([3, 1, 2]);
    expect([cell('RESIZING'), cell('INFEASIBLE')]).toEqual([1, 2]);
    expect(cell('IMAGES')).toBe('registry.k8s.io/nginx-slim:0.24');
    expect(cell('SELECTOR')).toBe('app=nginx');
  });
});
