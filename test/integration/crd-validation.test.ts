// The CloneSet CRD against a real kube-apiserver: every invalid manifest is rejected with a
// message that says what to fix, valid ones are accepted with the schema's defaults, and the
// scale/status subresources and printer columns work. Owns its own namespace; applies (creates or
// replaces) the CRD from crds/ but never deletes it, since other tests share it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { loadTestKubeConfig } from '../support/cluster/kube.js';
import { apiError, applyCrd } from '../support/cluster/crd-apply.js';

const GROUP = 'apps.tailor.dev';
const VERSION = 'v1alpha1';
const PLURAL = 'clonesets';
const CRD_NAME = `${PLURAL}.${GROUP}`;
const NAMESPACE = `tailor-crd-validation-${Date.now().toString(36)}`;

type Json = Record<string, unknown>;
type Manifest = Json & { metadata: { name: string; labels?: Record<string, string> }; spec: Json };

/** A valid CloneSet; cases below break one thing each. */
function valid(name: string): Manifest {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'CloneSet',
    metadata: { name, labels: { 'tailor.dev/test': 'true' } },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web', tier: 'front' }, annotations: { note: 'kept' } },
        spec: {
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: 'main',
              image: 'tailor.test/busybox:v1',
              imagePullPolicy: 'Never',
              command: ['sleep', '3600'],
              resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
              resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
            },
          ],
        },
      },
    },
  };
}

/** A volumeClaimTemplates entry as Kruise's e2e writes it. */
const claimTemplate = (name: string): Json => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});

type Mutate = (m: Manifest) => void;
const spec = (m: Manifest): Json => m.spec;
const template = (m: Manifest): Json => spec(m).template as Json;
const podSpec = (m: Manifest): Json => template(m).spec as Json;
const updateStrategy = (m: Manifest, s: Json): void => {
  spec(m).updateStrategy = s;
};

interface InvalidCase {
  name: string;
  mutate: Mutate;
  /** Every substring must appear in the API server's message. */
  expect: string[];
}

