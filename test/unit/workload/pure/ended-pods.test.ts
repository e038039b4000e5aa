// What the controller caches of an ended pod (Succeeded or Failed) of a CloneSet of ours: its
// identity, its controller reference, deletion, phase, and the labels still read of it (its
// revision, its instance id, the labels its CloneSet's selector names), within a small bound
// whatever the pod weighs; and the planner plans the same on such pods as on whole ones
// (docs/decisions/0074-ended-pods-cached-as-identity.md).
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type * as k8s from '@kubernetes/client-node';
import { podTrimmer, trimPod, type SelectorOf } from '../../../../src/workload/pure/pod-cache.js';
import type { Claim } from '../../../../src/workload/pure/claims.js';
import type { PlanInput } from '../../../../src/workload/pure/plan-input.js';
import { planReconcile } from '../../../../src/workload/pure/planner.js';
import type { Intent, PlannedEvent } from '../../../../src/workload/pure/intents.js';
import type { Plan } from '../../../../src/workload/pure/round-plan.js';
import type { VolumeClaimTemplate } from '../../../../src/api/types.js';
import type { Pod } from '../../../../src/api/wire.js';
import {
  NEW,
  NOW,
  OLD,
  cloneSet,
  pod,
  revisionTemplates,
  type Change,
  type CloneSetSpec,
  type PodSpec,
} from '../../../support/fixtures/planner-fixtures.js';

const SELECTOR: k8s.V1LabelSelector = { matchLabels: { app: 'web' } };
const knownSelector: SelectorOf = () => SELECTOR;
const OWNER = {
  apiVersion: 'apps.tailor.dev/v1alpha1',
  kind: 'CloneSet',
  name: 'web',
  uid: 'cs-uid',
  controller: true,
};

/** The pod as the kubelet leaves it once it ended: containers terminated, not ready. */
function ended(p: Pod, phase: 'Succeeded' | 'Failed'): Pod {
  const out = structuredClone(p);
  out.status = {
    ...out.status,
    phase,
    conditions: (out.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c)),
    containerStatuses: (out.status?.containerStatuses ?? []).map((s) => ({
      ...s,
      ready: false,
      state: { terminated: { exitCode: phase === 'Succeeded' ? 0 : 1, reason: 'Completed' } },
    })),
  };
  return out;
}

/** About 1 MB (`scale` 1): labels, annotations and containers nobody reads once the pod ended. */
function heavy(p: Pod, scale = 1): Pod {
  const out = structuredClone(p);
  const big = (prefix: string, n: number, size: number): Record<string, string> =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`example.com/${prefix}${i}`, 'v'.repeat(size)]));
  out.metadata = {
    ...out.metadata,
    labels: { ...out.metadata?.labels, ...big('l', Math.ceil(4000 * scale), 63) },
    annotations: {
      ...out.metadata?.annotations,
      ...big('a', 2, Math.ceil(200_000 * scale)),
      'apps.tailor.dev/resize-status': '{"revision":"web-old","state":"","since":"2026-01-01T00:00:00Z"}',
    },
    ownerReferences: [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'x'.repeat(253), uid: 'cm' },
      ...(out.metadata?.ownerReferences ?? []),
    ],
    managedFields: [{ manager: 'kubelet', operation: 'Update', fieldsV1: { f: 'x'.repeat(50_000) } }],
  };
  const container = out.spec!.containers[0]!;
  out.spec!.containers = Array.from({ length: Math.ceil(60 * scale) }, (_, i) => ({
    ...container,
    name: `c${i}`,
    command: ['sh', '-c', 'x'.repeat(2_000)],
    lifecycle: { preStop: { exec: { command: ['sh', '-c', 'y'.repeat(2_000)] } } },
  }));
  return out;
}

const endedPod = (name: string, phase: 'Succeeded' | 'Failed', s: Omit<PodSpec, 'name'> = {}): Pod =>
  ended(pod({ name, revision: OLD, labels: { 'apps.tailor.dev/instance-id': name }, ...s }), phase);

