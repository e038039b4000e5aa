// Structural checks of crds/apps.tailor.dev_inplacestatefulsets.yaml that need no API server: the
// names src/api/stateful-types.ts gives, the defaults it shares with withStatefulDefaults, every
// field of apps/v1 StatefulSetSpec (so a native manifest ports by apiVersion and kind), the parts
// copied from the CloneSet CRD staying the same, the subresources and printer columns, the bounds
// that keep CEL cost estimates under the API server's limits, and pod names that fit a DNS label.
import { describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_DEFERRED_TIMEOUT_SECONDS, DEFAULT_IN_PROGRESS_TIMEOUT_SECONDS } from '../../../src/api/defaults.js';
import {
  DEFAULT_CLAIM_RETENTION,
  DEFAULT_ORDINALS_START,
  DEFAULT_POD_MANAGEMENT_POLICY,
  DEFAULT_POD_UPDATE_POLICY,
  DEFAULT_STATEFUL_MAX_UNAVAILABLE,
  DEFAULT_STATEFUL_PARTITION,
  DEFAULT_STATEFUL_REPLICAS,
  DEFAULT_STATEFUL_REVISION_HISTORY_LIMIT,
  DEFAULT_STATEFUL_UPDATE_TYPE,
  INPLACESTATEFULSET_CRD_NAME,
  INPLACESTATEFULSET_KIND,
  INPLACESTATEFULSET_LIST_KIND,
  INPLACESTATEFULSET_PLURAL,
  INPLACESTATEFULSET_SHORT_NAME,
  INPLACESTATEFULSET_SINGULAR,
  withStatefulDefaults,
  type InPlaceStatefulSet,
} from '../../../src/api/stateful-types.js';
import { API_GROUP, API_VERSION, MAX_RESIZE_STATUS_PODS, RESIZE_STATES } from '../../../src/api/types.js';
import { plainCrd, readCrdText, schemaAt, walkSchema, type Schema } from '../../support/fixtures/crd-schema.js';

const text = readCrdText('apps.tailor.dev_inplacestatefulsets.yaml');
const crd = plainCrd(text);
const version = crd.spec.versions[0];
const root: Schema = version?.schema.openAPIV3Schema ?? {};
const cloneSetCrd = plainCrd(readCrdText('apps.tailor.dev_clonesets.yaml'));
const cloneSetRoot: Schema = cloneSetCrd.spec.versions[0]?.schema.openAPIV3Schema ?? {};

const at = (path: string, from: Schema = root): Schema => schemaAt(from, path);
const walk = walkSchema;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * What the API server's structural defaulting does to `value`: a property that is absent gets a
 * copy of its schema default, then defaulting goes on inside it (so `default: {}` fills the
 * object's own defaults), through items and map values too.
 */
function applySchemaDefaults(schema: Schema | undefined, value: unknown): unknown {
  if (schema === undefined) return value;
  if (Array.isArray(value)) return value.map((item) => applySchemaDefaults(schema.items, item));
  if (!isObject(value)) return value;
  const result: Json = { ...value };
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (result[key] === undefined && child.default !== undefined) result[key] = structuredClone(child.default);
    if (result[key] !== undefined) result[key] = applySchemaDefaults(child, result[key]);
  }
  const additional = schema.additionalProperties;
  if (typeof additional === 'object') {
    for (const key of Object.keys(result)) {
      if (schema.properties?.[key] === undefined) result[key] = applySchemaDefaults(additional, result[key]);
    }
  }
  return result;
}

/** The leaves (non-object values) of `value`, by dotted path. */
function leaves(value: unknown, path = ''): Map<string, unknown> {
  const found = new Map<string, unknown>();
  if (!isObject(value)) return found.set(path, value);
  for (const [key, child] of Object.entries(value)) {
    for (const [p, v] of leaves(child, path === '' ? key : `${path}.${key}`)) found.set(p, v);
  }
  return found;
}