const invalid: InvalidCase[] = [
  {
    name: 'a name of 53 characters, whose revision label could not fit 63',
    mutate: (m) => {
      m.metadata.name = `n${'x'.repeat(52)}`;
    },
    expect: ['metadata.name must be at most 52 characters', 'label values are limited to 63 characters'],
  },
  {
    name: 'a CloneSet without a selector',
    mutate: (m) => delete spec(m).selector,
    expect: ['spec.selector: Required value'],
  },
  {
    name: 'a selector whose matchLabels the template labels do not carry',
    mutate: (m) => {
      spec(m).selector = { matchLabels: { app: 'web', track: 'stable' } };
    },
    expect: ['spec.template.metadata.labels', 'selector does not match template labels', 'spec.selector.matchLabels'],
  },
  {
    name: 'a selector whose matchLabels value differs from the template label',
    mutate: (m) => {
      (template(m).metadata as Json).labels = { app: 'api' };
    },
    expect: ['selector does not match template labels', 'with the same value'],
  },
  {
    name: 'a template without labels',
    mutate: (m) => delete (template(m).metadata as Json).labels,
    expect: ['selector does not match template labels'],
  },
  {
    name: 'a selector whose matchExpressions the template labels do not satisfy',
    mutate: (m) => {
      spec(m).selector = { matchExpressions: [{ key: 'app', operator: 'In', values: ['api', 'db'] }] };
    },
    expect: ['selector does not match template labels', 'matchExpressions'],
  },
  {
    name: 'an empty selector',
    mutate: (m) => {
      spec(m).selector = {};
    },
    expect: ['spec.selector', 'selector must not be empty'],
  },
  {
    name: 'an In expression without values',
    mutate: (m) => {
      spec(m).selector = { matchExpressions: [{ key: 'app', operator: 'In' }] };
    },
    expect: ['values must be non-empty when operator is In or NotIn'],
  },
  {
    name: 'negative replicas',
    mutate: (m) => {
      spec(m).replicas = -1;
    },
    expect: ['spec.replicas', 'greater than or equal to 0'],
  },
  {
    name: 'a partition of "150%"',
    mutate: (m) => updateStrategy(m, { partition: '150%' }),
    expect: [
      'spec.updateStrategy.partition',
      'partition must be an integer >= 0 or a percentage from "0%" to "100%", not "150%"',
    ],
  },
  {
    name: 'a negative partition',
    mutate: (m) => updateStrategy(m, { partition: -2 }),
    expect: ['spec.updateStrategy.partition', 'partition must be an integer >= 0', 'not -2'],
  },
  {
    name: 'maxSurge above 0 with InPlaceOnly',
    mutate: (m) => updateStrategy(m, { type: 'InPlaceOnly', maxSurge: 1 }),
    expect: ['spec.updateStrategy.maxSurge', 'maxSurge must be 0 when updateStrategy.type is InPlaceOnly'],
  },
  {
    name: 'a percentage maxSurge with InPlaceOnly',
    mutate: (m) => updateStrategy(m, { type: 'InPlaceOnly', maxSurge: '10%' }),
    expect: ['maxSurge must be 0 when updateStrategy.type is InPlaceOnly'],
  },
  {
    name: 'an unknown update strategy type',
    mutate: (m) => updateStrategy(m, { type: 'RollingUpdate' }),
    expect: ['spec.updateStrategy.type', 'Unsupported value: "RollingUpdate"', '"InPlaceIfPossible"'],
  },
  {
    name: 'a maxUnavailable of "abc"',
    mutate: (m) => updateStrategy(m, { maxUnavailable: 'abc' }),
    expect: ['spec.updateStrategy.maxUnavailable', 'maxUnavailable must be an integer >= 0 or a percentage'],
  },
  {
    name: 'a maxUnavailable written as a word',
    mutate: (m) => updateStrategy(m, { maxUnavailable: 'twenty' }),
    expect: ['spec.updateStrategy.maxUnavailable', 'a percentage from "0%" to "100%", not "twenty"'],
  },
  {
    name: 'a maxSurge of "5" (a number in quotes)',
    mutate: (m) => updateStrategy(m, { maxSurge: '5' }),
    expect: ['spec.updateStrategy.maxSurge', 'maxSurge must be an integer >= 0 or a percentage'],
  },
  {
    name: 'maxUnavailable and maxSurge both 0',
    mutate: (m) => updateStrategy(m, { maxUnavailable: 0, maxSurge: 0 }),
    expect: ['spec.updateStrategy.maxUnavailable', 'maxUnavailable and maxSurge must not both be 0'],
  },
  {
    name: 'maxUnavailable "0%" with the default maxSurge of 0',
    mutate: (m) => updateStrategy(m, { maxUnavailable: '0%' }),
    expect: ['maxUnavailable and maxSurge must not both be 0'],
  },
  {
    name: 'a restartPolicy of Never',
    mutate: (m) => {
      podSpec(m).restartPolicy = 'Never';
    },
    expect: ['spec.template.spec.restartPolicy', 'restartPolicy must be Always'],
  },
  {
    name: 'an empty containers list',
    mutate: (m) => {
      podSpec(m).containers = [];
    },
    expect: ['spec.template.spec.containers', 'should have at least 1 items'],
  },
  {
    name: 'a pod template without containers',
    mutate: (m) => delete podSpec(m).containers,
    expect: ['spec.template.spec.containers: Required value'],
  },
  {
    name: 'two containers with the same name',
    mutate: (m) => {
      podSpec(m).containers = [
        { name: 'main', image: 'a' },
        { name: 'main', image: 'b' },
      ];
    },
    expect: ['spec.template.spec.containers[1]', 'Duplicate value'],
  },
  {
    name: 'a negative in-place update grace period',
    mutate: (m) => updateStrategy(m, { inPlaceUpdateStrategy: { gracePeriodSeconds: -5 } }),
    expect: ['spec.updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds', 'greater than or equal to 0'],
  },
  {
    name: 'an unknown onInfeasible action',
    mutate: (m) => updateStrategy(m, { type: 'InPlaceIfPossible', resizeStrategy: { onInfeasible: 'Delete' } }),
    expect: ['spec.updateStrategy.resizeStrategy.onInfeasible', 'Unsupported value: "Delete"'],
  },
  {
    name: 'onInfeasible Recreate with InPlaceOnly',
    mutate: (m) => updateStrategy(m, { type: 'InPlaceOnly', resizeStrategy: { onInfeasible: 'Recreate' } }),
    expect: ['spec.updateStrategy.resizeStrategy', 'InPlaceOnly never recreates pods'],
  },
  {
    name: 'a scaleStrategy maxUnavailable of "10"',
    mutate: (m) => {
      spec(m).scaleStrategy = { maxUnavailable: '10' };
    },
    expect: [
      'spec.scaleStrategy.maxUnavailable',
      'scaleStrategy.maxUnavailable must be an integer >= 0 or a percentage',
    ],
  },
  {
    name: 'a progressDeadlineSeconds not above minReadySeconds',
    mutate: (m) => {
      spec(m).minReadySeconds = 30;
      spec(m).progressDeadlineSeconds = 30;
    },
    expect: ['spec.progressDeadlineSeconds', 'progressDeadlineSeconds must be greater than minReadySeconds'],
  },
  {
    name: 'a negative revisionHistoryLimit',
    mutate: (m) => {
      spec(m).revisionHistoryLimit = -1;
    },
    expect: ['spec.revisionHistoryLimit', 'greater than or equal to 0'],
  },
  // Issue 20: bounded input, and no label Tailor sets per pod in the selector or template.
  {
    name: 'replicas above 100000',
    mutate: (m) => {
      spec(m).replicas = 1_000_000;
    },
    expect: ['spec.replicas', 'less than or equal to 100000'],
  },
  {
    name: 'a revisionHistoryLimit above 100',
    mutate: (m) => {
      spec(m).revisionHistoryLimit = 101;
    },
    expect: ['spec.revisionHistoryLimit', 'less than or equal to 100'],
  },
  {
    name: 'a pod named twice in podsToDelete',
    mutate: (m) => {
      spec(m).scaleStrategy = { podsToDelete: ['web-a', 'web-a'] };
    },
    expect: ['spec.scaleStrategy.podsToDelete[1]', 'Duplicate value'],
  },
  {
    name: 'a lifecycle hook with more than 16 labels',
    mutate: (m) => {
      spec(m).lifecycle = {
        preDelete: { labelsHandler: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`hook-${i}`, 'true'])) },
      };
    },
    expect: ['spec.lifecycle.preDelete.labelsHandler', 'must have at most 16 items'],
  },
  {
    name: 'a lifecycle hook label value longer than a label value may be',
    mutate: (m) => {
      spec(m).lifecycle = { preNormal: { labelsHandler: { warm: 'x'.repeat(64) } } };
    },
    expect: ['spec.lifecycle.preNormal.labelsHandler.warm', 'Too long'],
  },
  {
    name: 'a lifecycle hook label key longer than a label key may be',
    mutate: (m) => {
      spec(m).lifecycle = { preNormal: { labelsHandler: { ['k'.repeat(318)]: 'true' } } };
    },
    expect: [
      'spec.lifecycle.preNormal.labelsHandler',
      'a labelsHandler key must be a label key of at most 317 characters',
    ],
  },
  {
    name: 'a lifecycle hook finalizer named twice',
    mutate: (m) => {
      spec(m).lifecycle = { inPlaceUpdate: { finalizersHandler: ['example.com/drain', 'example.com/drain'] } };
    },
    expect: ['spec.lifecycle.inPlaceUpdate.finalizersHandler[1]', 'Duplicate value'],
  },
  {
    name: 'an empty lifecycle hook finalizer',
    mutate: (m) => {
      spec(m).lifecycle = { preDelete: { finalizersHandler: [''] } };
    },
    expect: ['spec.lifecycle.preDelete.finalizersHandler[0]', 'at least 1 chars long'],
  },
  {
    name: 'more than 16 lifecycle hook finalizers',
    mutate: (m) => {
      spec(m).lifecycle = {
        preDelete: { finalizersHandler: Array.from({ length: 17 }, (_, i) => `example.com/f${i}`) },
      };
    },
    expect: ['spec.lifecycle.preDelete.finalizersHandler', 'must have at most 16 items'],
  },
  {
    name: 'an excludePreparingDelete that is not a boolean',
    mutate: (m) => {
      spec(m).scaleStrategy = { excludePreparingDelete: 'yes' };
    },
    expect: ['spec.scaleStrategy.excludePreparingDelete', 'must be of type boolean'],
  },
  {
    name: 'more than 8 volumeClaimTemplates',
    mutate: (m) => {
      spec(m).volumeClaimTemplates = Array.from({ length: 9 }, (_, i) => claimTemplate(`data${i}`));
    },
    expect: ['spec.volumeClaimTemplates', 'must have at most 8 items'],
  },
  {
    name: 'a volumeClaimTemplates name that is not a DNS label',
    mutate: (m) => {
      spec(m).volumeClaimTemplates = [claimTemplate('Data_Vol')];
    },
    expect: ['spec.volumeClaimTemplates[0].metadata.name', 'must be a DNS label', '"Data_Vol" is not'],
  },
  {
    name: 'a volumeClaimTemplates name over 63 characters',
    mutate: (m) => {
      spec(m).volumeClaimTemplates = [claimTemplate('d'.repeat(64))];
    },
    expect: ['spec.volumeClaimTemplates[0].metadata.name', 'may not be more than 63 bytes'],
  },
  {
    name: 'two volumeClaimTemplates of one name',
    mutate: (m) => {
      spec(m).volumeClaimTemplates = [claimTemplate('data'), claimTemplate('data')];
    },
    expect: ['spec.volumeClaimTemplates', 'names must be unique', 'rename or remove the duplicate'],
  },
  {
    name: 'a volumeClaimTemplate without a name',
    mutate: (m) => {
      spec(m).volumeClaimTemplates = [{ metadata: {}, spec: claimTemplate('x').spec }];
    },
    expect: ['spec.volumeClaimTemplates[0].metadata.name', 'Required value'],
  },
  {
    name: 'a volumeClaimTemplate that asks for no storage',
    mutate: (m) => {
      spec(m).volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }];
    },
    expect: ['spec.volumeClaimTemplates[0].spec', 'set spec.resources.requests.storage'],
  },
  {
    name: 'a disablePVCReuse that is not a boolean',
    mutate: (m) => {
      spec(m).scaleStrategy = { disablePVCReuse: 'yes' };
    },
    expect: ['spec.scaleStrategy.disablePVCReuse', 'must be of type boolean'],
  },
  {
    name: 'a partition above 2^53',
    mutate: (m) => updateStrategy(m, { partition: 2 ** 53 + 2 }),
    expect: ['spec.updateStrategy.partition', 'partition must not exceed 2147483647'],
  },
  {
    name: 'a maxSurge above int32',
    mutate: (m) => updateStrategy(m, { maxSurge: 2 ** 31 }),
    expect: ['spec.updateStrategy.maxSurge', 'maxSurge must not exceed 2147483647'],
  },
  {
    name: 'a selector on controller-revision-hash',
    mutate: (m) => {
      spec(m).selector = { matchLabels: { app: 'web', 'controller-revision-hash': 'web-abc' } };
      (template(m).metadata as { labels: Record<string, string> }).labels['controller-revision-hash'] = 'web-abc';
    },
    expect: ['spec.selector', 'selector must not use controller-revision-hash or apps.tailor.dev/instance-id'],
  },
  {
    name: 'a selector expression on the instance id',
    mutate: (m) => {
      spec(m).selector = {
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'apps.tailor.dev/instance-id', operator: 'Exists' }],
      };
    },
    expect: ['spec.selector', 'selector must not use controller-revision-hash or apps.tailor.dev/instance-id'],
  },
  {
    name: 'a template label apps.tailor.dev/instance-id',
    mutate: (m) => {
      (template(m).metadata as { labels: Record<string, string> }).labels['apps.tailor.dev/instance-id'] = 'abcde';
    },
    expect: ['spec.template.metadata.labels', 'are set by Tailor on each pod'],
  },
  {
    name: 'a template label lifecycle.apps.tailor.dev/state',
    mutate: (m) => {
      (template(m).metadata as { labels: Record<string, string> }).labels['lifecycle.apps.tailor.dev/state'] =
        'PreparingDelete';
    },
    expect: ['spec.template.metadata.labels', 'labels under lifecycle.apps.tailor.dev/ (state) are Tailor'],
  },
  {
    name: 'a template annotation lifecycle.apps.tailor.dev/timestamp',
    mutate: (m) => {
      (template(m).metadata as { annotations?: Record<string, string> }).annotations = {
        'lifecycle.apps.tailor.dev/timestamp': '2026-01-01T00:00:00Z',
      };
    },
    expect: ['spec.template.metadata.annotations', 'are not allowed in spec.template.metadata.annotations'],
  },
  {
    name: 'a priorityStrategy with both weightPriority and orderPriority',
    mutate: (m) =>
      updateStrategy(m, {
        priorityStrategy: {
          weightPriority: [{ weight: 50, matchSelector: { matchLabels: { zone: 'a' } } }],
          orderPriority: [{ orderedKey: 'rank' }],
        },
      }),
    expect: [
      'spec.updateStrategy.priorityStrategy',
      'priorityStrategy must set exactly one of weightPriority and orderPriority',
    ],
  },
  {
    name: 'an empty priorityStrategy',
    mutate: (m) => updateStrategy(m, { priorityStrategy: {} }),
    expect: ['spec.updateStrategy.priorityStrategy', 'keep one list, or remove priorityStrategy'],
  },
  {
    name: 'a priority weight above 100',
    mutate: (m) =>
      updateStrategy(m, {
        priorityStrategy: { weightPriority: [{ weight: 101, matchSelector: { matchLabels: { zone: 'a' } } }] },
      }),
    expect: ['spec.updateStrategy.priorityStrategy.weightPriority[0].weight', 'less than or equal to 100'],
  },
  {
    name: 'a negative priority weight',
    mutate: (m) =>
      updateStrategy(m, {
        priorityStrategy: { weightPriority: [{ weight: -1, matchSelector: { matchLabels: { zone: 'a' } } }] },
      }),
    expect: ['spec.updateStrategy.priorityStrategy.weightPriority[0].weight', 'greater than or equal to 0'],
  },
  {
    name: 'a weight term with an empty matchSelector',
    mutate: (m) => updateStrategy(m, { priorityStrategy: { weightPriority: [{ weight: 10, matchSelector: {} }] } }),
    expect: ['spec.updateStrategy.priorityStrategy.weightPriority[0].matchSelector', 'matchSelector must not be empty'],
  },
  {
    name: 'an empty orderedKey',
    mutate: (m) => updateStrategy(m, { priorityStrategy: { orderPriority: [{ orderedKey: '' }] } }),
    expect: ['spec.updateStrategy.priorityStrategy.orderPriority[0].orderedKey', 'at least 1 chars long'],
  },
  {
    name: 'more than 16 weight terms',
    mutate: (m) =>
      updateStrategy(m, {
        priorityStrategy: {
          weightPriority: Array.from({ length: 17 }, (_, i) => ({
            weight: 1,
            matchSelector: { matchLabels: { zone: `z${i}` } },
          })),
        },
      }),
    expect: ['spec.updateStrategy.priorityStrategy.weightPriority', 'must have at most 16 items'],
  },
  {
    name: 'a scatterStrategy that repeats a term',
    mutate: (m) =>
      updateStrategy(m, {
        scatterStrategy: [
          { key: 'zone', value: 'a' },
          { key: 'zone', value: 'a' },
        ],
      }),
    expect: ['spec.updateStrategy.scatterStrategy', 'scatterStrategy must not repeat a key and value'],
  },
  {
    name: 'a scatter term without a key',
    mutate: (m) => updateStrategy(m, { scatterStrategy: [{ value: 'a' }] }),
    expect: ['spec.updateStrategy.scatterStrategy[0].key', 'Required value'],
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

beforeAll(async () => {
  kc = loadTestKubeConfig();
  core = kc.makeApiClient(k8s.CoreV1Api);
  custom = kc.makeApiClient(k8s.CustomObjectsApi);
  await core.createNamespace({
    body: { metadata: { name: NAMESPACE, labels: { 'tailor.dev/test': 'crd-validation' } } },
  });
  await applyCrd(kc, 'apps.tailor.dev_clonesets.yaml', CRD_NAME, () => create(valid('probe'), 'All'));
}, 90_000);

afterAll(async () => {
  if (core === undefined) return;
  await core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
}, 30_000);

describe('the CloneSet CRD', () => {
  it('has at least 14 invalid cases in its table', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(14);
  });

  it.each(invalid.map((c, i) => ({ ...c, index: i })))(
    'rejects $name',
    async ({ mutate, expect: substrings, index }) => {
      const manifest = valid(`invalid-${index}`);
      mutate(manifest);
      let failure: { code: number; message: string } | undefined;
      try {
        await create(manifest);
      } catch (err) {
        failure = apiError(err);
      }
      expect(failure).toBeDefined();
      expect(failure?.code).toBe(422);
      for (const s of substrings) expect(failure?.message).toContain(s);
    },
  );

  it('rejects a change of selector on update', async () => {
    await create(valid('immutable'));
    let failure: { code: number; message: string } | undefined;
    try {
      await custom.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          namespace: NAMESPACE,
          plural: PLURAL,
          name: 'immutable',
          body: {
            spec: {
              selector: { matchLabels: { app: 'api' } },
              template: { metadata: { labels: { app: 'api' } } },
            },
          },
        },
        mergePatch,
      );
    } catch (err) {
      failure = apiError(err);
    }
    expect(failure?.code).toBe(422);
    expect(failure?.message).toContain('spec.selector');
    expect(failure?.message).toContain('selector is immutable');
  });

  it('accepts other changes on update, such as a new image and replicas', async () => {
    await create(valid('mutable'));
    const patched = (await custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: PLURAL,
        name: 'mutable',
        body: { spec: { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible' } } },
      },
      mergePatch,
    )) as Manifest;
    expect(patched.spec.replicas).toBe(3);
  });

  it('accepts a name of exactly 52 characters', async () => {
    const manifest = valid(`n${'x'.repeat(51)}`);
    await expect(create(manifest)).resolves.toBeDefined();
  });

  // Issue 22: Kruise's and Deployment's "no deadline" ports as it is.
  it('accepts progressDeadlineSeconds and minReadySeconds both MaxInt32, as Kruise does', async () => {
    const manifest = valid('maxint');
    manifest.spec.minReadySeconds = 2147483647;
    manifest.spec.progressDeadlineSeconds = 2147483647;
    await expect(create(manifest)).resolves.toBeDefined();
  });

  it('accepts a minimal CloneSet and fills in the defaults', async () => {
    await create(valid('minimal'));
    const stored = await get('minimal');
    expect(stored.spec.replicas).toBe(1);
    expect(stored.spec.revisionHistoryLimit).toBe(10);
    expect(stored.spec.updateStrategy).toEqual({
      type: 'ReCreate',
      partition: 0,
      maxUnavailable: '20%',
      maxSurge: 0,
      resizeStrategy: { deferredTimeoutSeconds: 300, inProgressTimeoutSeconds: 3600 },
    });
    expect(stored.spec.scaleStrategy).toEqual({});
    // Pod template fields outside the declared schema survive pruning.
    const storedTemplate = stored.spec.template as { metadata: Json; spec: { containers: Json[] } & Json };
    expect(storedTemplate.metadata.annotations).toEqual({ note: 'kept' });
    expect(storedTemplate.spec.terminationGracePeriodSeconds).toBe(5);
    expect(storedTemplate.spec.containers[0]?.resources).toEqual({
      requests: { cpu: '100m', memory: '32Mi' },
      limits: { cpu: '200m', memory: '64Mi' },
    });
    expect(storedTemplate.spec.containers[0]?.resizePolicy).toEqual([
      { resourceName: 'cpu', restartPolicy: 'NotRequired' },
    ]);
  });

  // Issue 32: Kruise Rollout's finalize step merge-patches partition to null; Kruise's webhook
  // then stores 0 again, and so does the schema default here (partition is not nullable, so the
  // null is dropped and the default applies), never an absent partition a reader takes as held.
  it('sets partition back to 0 when a merge patch sets it to null', async () => {
    const m = valid('partition-null');
    m.spec.updateStrategy = { type: 'InPlaceIfPossible', partition: 3 };
    await create(m);
    expect((await get('partition-null')).spec.updateStrategy).toMatchObject({ partition: 3 });
    const patched = (await custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: PLURAL,
        name: 'partition-null',
        body: { spec: { updateStrategy: { partition: null } } },
      },
      mergePatch,
    )) as Manifest;
    expect(patched.spec.updateStrategy).toMatchObject({ type: 'InPlaceIfPossible', partition: 0 });
    expect((await get('partition-null')).spec.updateStrategy).toMatchObject({
      type: 'InPlaceIfPossible',
      partition: 0,
    });
  });

  it('sets partition and the whole updateStrategy back to their defaults when a JSON patch removes them', async () => {
    const m = valid('strategy-removed');
    m.spec.updateStrategy = { partition: '50%', maxUnavailable: 2 };
    await create(m);
    const jsonPatch = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
    const patch = (body: Json[]): Promise<Manifest> =>
      custom.patchNamespacedCustomObject(
        { group: GROUP, version: VERSION, namespace: NAMESPACE, plural: PLURAL, name: 'strategy-removed', body },
        jsonPatch,
      ) as Promise<Manifest>;
    expect((await patch([{ op: 'remove', path: '/spec/updateStrategy/partition' }])).spec.updateStrategy).toMatchObject(
      {
        partition: 0,
        maxUnavailable: 2,
      },
    );
    const removed = await patch([{ op: 'remove', path: '/spec/updateStrategy' }]);
    expect(removed.spec.updateStrategy).toEqual({
      type: 'ReCreate',
      partition: 0,
      maxUnavailable: '20%',
      maxSurge: 0,
      resizeStrategy: { deferredTimeoutSeconds: 300, inProgressTimeoutSeconds: 3600 },
    });
  });

  it('reads every status counter as 0 once a status is written, even one that names none', async () => {
    await create(valid('counters'));
    await custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: PLURAL,
        name: 'counters',
        body: {
          status: {
            observedGeneration: 1,
            conditions: [{ type: 'FailedRevision', status: 'True', reason: 'ApiRefused' }],
          },
        },
      },
      mergePatch,
    );
    expect((await get('counters')).status).toMatchObject({
      replicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      updatedReplicas: 0,
      updatedReadyReplicas: 0,
      updatedAvailableReplicas: 0,
      expectedUpdatedReplicas: 0,
    });
  });

  it('accepts a fully specified InPlaceOnly CloneSet and keeps its values', async () => {
    const m = valid('full');
    Object.assign(m.spec, {
      replicas: 4,
      selector: {
        matchLabels: { app: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['front', 'edge'] },
          { key: 'canary', operator: 'DoesNotExist' },
          { key: 'tier', operator: 'Exists' },
          { key: 'app', operator: 'NotIn', values: ['db'] },
        ],
      },
      scaleStrategy: { podsToDelete: ['full-abcde'], maxUnavailable: '50%' },
      updateStrategy: {
        type: 'InPlaceOnly',
        partition: '25%',
        maxUnavailable: 1,
        maxSurge: '0%',
        paused: true,
        inPlaceUpdateStrategy: { gracePeriodSeconds: 10 },
        resizeStrategy: { inProgressTimeoutSeconds: 120, onTimeout: 'Wait', onInfeasible: 'Wait' },
      },
      minReadySeconds: 5,
      revisionHistoryLimit: 3,
      progressDeadlineSeconds: 600,
    });
    podSpec(m).restartPolicy = 'Always';
    await create(m);
    const stored = await get('full');
    expect(stored.spec.updateStrategy).toEqual({
      type: 'InPlaceOnly',
      partition: '25%',
      maxUnavailable: 1,
      maxSurge: '0%',
      paused: true,
      inPlaceUpdateStrategy: { gracePeriodSeconds: 10 },
      resizeStrategy: {
        deferredTimeoutSeconds: 300,
        inProgressTimeoutSeconds: 120,
        onTimeout: 'Wait',
        onInfeasible: 'Wait',
      },
    });
    expect(stored.spec.progressDeadlineSeconds).toBe(600);
    expect(stored.spec.scaleStrategy).toEqual({ podsToDelete: ['full-abcde'], maxUnavailable: '50%' });
  });

  it('accepts lifecycle hooks as Kruise writes them, and excludePreparingDelete, and keeps them', async () => {
    const m = valid('crd-lifecycle');
    const lifecycle = {
      preDelete: { labelsHandler: { 'example.com/drained': 'false' }, markPodNotReady: true },
      inPlaceUpdate: { finalizersHandler: ['example.com/upgrade'], markPodNotReady: true },
      preNormal: { finalizersHandler: ['finalizers.sigs.k8s.io/test'], labelsHandler: { warm: 'true' } },
    };
    Object.assign(m.spec, { lifecycle, scaleStrategy: { excludePreparingDelete: true } });
    await create(m);
    const stored = await get('crd-lifecycle');
    expect([stored.spec.lifecycle, stored.spec.scaleStrategy]).toEqual([lifecycle, { excludePreparingDelete: true }]);
  });

  it('accepts volumeClaimTemplates and disablePVCReuse as Kruise writes them and keeps them', async () => {
    const m = valid('crd-claims');
    const volumeClaimTemplates = [
      claimTemplate('data-vol1'),
      {
        metadata: { name: 'data-vol2', labels: { tier: 'db' } },
        spec: { storageClassName: 'local', resources: { requests: { storage: '2Gi' } } },
      },
    ];
    Object.assign(m.spec, { volumeClaimTemplates, scaleStrategy: { disablePVCReuse: true } });
    await create(m);
    const stored = await get('crd-claims');
    expect([stored.spec.volumeClaimTemplates, stored.spec.scaleStrategy]).toEqual([
      volumeClaimTemplates,
      { disablePVCReuse: true },
    ]);
  });

  it('accepts priorityStrategy and scatterStrategy as Kruise writes them and keeps them', async () => {
    const m = valid('crd-update-order');
    const order = {
      priorityStrategy: {
        weightPriority: [
          { weight: 100, matchSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
        ],
      },
      scatterStrategy: [
        { key: 'zone', value: 'a' },
        { key: 'zone', value: 'b' },
      ],
    };
    updateStrategy(m, { ...order });
    await create(m);
    expect((await get('crd-update-order')).spec.updateStrategy).toMatchObject(order);
  });

  it('serves the scale subresource from spec.replicas and status', async () => {
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
        body: { status: { replicas: 2, labelSelector: 'app=web' } },
      },
      mergePatch,
    );
    const scale = (await custom.getNamespacedCustomObjectScale({
      group: GROUP,
      version: VERSION,
      namespace: NAMESPACE,
      plural: PLURAL,
      name: 'scaled',
    })) as { spec: { replicas: number }; status: { replicas: number; selector: string } };
    expect(scale.spec.replicas).toBe(2);
    expect(scale.status).toEqual({ replicas: 2, selector: 'app=web' });
    // Issue 20.2: `kubectl scale` and an HPA write through /scale, and meet the same bound.
    const refused = await custom
      .patchNamespacedCustomObjectScale(
        {
          group: GROUP,
          version: VERSION,
          namespace: NAMESPACE,
          plural: PLURAL,
          name: 'scaled',
          body: { spec: { replicas: 1_000_000 } },
        },
        mergePatch,
      )
      .then(
        () => undefined,
        (err: unknown) => apiError(err),
      );
    expect(refused?.code).toBe(422);
    expect(refused?.message).toMatch(/spec.replicas.*less than or equal to 100000/);
  });

  it('shows progress and resize counts in the printer columns', async () => {
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
            replicas: 1,
            readyReplicas: 1,
            updatedReplicas: 1,
            updatedReadyReplicas: 0,
            labelSelector: 'app=web',
            resize: {
              resizing: 1,
              deferred: 1,
              infeasible: 2,
              pods: [{ name: 'columns-a', state: 'Deferred', reason: 'NodeFull', since: '2025-01-01T00:00:00Z' }],
            },
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
    expect(names).toEqual([
      'Name',
      'DESIRED',
      'UPDATED',
      'UPDATED_READY',
      'READY',
      'RESIZING',
      'INFEASIBLE',
      'AGE',
      'IMAGES',
      'SELECTOR',
    ]);
    const cells = table.rows[0]?.cells ?? [];
    const cell = (name: string): unknown => cells[names.indexOf(name)];
    expect(cell('DESIRED')).toBe(1);
    expect(cell('RESIZING')).toBe(1);
    expect(cell('INFEASIBLE')).toBe(2);
    expect(cell('IMAGES')).toBe('tailor.test/busybox:v1');
    expect(cell('SELECTOR')).toBe('app=web');
    const stored = await get('columns');
    // Counts left out by the writer default to 0.
    expect((stored.status as { resize: Json }).resize).toMatchObject({ proposed: 0, inProgress: 0 });
  });

  it('rejects a status resize entry with an unknown state', async () => {
    await create(valid('badstatus'));
    let failure: { code: number; message: string } | undefined;
    try {
      await custom.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          namespace: NAMESPACE,
          plural: PLURAL,
          name: 'badstatus',
          body: { status: { resize: { pods: [{ name: 'x', state: 'Pending' }] } } },
        },
        mergePatch,
      );
    } catch (err) {
      failure = apiError(err);
    }
    expect(failure?.code).toBe(422);
    expect(failure?.message).toContain('Unsupported value: "Pending"');
  });
});