describe('an ended pod is cached as its identity', () => {
  it.each(['Succeeded', 'Failed'] as const)('%s, of about 1 MB, is kept in under 1 KB', (phase) => {
    const whole = heavy(endedPod('web-a1b2c', phase, { terminating: true }));
    expect(JSON.stringify(whole).length).toBeGreaterThan(1_000_000);
    const trimmed = podTrimmer(knownSelector)(whole);
    expect(JSON.stringify(trimmed).length).toBeLessThan(1024);
    expect(trimmed).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-a1b2c',
        namespace: 'ns',
        uid: 'uid-web-a1b2c',
        resourceVersion: '1',
        deletionTimestamp: whole.metadata?.deletionTimestamp,
        ownerReferences: [OWNER],
        labels: { app: 'web', 'controller-revision-hash': OLD, 'apps.tailor.dev/instance-id': 'web-a1b2c' },
      },
      status: { phase },
    });
  });

  it("keeps every label its CloneSet's selector names, present or not, and no other", () => {
    const selector: k8s.V1LabelSelector = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front'] },
        { key: 'canary', operator: 'DoesNotExist' },
        { key: 'absent', operator: 'Exists' },
      ],
    };
    const whole = endedPod('p', 'Failed', { labels: { tier: 'front', canary: 'yes', other: 'x' } });
    expect(podTrimmer(() => selector)(whole).metadata?.labels).toEqual({
      app: 'web',
      tier: 'front',
      canary: 'yes',
      'controller-revision-hash': OLD,
    });
  });

  it("keeps Tailor's labels only when its CloneSet is gone, and every label before the CloneSets are listed", () => {
    const whole = heavy(endedPod('p', 'Succeeded'));
    expect(podTrimmer(() => undefined)(whole).metadata?.labels).toEqual({
      'controller-revision-hash': OLD,
      'apps.tailor.dev/instance-id': 'p',
    });
    const before = podTrimmer(() => 'unknown')(whole);
    expect(before.metadata?.labels).toEqual(whole.metadata?.labels);
    expect(trimPod(whole).metadata?.labels).toEqual(whole.metadata?.labels);
    // Even then, nothing else: no annotations, spec, conditions or other owners.
    expect(Object.keys(before)).toEqual(['apiVersion', 'kind', 'metadata', 'status']);
    expect(Object.keys(before.metadata ?? {}).sort()).toEqual([
      'labels',
      'name',
      'namespace',
      'ownerReferences',
      'resourceVersion',
      'uid',
    ]);
  });

  it('a live pod is kept as before: its labels, spec and status', () => {
    const live = heavy(pod({ name: 'p', revision: OLD }));
    const trimmed = podTrimmer(knownSelector)(live);
    expect(Object.keys(trimmed.metadata?.labels ?? {})).toHaveLength(4002);
    expect(trimmed.spec?.containers).toHaveLength(60);
    expect(trimmed.status?.phase).toBe('Running');
  });

  it('a pod no CloneSet of ours controls keeps its identity only, ended or not', () => {
    const whole = heavy(endedPod('p', 'Failed'));
    whole.metadata!.ownerReferences = [{ ...OWNER, apiVersion: 'apps.kruise.io/v1alpha1' }];
    expect(podTrimmer(knownSelector)(whole)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns', uid: 'uid-p', resourceVersion: '1' },
    });
  });
});

// ---- The planner on ended pods -------------------------------------------------------------

