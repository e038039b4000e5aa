// Structural checks of crds/apps.tailor.dev_clonesets.yaml that need no API server: the names
// other scripts depend on, the defaults shared with src/api/defaults.ts, the printer columns, and
// the bounds that keep CEL cost estimates under the API server's limits.
import { describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import {
  DEFAULT_DEFERRED_TIMEOUT_SECONDS,
  DEFAULT_IN_PROGRESS_TIMEOUT_SECONDS,
  DEFAULT_MAX_SURGE,
  DEFAULT_MAX_UNAVAILABLE,
  DEFAULT_PARTITION,
  DEFAULT_REPLICAS,
  DEFAULT_REVISION_HISTORY_LIMIT,
  DEFAULT_UPDATE_STRATEGY_TYPE,
} from '../../../src/api/defaults.js';
import {
  API_GROUP,
  API_VERSION,
  CLONESET_CRD_NAME,
  CLONESET_KIND,
  CLONESET_LIST_KIND,
  CLONESET_PLURAL,
  CLONESET_SHORT_NAME,
  CLONESET_SINGULAR,
  MAX_RESIZE_STATUS_PODS,
  RESIZE_STATES,
} from '../../../src/api/types.js';
import { plainCrd, readCrdText, schemaAt, walkSchema, type Schema } from '../../support/fixtures/crd-schema.js';

const text = readCrdText('apps.tailor.dev_clonesets.yaml');
const crd = plainCrd(text);
const version = crd.spec.versions[0];
const root: Schema | undefined = version?.schema.openAPIV3Schema;

const at = (path: string): Schema => schemaAt(root, path);
const walk = walkSchema;

describe('the CloneSet CRD manifest', () => {
  it('survives the typed round trip the client makes when it sends the CRD', () => {
    const typed = k8s.loadYaml<k8s.V1CustomResourceDefinition>(text);
    expect(isDeepStrictEqual(plainCrd(k8s.dumpYaml(typed)), plainCrd(text))).toBe(true);
  });

  it('names the resource as docs/architecture.md §4.1 The CloneSet API and src/api/types.ts do', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.metadata?.name).toBe(CLONESET_CRD_NAME);
    expect(crd.spec.group).toBe(API_GROUP);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toEqual({
      kind: CLONESET_KIND,
      listKind: CLONESET_LIST_KIND,
      plural: CLONESET_PLURAL,
      singular: CLONESET_SINGULAR,
      shortNames: [CLONESET_SHORT_NAME],
    });
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: API_VERSION, served: true, storage: true });
  });

  it('has status and scale subresources for kubectl scale and the HPA', () => {
    expect(version?.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.labelSelector',
      },
    });
  });

  it('shows the progress columns, with images and selector only in wide output', () => {
    const columns = (version?.additionalPrinterColumns ?? []).map((c) => [c.name, c.jsonPath, c.priority ?? 0]);
    expect(columns).toEqual([
      ['DESIRED', '.spec.replicas', 0],
      ['UPDATED', '.status.updatedReplicas', 0],
      ['UPDATED_READY', '.status.updatedReadyReplicas', 0],
      ['READY', '.status.readyReplicas', 0],
      ['RESIZING', '.status.resize.resizing', 0],
      ['INFEASIBLE', '.status.resize.infeasible', 0],
      ['AGE', '.metadata.creationTimestamp', 0],
      ['IMAGES', '.spec.template.spec.containers[*].image', 1],
      ['SELECTOR', '.status.labelSelector', 1],
    ]);
  });

  it('uses the same defaults as withDefaults', () => {
    expect(at('spec.replicas').default).toBe(DEFAULT_REPLICAS);
    expect(at('spec.revisionHistoryLimit').default).toBe(DEFAULT_REVISION_HISTORY_LIMIT);
    expect(at('spec.updateStrategy').default).toEqual({});
    expect(at('spec.updateStrategy.type').default).toBe(DEFAULT_UPDATE_STRATEGY_TYPE);
    expect(at('spec.updateStrategy.maxUnavailable').default).toBe(DEFAULT_MAX_UNAVAILABLE);
    expect(at('spec.updateStrategy.maxSurge').default).toBe(DEFAULT_MAX_SURGE);
    expect(at('spec.updateStrategy.resizeStrategy').default).toEqual({});
    expect(at('spec.updateStrategy.resizeStrategy.deferredTimeoutSeconds').default).toBe(
      DEFAULT_DEFERRED_TIMEOUT_SECONDS,
    );
    expect(at('spec.updateStrategy.resizeStrategy.inProgressTimeoutSeconds').default).toBe(
      DEFAULT_IN_PROGRESS_TIMEOUT_SECONDS,
    );
    expect(at('spec.updateStrategy.partition').default).toBe(DEFAULT_PARTITION);
    expect(at('spec.scaleStrategy').default).toEqual({});
  });

  // Kruise's webhook (SetDefaultsCloneSet) stores these, and Argo CD's Kruise health script reads
  // an absent partition as held (issue 32): a stored object must read as Kruise's does.
  it.each<[string, unknown]>([
    ['spec.replicas', 1],
    ['spec.revisionHistoryLimit', 10],
    ['spec.scaleStrategy', {}],
    ['spec.updateStrategy', {}],
    ['spec.updateStrategy.type', 'ReCreate'],
    ['spec.updateStrategy.partition', 0],
    ['spec.updateStrategy.maxUnavailable', '20%'],
    ['spec.updateStrategy.maxSurge', 0],
  ])("defaults %s to %j as Kruise's webhook does, and a null there is defaulted too (not nullable)", (path, value) => {
    expect(at(path).default).toEqual(value);
    expect((at(path) as { nullable?: boolean }).nullable).toBeUndefined();
  });

  it.each([
    'replicas',
    'readyReplicas',
    'availableReplicas',
    'updatedReplicas',
    'updatedReadyReplicas',
    'updatedAvailableReplicas',
    'expectedUpdatedReplicas',
  ])('defaults status.%s to 0, so a written status never lacks the counter', (field) => {
    expect(at(`status.${field}`).default).toBe(0);
  });

  it('defaults status to {} and observedGeneration to 0, so a CloneSet not yet observed reads as in progress to kstatus', () => {
    expect(at('status').default).toEqual({});
    expect(at('status.observedGeneration').default).toBe(0);
  });

  it('leaves onTimeout and onInfeasible without a schema default, since it depends on the type', () => {
    expect(at('spec.updateStrategy.resizeStrategy.onTimeout')).toMatchObject({ enum: ['Recreate', 'Wait'] });
    expect(at('spec.updateStrategy.resizeStrategy.onTimeout').default).toBeUndefined();
    expect(at('spec.updateStrategy.resizeStrategy.onInfeasible').default).toBeUndefined();
  });

  it("offers Kruise's three update strategy types and OnDelete", () => {
    expect(at('spec.updateStrategy.type').enum).toEqual(['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly', 'OnDelete']);
  });

  it('spells the resize states as KEP-1287 does and bounds the pod list', () => {
    expect(at('status.resize.pods.[].state').enum).toEqual([...RESIZE_STATES]);
    expect(at('status.resize.pods').maxItems).toBe(MAX_RESIZE_STATUS_PODS);
  });

  // Both are Kubernetes' own types, checked whole by the API server when a pod or claim is created.
  it("preserves unknown fields only inside the pod template and the claim templates' specs", () => {
    const preserved: string[] = [];
    walk(root ?? {}, '', (node, path) => {
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

  it('requires a selector, a template and at least one container', () => {
    expect(at('spec').required).toEqual(['selector', 'template']);
    expect(at('spec.template.spec').required).toEqual(['containers']);
    expect(at('spec.template.spec.containers').minItems).toBe(1);
  });

  it('declares int-or-string fields the way structural schemas require', () => {
    for (const path of [
      'spec.scaleStrategy.maxUnavailable',
      'spec.updateStrategy.partition',
      'spec.updateStrategy.maxUnavailable',
      'spec.updateStrategy.maxSurge',
    ]) {
      const node = at(path);
      expect(node['x-kubernetes-int-or-string']).toBe(true);
      expect(node.type).toBeUndefined();
      expect(node['x-kubernetes-validations']?.[0]?.rule).toContain("matches('^(100|[1-9]?[0-9])%$')");
    }
  });

  it('makes the selector immutable with a transition rule', () => {
    const rules = (at('spec.selector')['x-kubernetes-validations'] ?? []).map((r) => r.rule);
    expect(rules).toContain('self == oldSelf');
  });

  it('bounds every map and list that a CEL rule walks', () => {
    expect(at('spec.selector.matchLabels').maxProperties).toBeDefined();
    expect((at('spec.selector.matchLabels').additionalProperties as Schema).maxLength).toBe(63);
    expect(at('spec.template.metadata.labels').maxProperties).toBeDefined();
    expect((at('spec.template.metadata.labels').additionalProperties as Schema).maxLength).toBe(63);
    expect(at('spec.selector.matchExpressions').maxItems).toBeDefined();
    expect(at('spec.selector.matchExpressions.[].values').maxItems).toBeDefined();
    expect(at('spec.selector.matchExpressions.[].values.[]').maxLength).toBe(63);
  });

  // Issue 31.2: what the caches keep per revision (container names and images) is bounded.
  it.each([
    ['spec.template.spec.containers', 64],
    ['spec.template.spec.initContainers', 64],
  ])('bounds %s to %i containers with names of 63 and images of 1024 characters', (path, max) => {
    expect(at(path).maxItems).toBe(max);
    expect(at(`${path}.[].name`).maxLength).toBe(63);
    expect(at(`${path}.[].image`).maxLength).toBe(1024);
  });

  it('gives every CEL rule a message that says what to do', () => {
    walk(root ?? {}, '', (node, path) => {
      for (const rule of node['x-kubernetes-validations'] ?? []) {
        expect([path, typeof rule.message]).toEqual([path, 'string']);
        expect(rule.message?.length ?? 0).toBeGreaterThan(20);
      }
    });
  });
});