/** A schema without its descriptions and with its messages naming the CloneSet as this kind. */
function comparable(schema: Schema): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (key === 'description') return undefined;
    if ((key === 'message' || key === 'messageExpression') && typeof value === 'string') {
      return value.replace(/CloneSet/g, INPLACESTATEFULSET_KIND);
    }
    return value;
  }) as unknown;
}

/** The kubernetes.io StatefulSet example ("web"), as an apps/v1 manifest has it but for apiVersion and kind. */
const nativeManifest = (spec: Json = {}): InPlaceStatefulSet & Json =>
  ({
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: INPLACESTATEFULSET_KIND,
    metadata: { name: 'web' },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      serviceName: 'nginx',
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
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'www', labels: { app: 'nginx' }, annotations: { note: 'kept' } },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: 'my-storage-class',
            resources: { requests: { storage: '1Gi' } },
          },
        },
      ],
      ...spec,
    },
  }) as unknown as InPlaceStatefulSet & Json;

/** Every field of apps/v1 StatefulSetSpec (Kubernetes 1.37), each set. */
const everyNativeField: Json = {
  replicas: 3,
  podManagementPolicy: 'Parallel',
  updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1, maxUnavailable: '50%' } },
  revisionHistoryLimit: 5,
  minReadySeconds: 10,
  persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
  ordinals: { start: 1 },
};

/** The paths of `value` that the schema does not declare (outside preserve-unknown-fields subtrees). */
function undeclared(schema: Schema | undefined, value: unknown, path = ''): string[] {
  if (schema === undefined) return [path];
  if (schema['x-kubernetes-preserve-unknown-fields'] === true && schema.properties === undefined) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => undeclared(schema.items, item, `${path}[${i}]`));
  if (!isObject(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const declared = schema.properties?.[key];
    if (declared !== undefined) return undeclared(declared, child, `${path}.${key}`);
    if (schema['x-kubernetes-preserve-unknown-fields'] === true) return [];
    const additional = schema.additionalProperties;
    if (typeof additional === 'object') return undeclared(additional, child, `${path}.${key}`);
    if (additional === true || path === '.metadata') return [];
    return [`${path}.${key}`];
  });
}