const DATA: VolumeClaimTemplate = {
  metadata: { name: 'data' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
};
const ID = 'apps.tailor.dev/instance-id';

/** A claim of the `data` template for an instance id, as the controller's cache keeps it. */
const claim = (id: string): Claim => ({
  metadata: { name: `data-web-${id}`, namespace: 'ns', labels: { [ID]: id }, ownerReferences: [OWNER] },
});

interface Scenario {
  readonly spec: CloneSetSpec;
  readonly claims: boolean;
  readonly pods: readonly Pod[];
  /** Instance ids with a claim: every pod's when the CloneSet has claims, and one no pod has. */
  readonly claimIds: readonly string[];
}

function input({ spec, claims, pods, claimIds }: Scenario, trim?: (pod: Pod) => Pod): PlanInput {
  const cs = cloneSet(spec);
  if (claims) cs.spec.volumeClaimTemplates = [DATA];
  return {
    cloneSet: cs,
    pods: trim ? pods.map(trim) : pods,
    revisions: { updateRevision: NEW, currentRevision: OLD, templates: revisionTemplates(spec.change ?? 'image') },
    now: NOW,
    resizeBackend: 'kubelet',
    nodeEvidence: new Map(),
    ...(claims ? { claims: claimIds.map(claim) } : {}),
  };
}

const intentShape = (i: Intent): [Intent['kind'], unknown, unknown] => [
  i.kind,
  i.kind === 'create' ? i.revision : i.pod.metadata?.name,
  i.kind === 'patch' ? i.step.patch : null,
];
const eventShape = (e: PlannedEvent): unknown[] => [
  e.reason,
  e.on === 'workload' ? 'cloneset' : e.on.metadata?.name,
  e.message,
  e.batchPod,
];

const shape = (p: Plan): unknown => ({
  intents: p.intents.map(intentShape),
  events: p.events.map(eventShape),
  status: p.status,
  budget: p.budget,
  wakeAt: p.wakeAt,
  instanceIdsInUse: [...p.instanceIdsInUse].sort(),
  claims: p.claims,
});

const livePodArb = (i: number): fc.Arbitrary<PodSpec> =>
  fc.record({
    name: fc.constant(`p${i}`),
    revision: fc.constantFrom(OLD, NEW),
    ready: fc.boolean(),
    scheduled: fc.boolean().map((b) => b || i % 3 !== 0),
    terminating: fc.boolean().map((b) => b && i % 4 === 0),
    drained: fc.boolean().map((b) => b && i % 2 === 0),
    resize: fc.constantFrom<PodSpec['resize']>(undefined, 'Infeasible', 'Deferred', 'InProgress'),
    labels: fc.constant({ [ID]: `p${i}` }),
  });

/**
 * An ended pod. `quiet`: as its kubelet leaves a pod that ended outside a rollout (no resize,
 * update or lifecycle move left on it); otherwise with whatever a rollout may have left on it.
 * Either may have left its CloneSet's selector, or be terminating.
 */
const endedPodArb = (i: number, quiet: boolean): fc.Arbitrary<{ spec: PodSpec; phase: 'Succeeded' | 'Failed' }> => {
  const left = <T>(value: T, ...others: T[]): fc.Arbitrary<T> =>
    quiet ? fc.constant(value) : fc.constantFrom(value, ...others);
  return fc.record({
    spec: fc.record({
      name: fc.constant(`e${i}`),
      revision: fc.constantFrom(OLD, NEW, 'web-older'),
      terminating: fc.boolean(),
      drained: left(false, true),
      resize: left<PodSpec['resize']>(undefined, 'Infeasible', 'Deferred', 'InProgress'),
      updateState: left<string | undefined>(undefined, '{}', 'not json'),
      labels: fc
        .constantFrom<Record<string, string>>(
          {},
          { app: 'other' },
          quiet ? {} : { 'lifecycle.apps.tailor.dev/state': 'PreparingNormal' },
        )
        .map((labels) => ({ ...labels, [ID]: `e${i}` })),
    }),
    phase: fc.constantFrom<'Succeeded' | 'Failed'>('Succeeded', 'Failed'),
  });
};

const scenarioArb = (quiet: boolean): fc.Arbitrary<Scenario> =>
  fc
    .record({
      replicas: fc.integer({ min: 0, max: 6 }),
      type: fc.constantFrom<NonNullable<CloneSetSpec['type']>>('ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'),
      maxUnavailable: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('20%', '50%')),
      maxSurge: fc.oneof(fc.integer({ min: 0, max: 2 }), fc.constantFrom('0%', '25%')),
      partition: fc.integer({ min: 0, max: 6 }),
      paused: fc.boolean(),
      change: fc.constantFrom<Change>('image', 'cpu', 'env'),
      claims: fc.boolean(),
      live: fc.integer({ min: 0, max: 6 }),
      ended: fc.integer({ min: 1, max: 4 }),
    })
    .chain((s) =>
      fc.tuple(
        fc.constant(s),
        fc.tuple(...Array.from({ length: s.live }, (_, i) => livePodArb(i))),
        fc.tuple(...Array.from({ length: s.ended }, (_, i) => endedPodArb(i, quiet))),
      ),
    )
    .map(([{ claims, live: _l, ended: _e, ...spec }, live, endedOnes]) => {
      const templates = revisionTemplates(spec.change);
      const pods = [
        ...live.map((p) => pod(p, templates)),
        ...endedOnes.map((e) => heavy(ended(pod(e.spec, templates), e.phase), 0.01)),
      ];
      const claimIds = [...pods.map((p) => p.metadata?.labels?.[ID] ?? ''), 'orphan'];
      return { spec, claims, pods, claimIds };
    });