describe('the InPlaceStatefulSet CRD manifest', () => {
  it('survives the typed round trip the client makes when it sends the CRD', () => {
    const typed = k8s.loadYaml<k8s.V1CustomResourceDefinition>(text);
    expect(isDeepStrictEqual(plainCrd(k8s.dumpYaml(typed)), plainCrd(text))).toBe(true);
  });

  it('names the resource as src/api/stateful-types.ts does, in category all (decision 87)', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.metadata.name).toBe(INPLACESTATEFULSET_CRD_NAME);
    expect(INPLACESTATEFULSET_CRD_NAME).toBe(`${INPLACESTATEFULSET_PLURAL}.${API_GROUP}`);
    expect(crd.spec.group).toBe(API_GROUP);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toEqual({
      kind: INPLACESTATEFULSET_KIND,
      listKind: INPLACESTATEFULSET_LIST_KIND,
      plural: INPLACESTATEFULSET_PLURAL,
      singular: INPLACESTATEFULSET_SINGULAR,
      shortNames: [INPLACESTATEFULSET_SHORT_NAME],
      categories: ['all'],
    });
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: API_VERSION, served: true, storage: true });
  });

  it('carries the same labels as the CloneSet CRD', () => {
    expect(crd.metadata.labels).toEqual(cloneSetCrd.metadata.labels);
  });

  // The VPA resolves an owner of a kind it does not know through /scale and its selector
  // (docs/research/stateful-kind-facts.md §4), as kubectl scale and the HPA do.
  it('has status and scale subresources, with the selector for the VPA and the HPA', () => {
    expect(version?.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.labelSelector',
      },
    });
    expect(at('status.labelSelector').type).toBe('string');
  });

  it('has every field of apps/v1 StatefulSetSpec, so a native manifest ports by apiVersion and kind', () => {
    const native = [
      'replicas',
      'selector',
      'template',
      'volumeClaimTemplates',
      'serviceName',
      'podManagementPolicy',
      'updateStrategy',
      'revisionHistoryLimit',
      'minReadySeconds',
      'persistentVolumeClaimRetentionPolicy',
      'ordinals',
    ];
    expect(native.filter((field) => at('spec').properties?.[field] === undefined)).toEqual([]);
    expect(Object.keys(at('spec.updateStrategy.rollingUpdate').properties ?? {})).toEqual(
      expect.arrayContaining(['partition', 'maxUnavailable']),
    );
    expect(Object.keys(at('spec.persistentVolumeClaimRetentionPolicy').properties ?? {})).toEqual(
      expect.arrayContaining(['whenDeleted', 'whenScaled']),
    );
    expect(at('spec.ordinals.start').type).toBe('integer');
    // Only selector and template are required, as in apps/v1 since serviceName became optional.
    expect(at('spec').required).toEqual(['selector', 'template']);
  });

  it('declares every field a native manifest and a claim template may carry, so none is pruned or refused', () => {
    expect(undeclared(root, nativeManifest())).toEqual([]);
    expect(undeclared(root, nativeManifest(everyNativeField))).toEqual([]);
  });

  it("takes apps/v1's values: policies, strategy types, claim retention", () => {
    expect(at('spec.podManagementPolicy').enum).toEqual(['OrderedReady', 'Parallel']);
    expect(at('spec.updateStrategy.type').enum).toEqual(['RollingUpdate', 'OnDelete']);
    expect(at('spec.persistentVolumeClaimRetentionPolicy.whenDeleted').enum).toEqual(['Retain', 'Delete']);
    expect(at('spec.persistentVolumeClaimRetentionPolicy.whenScaled').enum).toEqual(['Retain', 'Delete']);
    expect(at('spec.updateStrategy.rollingUpdate.podUpdatePolicy').enum).toEqual([
      'ReCreate',
      'InPlaceIfPossible',
      'InPlaceOnly',
    ]);
    expect(at('spec.volumeClaimUpdateStrategy.type').enum).toContain('OnClaimDelete');
  });

  it("keeps apps/v1's partition an int32 (not int-or-string) and Advanced StatefulSet's minReadySeconds within 0..300", () => {
    expect(at('spec.updateStrategy.rollingUpdate.partition')).toMatchObject({ type: 'integer', format: 'int32' });
    expect(at('spec.updateStrategy.rollingUpdate.partition')['x-kubernetes-int-or-string']).toBeUndefined();
    expect(at('spec.updateStrategy.rollingUpdate.partition').minimum).toBe(0);
    expect(at('spec.updateStrategy.rollingUpdate.minReadySeconds')).toMatchObject({ minimum: 0, maximum: 300 });
    expect(at('spec.ordinals.start')).toMatchObject({ type: 'integer', format: 'int32', minimum: 0 });
  });

  it('uses the defaults of src/api/stateful-types.ts', () => {
    expect(at('spec.replicas').default).toBe(DEFAULT_STATEFUL_REPLICAS);
    expect(at('spec.podManagementPolicy').default).toBe(DEFAULT_POD_MANAGEMENT_POLICY);
    expect(at('spec.revisionHistoryLimit').default).toBe(DEFAULT_STATEFUL_REVISION_HISTORY_LIMIT);
    expect(at('spec.ordinals.start').default).toBe(DEFAULT_ORDINALS_START);
    expect(at('spec.persistentVolumeClaimRetentionPolicy.whenDeleted').default).toBe(DEFAULT_CLAIM_RETENTION);
    expect(at('spec.persistentVolumeClaimRetentionPolicy.whenScaled').default).toBe(DEFAULT_CLAIM_RETENTION);
    expect(at('spec.updateStrategy.type').default).toBe(DEFAULT_STATEFUL_UPDATE_TYPE);
    expect(at('spec.updateStrategy.rollingUpdate.partition').default).toBe(DEFAULT_STATEFUL_PARTITION);
    expect(at('spec.updateStrategy.rollingUpdate.maxUnavailable').default).toBe(DEFAULT_STATEFUL_MAX_UNAVAILABLE);
    expect(at('spec.updateStrategy.rollingUpdate.podUpdatePolicy').default).toBe(DEFAULT_POD_UPDATE_POLICY);
    expect(at('spec.volumeClaimUpdateStrategy.type').default).toBe('OnClaimDelete');
    expect(at('spec.updateStrategy.resizeStrategy.deferredTimeoutSeconds').default).toBe(
      DEFAULT_DEFERRED_TIMEOUT_SECONDS,
    );
    expect(at('spec.updateStrategy.resizeStrategy.inProgressTimeoutSeconds').default).toBe(
      DEFAULT_IN_PROGRESS_TIMEOUT_SECONDS,
    );
  });

  // The kind exists to update in place: not Advanced StatefulSet's ReCreate.
  it('defaults podUpdatePolicy to InPlaceIfPossible', () => {
    expect(DEFAULT_POD_UPDATE_POLICY).toBe('InPlaceIfPossible');
  });

  // Defaults the schema applies that withStatefulDefaults leaves to others, and why.
  const appliedElsewhere: Record<string, string> = {
    'spec.updateStrategy.resizeStrategy.deferredTimeoutSeconds': "the engine's defaultUpdateStrategy (api/defaults.ts)",
    'spec.updateStrategy.resizeStrategy.inProgressTimeoutSeconds':
      "the engine's defaultUpdateStrategy (api/defaults.ts)",
    'spec.volumeClaimUpdateStrategy.type': 'claim-expansion.ts: anything but InPlace is OnClaimDelete',
  };

  it('has withStatefulDefaults apply every scalar default of the spec schema, with the same value', () => {
    const scalarDefaults: [string, unknown][] = [];
    walk(at('spec'), 'spec', (node, path) => {
      if (node.default !== undefined && !isObject(node.default)) scalarDefaults.push([path, node.default]);
    });
    expect(scalarDefaults.length).toBeGreaterThanOrEqual(10);
    for (const [path, value] of scalarDefaults) {
      if (path in appliedElsewhere) continue;
      // The parents of the field present and empty, as a manifest that names them would have them.
      const parents = path.split('.').slice(1, -1);
      const spec: Json = {};
      let cursor = spec;
      for (const key of parents) {
        const next: Json = {};
        cursor[key] = next;
        cursor = next;
      }
      const defaulted = leaves(withStatefulDefaults(nativeManifest(spec)));
      expect([path, defaulted.get(path)]).toEqual([path, value]);
    }
  });

  it('has withStatefulDefaults add no value the schema would not default to the same', () => {
    for (const spec of [{}, { updateStrategy: { type: 'OnDelete' } }, { ordinals: {} }]) {
      const given = nativeManifest(spec);
      const before = leaves(given);
      for (const [path, value] of leaves(withStatefulDefaults(given))) {
        if (before.has(path)) continue;
        expect([path, at(path).default]).toEqual([path, value]);
      }
    }
  });

  // The API server defaults what it stores; the controller reads through withStatefulDefaults. In
  // whichever order they come, the set reads the same (the schema cannot create rollingUpdate for
  // RollingUpdate only; withStatefulDefaults does, with the schema's values).
  it.each<[string, Json]>([
    ['a native manifest', {}],
    ['updateStrategy type RollingUpdate alone', { updateStrategy: { type: 'RollingUpdate' } }],
    ['updateStrategy OnDelete', { updateStrategy: { type: 'OnDelete' } }],
    ['a partition only', { updateStrategy: { rollingUpdate: { partition: 3 } } }],
    [
      'a rolling update of its own',
      { updateStrategy: { rollingUpdate: { maxUnavailable: '50%', podUpdatePolicy: 'ReCreate', paused: true } } },
    ],
    ['empty ordinals and retention policy', { ordinals: {}, persistentVolumeClaimRetentionPolicy: {} }],
    ['every native field', everyNativeField],
  ])('reads %s the same whether the schema defaults it before or after withStatefulDefaults', (_name, spec) => {
    const given = nativeManifest(spec);
    const schemaFirst = withStatefulDefaults(applySchemaDefaults(root, given) as InPlaceStatefulSet);
    const schemaAfter = applySchemaDefaults(root, withStatefulDefaults(given));
    expect(schemaAfter).toEqual(schemaFirst);
  });

  it('leaves resizeStrategy onTimeout and onInfeasible without a schema default, since it depends on podUpdatePolicy', () => {
    expect(at('spec.updateStrategy.resizeStrategy.onTimeout').default).toBeUndefined();
    expect(at('spec.updateStrategy.resizeStrategy.onInfeasible').default).toBeUndefined();
  });

  // One engine and one status writer serve both kinds (decisions 84 and 88): what they read and
  // write has the CloneSet's schema. Descriptions may differ; messages may name the kind.
  it.each([
    'spec.replicas',
    'spec.selector',
    'spec.template',
    'spec.volumeClaimTemplates',
    'spec.lifecycle',
    'spec.minReadySeconds',
    'spec.revisionHistoryLimit',
    'spec.progressDeadlineSeconds',
    'spec.scaleStrategy.maxUnavailable',
    'spec.updateStrategy.resizeStrategy',
  ])("has the CloneSet's schema at %s", (path) => {
    expect(comparable(at(path))).toEqual(comparable(at(path, cloneSetRoot)));
  });

  it("has the CloneSet's priorityStrategy under unorderedUpdate and its inPlaceUpdateStrategy under rollingUpdate", () => {
    expect(comparable(at('spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy'))).toEqual(
      comparable(at('spec.updateStrategy.priorityStrategy', cloneSetRoot)),
    );
    expect(comparable(at('spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy'))).toEqual(
      comparable(at('spec.updateStrategy.inPlaceUpdateStrategy', cloneSetRoot)),
    );
  });

  it("has the CloneSet's status fields, so the CloneSet status writer writes to both kinds", () => {
    const cloneSetStatus = at('status', cloneSetRoot);
    for (const [field, schema] of Object.entries(cloneSetStatus.properties ?? {})) {
      expect([field, comparable(at(`status.${field}`))]).toEqual([field, comparable(schema)]);
    }
    expect(at('status').default).toEqual({});
    expect(at('status.resize.pods.[].state').enum).toEqual([...RESIZE_STATES]);
    expect(at('status.resize.pods').maxItems).toBe(MAX_RESIZE_STATUS_PODS);
  });

  it.each([
    'observedGeneration',
    'replicas',
    'readyReplicas',
    'availableReplicas',
    'updatedReplicas',
    'updatedReadyReplicas',
    'updatedAvailableReplicas',
    'expectedUpdatedReplicas',
  ])('defaults status.%s to 0, so a set not yet observed reads as in progress to kstatus', (field) => {
    expect(at(`status.${field}`).default).toBe(0);
  });

  // apps/v1 StatefulSetStatus has currentReplicas; the CloneSet's status has none.
  it("has apps/v1's status.currentReplicas", () => {
    expect(at('status.currentReplicas')).toMatchObject({ type: 'integer', format: 'int32' });
  });

  it('names a field of the schema in every printer column', () => {
    for (const column of version?.additionalPrinterColumns ?? []) {
      if (column.jsonPath === '.metadata.creationTimestamp') continue;
      const path = column.jsonPath.replace(/^\./, '').replace(/\[\*\]/g, '.[]');
      expect(() => at(path)).not.toThrow();
    }
  });

  it('shows DESIRED, UPDATED, READY and AGE as the CloneSet does, and images and selector only in wide output', () => {
    const columns = new Map(
      (version?.additionalPrinterColumns ?? []).map((c) => [c.name, [c.jsonPath, c.priority ?? 0]]),
    );
    expect(columns.get('DESIRED')).toEqual(['.spec.replicas', 0]);
    expect(columns.get('UPDATED')).toEqual(['.status.updatedReplicas', 0]);
    expect(columns.get('READY')).toEqual(['.status.readyReplicas', 0]);
    expect(columns.get('AGE')).toEqual(['.metadata.creationTimestamp', 0]);
    expect(columns.get('IMAGES')).toEqual(['.spec.template.spec.containers[*].image', 1]);
    expect(columns.get('SELECTOR')).toEqual(['.status.labelSelector', 1]);
  });

  // Advanced StatefulSet's columns are DESIRED, CURRENT (.status.replicas), UPDATED, READY, AGE.
  it('shows CURRENT, the pods created (.status.replicas), as Advanced StatefulSet does', () => {
    const current = (version?.additionalPrinterColumns ?? []).find((c) => c.name === 'CURRENT');
    expect(current).toMatchObject({ type: 'integer', jsonPath: '.status.replicas' });
  });

  // A pod is <name>-<ordinal>; its name and hostname (a DNS label) hold at most 63 characters, and
  // its controller-revision-hash label <name>-<10 characters> too.
  it('bounds metadata.name so that every pod name and revision label fits 63 characters', () => {
    const rules = (root['x-kubernetes-validations'] ?? []).map((r) => r.rule);
    const bound = rules.map((r) => /size\(self\.metadata\.name\) <= (\d+)/.exec(r)?.[1]).find((b) => b !== undefined);
    const maxName = Number(bound);
    expect(maxName).toBe(52);
    expect(maxName + 1 + 10).toBeLessThanOrEqual(63);
    // The highest ordinal: from the highest start, past every reserved ordinal, to the last replica.
    const int32 = 2 ** 31 - 1;
    const start = at('spec.ordinals.start');
    const startMax = start.maximum ?? (start.format === 'int32' ? int32 : Infinity);
    const reserved = at('spec.reserveOrdinals.[]')['x-kubernetes-validations'] ?? [];
    const rangeDigits = Math.max(...reserved.map((r) => Number(/\{1,(\d+)\}/.exec(r.rule)?.[1] ?? Infinity)));
    const int32Ranges = reserved.some((r) => r.rule.includes(String(int32)));
    const rangeEndMax = Math.min(10 ** rangeDigits - 1, int32Ranges ? int32 : Infinity);
    const highest =
      startMax +
      (at('spec.replicas').maximum ?? Infinity) +
      rangeEndMax +
      1 +
      (at('spec.reserveOrdinals').maxItems ?? 0);
    expect(String(highest).length).toBeLessThanOrEqual(10);
    expect(maxName + 1 + String(highest).length).toBeLessThanOrEqual(63);
  });

  it('requires a selector, a template and at least one container, and keeps the selector immutable', () => {
    expect(at('spec.template').required).toEqual(['spec']);
    expect(at('spec.template.spec').required).toEqual(['containers']);
    expect(at('spec.template.spec.containers').minItems).toBe(1);
    const rules = (at('spec.selector')['x-kubernetes-validations'] ?? []).map((r) => r.rule);
    expect(rules).toContain('self == oldSelf');
  });

  it('allows rollingUpdate only with type RollingUpdate, as apps/v1 does', () => {
    const rules = (at('spec.updateStrategy')['x-kubernetes-validations'] ?? []).map((r) => r.rule);
    expect(rules.some((r) => r.includes('has(self.rollingUpdate)') && r.includes("self.type == 'RollingUpdate'"))).toBe(
      true,
    );
  });

  it('declares int-or-string fields the way structural schemas require, with a CEL check of their form', () => {
    for (const path of [
      'spec.updateStrategy.rollingUpdate.maxUnavailable',
      'spec.scaleStrategy.maxUnavailable',
      'spec.reserveOrdinals.[]',
    ]) {
      const node = at(path);
      expect([path, node['x-kubernetes-int-or-string'], node.type]).toEqual([path, true, undefined]);
      expect([path, node.maxLength]).toEqual([path, expect.any(Number)]);
      expect([path, node['x-kubernetes-validations']?.[0]?.rule]).toEqual([
        path,
        expect.stringContaining('type(self) == int'),
      ]);
    }
    // apps/v1: maxUnavailable is at least 1 pod ("0" or "0%" would never update one).
    expect(at('spec.updateStrategy.rollingUpdate.maxUnavailable')['x-kubernetes-validations']?.[0]?.rule).toContain(
      "self >= 1 : self.matches('^(100|[1-9][0-9]?)%$')",
    );
    expect(at('spec.reserveOrdinals').maxItems).toBe(1000);
  });

  // Strings, lists and maps a rule walks must be bounded or the API server's cost estimate
  // refuses the CRD. These are under a rule but never walked by one.
  const unwalked: Record<string, string> = {
    '.spec.template.metadata.annotations{}': 'the annotations rule reads only the keys (maxProperties 256)',
    '.spec.volumeClaimTemplates[].spec.resources.requests': "the rule only asks 'storage' in requests",
    '.spec.volumeClaimTemplates[].spec.resources.limits': 'no rule reads the limits',
  };

  it('bounds every string, list and map under a CEL rule (but the root rule, which reads metadata.name only)', () => {
    const unbounded: string[] = [];
    const check = (node: Schema, path: string): void => {
      if (path in unwalked) return;
      const intOrString = node['x-kubernetes-int-or-string'] === true;
      if ((node.type === 'string' || intOrString) && node.maxLength === undefined && node.enum === undefined) {
        unbounded.push(path);
      }
      if (node.type === 'array' && node.maxItems === undefined) unbounded.push(path);
      if (typeof node.additionalProperties === 'object' && node.maxProperties === undefined) unbounded.push(path);
    };
    walk(root.properties?.spec ?? {}, '.spec', (node, path) => {
      if ((node['x-kubernetes-validations'] ?? []).length > 0) walk(node, path, check);
    });
    expect([...new Set(unbounded)]).toEqual([]);
    expect((root['x-kubernetes-validations'] ?? []).map((r) => r.rule)).toEqual([
      '!has(self.metadata.name) || size(self.metadata.name) <= 52',
    ]);
  });

  // Both are Kubernetes' own types, checked whole by the API server when a pod or claim is created.
  it("preserves unknown fields only inside the pod template and the claim templates' specs", () => {
    const preserved: string[] = [];
    walk(root, '', (node, path) => {
      if (node['x-kubernetes-preserve-unknown-fields'] === true) preserved.push(path);
    });
    expect(preserved).toEqual([
      '.spec.template.metadata',
      '.spec.template.spec',
      '.spec.template.spec.containers[]',
      '.spec.template.spec.initContainers[]',
      '.spec.volumeClaimTemplates[].spec',
    ]);
  });

  it('gives every CEL rule a message that says what to do', () => {
    walk(root, '', (node, path) => {
      for (const rule of node['x-kubernetes-validations'] ?? []) {
        expect([path, typeof rule.message]).toEqual([path, 'string']);
        expect(rule.message?.length ?? 0).toBeGreaterThan(20);
      }
    });
  });

  // The CloneSet's subtrees are copied (hack/gen-stateful-crd.py), and their messages with them: an
  // InPlaceStatefulSet refused for "CloneSet pods" would be sent to the wrong kind.
  it('names no CloneSet in the messages an InPlaceStatefulSet is refused with', () => {
    const naming: string[] = [];
    walk(root, '', (node, path) => {
      for (const rule of node['x-kubernetes-validations'] ?? []) {
        if (`${rule.message ?? ''} ${rule.messageExpression ?? ''}`.includes('CloneSet')) naming.push(path);
      }
    });
    expect(naming).toEqual([]);
  });
});