const isEnded = (name: unknown, pods: readonly Pod[]): boolean =>
  pods.some((p) => p.metadata?.name === name && (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed'));

describe('the planner on ended pods', () => {
  it('plans the same on ended pods trimmed for the cache as on whole ones: releases, names and claims taken', () => {
    fc.assert(
      fc.property(scenarioArb(true), (scenario) => {
        const whole = planReconcile(input(scenario));
        const trimmed = planReconcile(input(scenario, podTrimmer(knownSelector)));
        expect(shape(trimmed)).toEqual(shape(whole));
      }),
      { numRuns: 300 },
    );
  });

  // What a rollout left on a pod that then ended (a pending resize, an update half done, a
  // lifecycle move) no longer moves the planner: it neither writes to the pod nor counts it, as
  // Kubernetes' and Kruise's controllers ignore pods that are not active (decision 74).
  it('acts on nothing left on an ended pod, and plans the same for every other pod', () => {
    fc.assert(
      fc.property(scenarioArb(false), (scenario) => {
        const whole = planReconcile(input(scenario));
        const trimmed = planReconcile(input(scenario, podTrimmer(knownSelector)));
        const onLive = (p: Plan): unknown[] =>
          p.intents
            .filter((i) => i.kind === 'create' || !isEnded(i.pod.metadata?.name, scenario.pods))
            .map(intentShape);
        expect(onLive(trimmed)).toEqual(onLive(whole));
        // On an ended pod, only a release: it left the selector, and that is read from its labels.
        const onEnded = (p: Plan): ReturnType<typeof intentShape>[] =>
          p.intents.filter((i) => i.kind !== 'create' && isEnded(i.pod.metadata?.name, scenario.pods)).map(intentShape);
        expect(onEnded(trimmed)).toEqual(onEnded(whole).filter(([kind]) => kind === 'release'));
        // Nor an event about one: an annotation it carries that does not parse, say.
        const events = (p: Plan): unknown[] =>
          p.events.filter((e) => e.on === 'workload' || !isEnded(e.on.metadata?.name, scenario.pods)).map(eventShape);
        expect(trimmed.events.map(eventShape)).toEqual(events(whole));
        expect(trimmed.status).toEqual(whole.status);
        expect(trimmed.wakeAt).toEqual(whole.wakeAt);
        expect(trimmed.budget).toEqual(whole.budget);
        expect([...trimmed.instanceIdsInUse].sort()).toEqual([...whole.instanceIdsInUse].sort());
        // The claims of a pod go with it only when the planner deletes it: never an ended one now.
        const claimsOfLive = (p: Plan): unknown =>
          p.claims && {
            ...p.claims,
            deleteWithPod: [...p.claims.deleteWithPod].filter(([name]) => !isEnded(name, scenario.pods)),
          };
        expect(claimsOfLive(trimmed)).toEqual(claimsOfLive(whole));
      }),
      { numRuns: 300 },
    );
  });

  it('a Failed pod with a pending resize is neither recreated nor counted as resizing', () => {
    const scenario: Scenario = {
      spec: { replicas: 1, maxUnavailable: 1, change: 'cpu' },
      claims: false,
      pods: [
        pod({ name: 'p0', revision: NEW }, revisionTemplates('cpu')),
        ended(pod({ name: 'e0', revision: NEW, resize: 'Infeasible' }, revisionTemplates('cpu')), 'Failed'),
      ],
      claimIds: [],
    };
    for (const plan of [planReconcile(input(scenario)), planReconcile(input(scenario, podTrimmer(knownSelector)))]) {
      expect(plan.intents).toEqual([]);
      expect(plan.status.resize?.pods ?? []).toEqual([]);
      expect(plan.status.resize?.infeasible ?? 0).toBe(0);
    }
  });
});
