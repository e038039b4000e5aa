import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { trimPod } from '../../../../src/workload/pure/pod-cache.js';
import type { PlanInput } from '../../../../src/workload/pure/plan-input.js';
import { planReconcile } from '../../../../src/workload/pure/planner.js';
import { CloneSetConditionTypes as Conditions } from '../../../../src/api/types.js';
import { resolveRolloutLimits } from '../../../../src/workload/pure/limits.js';
import type { Plan } from '../../../../src/workload/pure/round-plan.js';
import type { Pod } from '../../../../src/api/wire.js';
import {
  NEW,
  NOW,
  OLD,
  applyPlan,
  availableCount,
  cloneSet,
  disruptedAvailable,
  intentsOf,
  pod,
  revisionTemplates,
  type Change,
  type CloneSetSpec,
  type PodSpec,
} from '../../../support/fixtures/planner-fixtures.js';

function plan(spec: CloneSetSpec, pods: PodSpec[], at = NOW): { plan: Plan; pods: Pod[]; input: PlanInput } {
  const templates = revisionTemplates(spec.change ?? 'image');
  const objects = pods.map((p) => pod(p, templates));
  const input: PlanInput = {
    cloneSet: cloneSet(spec),
    pods: objects,
    revisions: { updateRevision: NEW, currentRevision: OLD, templates },
    now: at,
    resizeBackend: 'kubelet',
    nodeEvidence: new Map(),
  };
  return { plan: planReconcile(input), pods: objects, input };
}

const names = (n: number, s: Omit<PodSpec, 'name'> = {}): PodSpec[] =>
  Array.from({ length: n }, (_, i) => ({ name: `p${i}`, ...s }));
const condition = (p: Plan, type: string) => p.status.conditions?.find((c) => c.type === type);

describe('the planner draws every disruption from one budget', () => {
  it('recreates only one of four Infeasible pods when maxUnavailable is 1', () => {
    const { plan: p } = plan(
      { replicas: 4, maxUnavailable: 1, change: 'cpu' },
      names(4, { revision: NEW, resize: 'Infeasible' }),
    );
    expect(intentsOf(p, 'delete').map((d) => d.reason)).toEqual(['ResizeRecreate']);
    expect(p.budget).toEqual({ total: 1, used: 1 });
    expect(condition(p, Conditions.ResizeBlocked)).toMatchObject({ status: 'True', reason: 'Infeasible' });
    expect(condition(p, Conditions.ResizeBlocked)?.message).toMatch(/recreate waits for maxUnavailable 1/);
  });

  it('recreates no Infeasible pod while an unschedulable replacement holds the budget', () => {
    const pods = [
      ...names(3, { revision: NEW, resize: 'Infeasible' }),
      { name: 'replacement', revision: NEW, scheduled: false },
    ];
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, change: 'cpu' }, pods);
    expect(intentsOf(p, 'delete')).toEqual([]);
    expect(condition(p, Conditions.ResizeBlocked)?.message).toMatch(/out of service: replacement/);
  });

  it('waits instead of recreating when onInfeasible is Wait, and says so', () => {
    const { plan: p } = plan(
      { replicas: 2, maxUnavailable: 2, change: 'cpu', onInfeasible: 'Wait' },
      names(2, { revision: NEW, resize: 'Infeasible' }),
    );
    expect(intentsOf(p, 'delete')).toEqual([]);
    expect(condition(p, Conditions.ResizeBlocked)).toMatchObject({ status: 'True', reason: 'Infeasible' });
  });

  it('reports an Infeasible resize the strategy leaves waiting as Stalled, and one it recreates as Reconciling (kstatus)', () => {
    const waits = plan(
      { replicas: 2, maxUnavailable: 2, change: 'cpu', type: 'InPlaceOnly' },
      names(2, { revision: NEW, resize: 'Infeasible' }),
    );
    expect(condition(waits.plan, Conditions.Stalled)).toMatchObject({ status: 'True', reason: 'ResizeInfeasible' });
    expect(condition(waits.plan, Conditions.Reconciling)).toMatchObject({ status: 'False', reason: 'Stalled' });
    const recreates = plan(
      { replicas: 2, maxUnavailable: 1, change: 'cpu' },
      names(2, { revision: NEW, resize: 'Infeasible' }),
    );
    expect(condition(recreates.plan, Conditions.Stalled)).toMatchObject({ status: 'False', reason: 'NotStalled' });
  });

  it('reports a rollout under way as Reconciling, and a partition holding the rest as not (kstatus)', () => {
    const moving = plan({ replicas: 4, maxUnavailable: 1, change: 'image' }, names(4));
    expect(condition(moving.plan, Conditions.Reconciling)).toMatchObject({
      status: 'True',
      reason: 'RolloutInProgress',
    });
    const held = plan({ replicas: 4, maxUnavailable: 1, change: 'image', partition: 3 }, [
      { name: 'p0', revision: NEW },
      ...names(4).slice(1),
    ]);
    expect(condition(held.plan, Conditions.Reconciling)).toMatchObject({ status: 'False', reason: 'PartitionHeld' });
    expect(condition(held.plan, Conditions.Stalled)).toMatchObject({ status: 'False' });
  });

  it('counts a Deferred resize past its timeout as a disruption like Infeasible', () => {
    const { plan: p } = plan(
      { replicas: 3, maxUnavailable: 1, change: 'cpu' },
      names(3, { revision: NEW, resize: 'Deferred' }),
    );
    expect(intentsOf(p, 'delete')).toHaveLength(1);
    expect(intentsOf(p, 'delete')[0]?.message).toMatch(/DeferredTimeout/);
  });

  it('drains at most maxUnavailable pods for an image change', () => {
    const { plan: p } = plan({ replicas: 5, maxUnavailable: 2, change: 'image' }, names(5));
    expect(intentsOf(p, 'drain')).toHaveLength(2);
  });

  it('falls back to recreate within the budget when a change cannot be made in place', () => {
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, change: 'env' }, names(4));
    expect(intentsOf(p, 'delete').map((d) => d.reason)).toEqual(['RecreateFallback']);
    expect(p.events.map((e) => e.reason)).toContain('RecreateFallback');
  });

  it('resizes every pod at once when nothing restarts, bounded only by the partition', () => {
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, partition: 1, change: 'cpu' }, names(4));
    expect(intentsOf(p, 'patch')).toHaveLength(3);
    expect(intentsOf(p, 'drain')).toEqual([]);
  });

  it('replaces a never-scheduled pod at no cost when the template is reverted', () => {
    const pods = [...names(3, { revision: NEW }), { name: 'stuck', revision: NEW, scheduled: false }];
    // The revert: the update revision is the old one again.
    const templates = revisionTemplates('cpu');
    const objects = pods.map((s) => pod(s, templates));
    const p = planReconcile({
      cloneSet: cloneSet({ replicas: 4, maxUnavailable: 1, change: 'cpu' }),
      pods: objects,
      revisions: { updateRevision: OLD, currentRevision: OLD, templates },
      now: NOW,
      resizeBackend: 'kubelet',
      nodeEvidence: new Map(),
    });
    expect(intentsOf(p, 'delete').map((d) => [d.pod.metadata?.name, d.reason])).toEqual([
      ['stuck', 'ReplaceUnscheduled'],
    ]);
    expect(
      intentsOf(p, 'patch')
        .map((i) => i.pod.metadata?.name)
        .sort(),
    ).toEqual(['p0', 'p1', 'p2']);
    expect(disruptedAvailable(p, objects)).toEqual([]);
  });

  it('says the rollout is blocked, naming the pods, when maxUnavailable pods are out of service', () => {
    const pods = [{ name: 'broken', revision: NEW, ready: false }, ...names(3)];
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, change: 'image' }, pods);
    expect(intentsOf(p, 'drain')).toEqual([]);
    expect(condition(p, Conditions.RolloutBlocked)).toMatchObject({ status: 'True', reason: 'MaxUnavailable' });
    expect(condition(p, Conditions.RolloutBlocked)?.message).toMatch(/broken/);
    expect(p.events.filter((e) => e.reason === 'RolloutBlocked')).toHaveLength(1);
  });

  it('does not call a pod that is starting after its restart a blocked rollout, and looks again when it would be', () => {
    const justRestarted = new Date(NOW - 5_000).toISOString();
    const pods = [{ name: 'starting', revision: NEW, ready: false, readySince: justRestarted }, ...names(3)];
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, change: 'image' }, pods);
    expect(condition(p, Conditions.RolloutBlocked)).toBeUndefined();
    expect(p.events.filter((e) => e.reason === 'RolloutBlocked')).toEqual([]);
    expect(p.wakeAt).toBe(NOW - 5_000 + 30_000);
  });

  it.each([
    ['CrashLoopBackOff', true],
    ['ImagePullBackOff', true],
    ['ErrImagePull', true],
    ['ErrImageNeverPull', true],
    ['InvalidImageName', true],
    ['CreateContainerConfigError', true],
    ['CreateContainerError', true],
    ['RunContainerError', true],
    ['ContainerCreating', false],
    ['PodInitializing', false],
  ])('a container waiting with %s, 5 s after its restart, is stuck at once: %s', (reason, isStuck) => {
    const justRestarted = new Date(NOW - 5_000).toISOString();
    const pods = [
      { name: 'waiting', revision: NEW, ready: false, readySince: justRestarted, waiting: reason },
      ...names(3),
    ];
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, change: 'image' }, pods);
    expect(condition(p, Conditions.RolloutBlocked)?.message?.includes('stuck: waiting') ?? false).toBe(isStuck);
  });

  // Issue 20.17: the pod an unpullable image holds mid in-place update is named, with the kubelet's reason.
  it.each([
    ['ErrImagePull', true],
    ['ImagePullBackOff', true],
    [undefined, false],
  ])('names a pod mid in-place update whose container waits with %s: %s', (waiting, named) => {
    const pods = [{ name: 'pulling', revision: NEW, drained: true, ...(waiting ? { waiting } : {}) }, ...names(3)];
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, change: 'image' }, pods);
    const message = condition(p, Conditions.RolloutBlocked)?.message ?? '';
    expect(message.includes(`stuck: pulling (container app: ${waiting})`)).toBe(named);
  });

  it.each([
    [30_000, false],
    [61_000, true],
  ])('names a pod whose restart in place waits %i ms for the node agent: %s', (ago, named) => {
    const state = JSON.stringify({
      revision: NEW,
      updateTimestamp: new Date(NOW - ago).toISOString(),
      changed: { app: ['restart'] },
      lastRestartCounts: { app: 0 },
    });
    const pods = [{ name: 'restarting', revision: NEW, drained: true, updateState: state }, ...names(3)];
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, change: 'image' }, pods);
    const message = condition(p, Conditions.RolloutBlocked)?.message ?? '';
    expect(message.includes('stuck: restarting (containers app wait to be restarted by the node agent')).toBe(named);
  });

  it('names at most five stuck pods and counts the rest, so the message stays short', () => {
    const pods = [
      ...names(8, { revision: NEW, waiting: 'CrashLoopBackOff', ready: false }),
      ...names(2).map((p) => ({ ...p, name: `ok${p.name}` })),
    ];
    const { plan: p } = plan({ replicas: 10, maxUnavailable: 1, change: 'image' }, pods);
    expect(condition(p, Conditions.RolloutBlocked)?.message).toMatch(
      /stuck: p0 \(container app: CrashLoopBackOff\), .*p4 \(.*\), 3 more;/,
    );
  });

  it('calls a pod no node fits stuck at once', () => {
    const pods = [
      { name: 'homeless', revision: NEW, scheduled: false, readySince: new Date(NOW).toISOString() },
      ...names(3),
    ];
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, change: 'image' }, pods);
    expect(condition(p, Conditions.RolloutBlocked)?.message).toMatch(/stuck: homeless/);
  });

  it('plans the RolloutBlocked event only when the condition changes', () => {
    const pods = [{ name: 'broken', revision: NEW, ready: false }, ...names(3)];
    const first = plan({ replicas: 4, maxUnavailable: 1, change: 'image' }, pods).plan;
    const again = plan({ replicas: 4, maxUnavailable: 1, change: 'image', status: first.status }, pods).plan;
    expect(again.events.filter((e) => e.reason === 'RolloutBlocked')).toEqual([]);
    expect(condition(again, Conditions.RolloutBlocked)?.message).toBe(
      condition(first, Conditions.RolloutBlocked)?.message,
    );
  });

  // Issue 22.3: Kruise's specified-delete label, as podsToDelete: the pod is deleted and replaced.
  it.each([
    ['podsToDelete', { podsToDelete: ['p1'] }, {}, 'named in scaleStrategy.podsToDelete'],
    [
      'the specified-delete label (any value)',
      {},
      { 'apps.tailor.dev/specified-delete': '' },
      'labelled apps.tailor.dev/specified-delete',
    ],
  ])('deletes a pod chosen by %s and says why', (_, spec, labels, message) => {
    const pods = names(3).map((p) => (p.name === 'p1' ? { ...p, labels } : p));
    const { plan: p } = plan({ replicas: 3, maxUnavailable: 1, ...spec }, pods);
    expect(intentsOf(p, 'delete').map((d) => [d.pod.metadata?.name, d.reason, d.message])).toEqual([
      ['p1', 'PodsToDelete', message],
    ]);
  });

  // Issue 22.3: OnDelete never touches a running pod; the one that replaces a deleted pod is new.
  it('under OnDelete leaves old pods alone and creates the replacement of a deleted one at the update revision', () => {
    const { plan: p } = plan({ replicas: 3, type: 'OnDelete', maxUnavailable: 3 }, names(2));
    expect(p.intents.map((i) => i.kind)).toEqual(['create']);
    expect(intentsOf(p, 'create')[0]?.revision).toBe(NEW);
    const { plan: idle } = plan({ replicas: 3, type: 'OnDelete', maxUnavailable: 3 }, names(3));
    expect(idle.intents).toEqual([]);
    expect(condition(idle, Conditions.RolloutBlocked)).toBeUndefined();
  });

  it('does not touch a ready pod named in podsToDelete when the budget is spent', () => {
    const pods = [{ name: 'unready', revision: NEW, ready: false }, ...names(3, { revision: NEW })];
    const { plan: p } = plan({ replicas: 4, maxUnavailable: 1, podsToDelete: ['p0'] }, pods);
    expect(intentsOf(p, 'delete')).toEqual([]);
  });

  it('reads an invalid inplace-update-state as absent and reports it on the pod', () => {
    const pods = [
      { name: 'odd', revision: NEW, drained: true, updateState: '{"revision": 5}' },
      ...names(2, { revision: NEW }),
    ];
    const { plan: p } = plan({ replicas: 3, maxUnavailable: 1, change: 'image' }, pods);
    const event = p.events.find((e) => e.reason === 'InvalidAnnotation');
    expect(event).toMatchObject({ type: 'Warning' });
    expect(event?.on).not.toBe('workload');
    expect(event?.message).toMatch(/inplace-update-state at revision/);
  });

  it('does not throw on annotations of any shape', () => {
    for (const value of [
      'null',
      '[]',
      '5',
      '{"changed": {"app": 5}}',
      '{"revision":"x","updateTimestamp":"now"}',
      'not json',
    ]) {
      expect(() =>
        plan({ replicas: 2, change: 'image' }, [
          { name: 'a', drained: true, revision: NEW, updateState: value },
          { name: 'b' },
        ]),
      ).not.toThrow();
    }
  });

  it('releases a pod whose labels no longer match the selector and plans nothing else for it', () => {
    const { plan: p } = plan({ replicas: 1 }, [
      { name: 'gone', labels: { app: 'other' } },
      { name: 'kept', revision: NEW },
    ]);
    expect(intentsOf(p, 'release').map((r) => r.pod.metadata?.name)).toEqual(['gone']);
    expect(
      p.intents
        .filter((i) => i.kind !== 'release' && i.kind !== 'create')
        .map((i) => (i as { pod: Pod }).pod.metadata?.name),
    ).not.toContain('gone');
  });
});

describe('the planner follows the one backend rule for resizes', () => {
  const request = JSON.stringify({
    revision: NEW,
    containers: { app: { requests: { cpu: '200m', memory: '64Mi' }, limits: { cpu: '200m', memory: '64Mi' } } },
  });
  const kubeletResizes = JSON.stringify({
    revision: NEW,
    state: 'Infeasible',
    reason: 'KubeletResizes',
    message: 'the kubelet resizes here',
    since: '2026-03-01T11:59:00Z',
  });
  const withEvidence = (
    kubeletResizesThere: boolean | undefined,
    pods: PodSpec[],
    backend: PlanInput['resizeBackend'] = 'auto',
  ) => {
    const templates = revisionTemplates('cpu');
    const objects = pods.map((p) => pod(p, templates));
    return planReconcile({
      cloneSet: cloneSet({ replicas: pods.length, maxUnavailable: 1, change: 'cpu' }),
      pods: objects,
      revisions: { updateRevision: NEW, currentRevision: OLD, templates },
      now: NOW,
      resizeBackend: backend,
      nodeEvidence: new Map([['node-1', { kubeletResizes: kubeletResizesThere, why: 'test' }]]),
    });
  };

  it('resizes through pods/resize where the node shows the kubelet resizes', () => {
    const [patch] = intentsOf(withEvidence(true, [{ name: 'a' }]), 'patch');
    expect(patch?.step.resize).toBeDefined();
    expect(JSON.stringify(patch?.step.patch)).not.toContain('resize-request');
  });

  it('asks the node agent where there is no evidence that the kubelet resizes', () => {
    for (const evidence of [false, undefined]) {
      const [patch] = intentsOf(withEvidence(evidence, [{ name: 'a' }]), 'patch');
      expect(patch?.step.resize).toBeUndefined();
      expect(JSON.stringify(patch?.step.patch)).toContain('apps.tailor.dev/resize-request');
    }
  });

  it('recreates a pod whose answered request timed out, and does not also reroute it (one write per pod and round)', () => {
    const stale = kubeletResizes.replace('11:59:00Z', '11:00:00Z');
    const annotations = { 'apps.tailor.dev/resize-request': request, 'apps.tailor.dev/resize-status': stale };
    const p = withEvidence(false, [{ name: 'a', revision: NEW, annotations }]);
    expect(p.intents.map((i) => i.kind)).toEqual(['delete']);
  });

  it('reroutes a request the agent answered with KubeletResizes to pods/resize and drops the annotations', () => {
    const annotations = { 'apps.tailor.dev/resize-request': request, 'apps.tailor.dev/resize-status': kubeletResizes };
    const p = withEvidence(false, [{ name: 'a', revision: NEW, annotations }]);
    expect(intentsOf(p, 'reroute')).toEqual([
      expect.objectContaining({
        resize: { spec: { containers: [{ name: 'app', resources: JSON.parse(request).containers.app }] } },
      }),
    ]);
  });

  it('reroutes a stale request when the kubelet backend is configured, and leaves an agent request alone otherwise', () => {
    const annotations = { 'apps.tailor.dev/resize-request': request };
    expect(
      intentsOf(withEvidence(undefined, [{ name: 'a', revision: NEW, annotations }], 'kubelet'), 'reroute'),
    ).toHaveLength(1);
    expect(intentsOf(withEvidence(undefined, [{ name: 'a', revision: NEW, annotations }], 'auto'), 'reroute')).toEqual(
      [],
    );
  });
});

// ---- Properties --------------------------------------------------------------------------

const podArb = (i: number): fc.Arbitrary<PodSpec> =>
  fc.record({
    name: fc.constant(`p${i}`),
    revision: fc.constantFrom(OLD, NEW),
    ready: fc.boolean(),
    scheduled: fc.boolean().map((b) => b || i % 3 !== 0),
    terminating: fc.boolean().map((b) => b && i % 4 === 0),
    drained: fc.boolean().map((b) => b && i % 2 === 0),
    resize: fc.constantFrom<PodSpec['resize']>(undefined, 'Infeasible', 'Deferred', 'InProgress'),
  });

const scenarioArb = fc
  .record({
    replicas: fc.integer({ min: 0, max: 8 }),
    type: fc.constantFrom<NonNullable<CloneSetSpec['type']>>('ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'),
    maxUnavailable: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('0%', '20%', '50%', '100%')),
    maxSurge: fc.oneof(fc.integer({ min: 0, max: 2 }), fc.constantFrom('0%', '25%')),
    partition: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constantFrom('0%', '50%')),
    paused: fc.boolean(),
    onInfeasible: fc.constantFrom<'Recreate' | 'Wait'>('Recreate', 'Wait'),
    onTimeout: fc.constantFrom<'Recreate' | 'Wait'>('Recreate', 'Wait'),
    change: fc.constantFrom<Change>('image', 'cpu', 'env'),
    podCount: fc.integer({ min: 0, max: 10 }),
    deleteMask: fc.integer({ min: 0, max: 1023 }),
  })
  .chain((s) => fc.tuple(fc.constant(s), fc.tuple(...Array.from({ length: s.podCount }, (_, i) => podArb(i)))))
  .map(([s, pods]) => {
    // maxUnavailable 0 needs a surge to move at all; the CRD refuses both at 0 for a rollout.
    const spec: CloneSetSpec = {
      ...s,
      podsToDelete: pods.filter((_, i) => (s.deleteMask >> i) & 1).map((p) => p.name),
    };
    return { spec, pods: pods };
  });

/** A pod as the API server returns it, with the fields no decision reads filled in. */
function withUnreadFields(pod: Pod): Pod {
  const p = structuredClone(pod);
  p.metadata!.managedFields = [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: {} }];
  p.spec!.containers = p.spec!.containers.map((c) => ({
    ...c,
    env: [{ name: 'MODE', value: 'x' }],
    command: ['/bin/sh'],
    readinessProbe: { tcpSocket: { port: 8080 } },
  }));
  p.spec!.volumes = [{ name: 'data', emptyDir: {} }];
  p.spec!.tolerations = [{ key: 'k', operator: 'Exists' }];
  p.status!.hostIP = '198.18.0.1';
  p.status!.podIPs = [{ ip: '198.18.16.9' }];
  return p;
}

function floorOf(spec: CloneSetSpec): number {
  const { maxUnavailable } = resolveRolloutLimits({
    replicas: spec.replicas,
    maxUnavailable: spec.maxUnavailable,
    maxSurge: spec.maxSurge,
    paused: spec.paused,
  });
  return spec.replicas - maxUnavailable;
}

describe('planner properties (fast-check)', () => {
  it('resolves the limits once per round, as the spec gives them', () => {
    fc.assert(
      fc.property(scenarioArb, ({ spec, pods }) => {
        const { plan: p } = plan(spec, pods);
        expect(spec.replicas - p.limits.maxUnavailable).toBe(floorOf(spec));
      }),
    );
  });

  it('never takes more available pods out of service than the budget allows', () => {
    fc.assert(
      fc.property(scenarioArb, ({ spec, pods }) => {
        const { plan: p, pods: objects } = plan(spec, pods);
        const disrupted = disruptedAvailable(p, objects);
        expect(disrupted.length).toBeLessThanOrEqual(p.budget.total);
        expect(availableCount(objects) - disrupted.length).toBeGreaterThanOrEqual(
          Math.min(availableCount(objects), floorOf(spec)),
        );
      }),
      { numRuns: 400 },
    );
  });

  it('keeps the partition: in-place moves never push the updated count past replicas − partition (+ the surge pods)', () => {
    fc.assert(
      fc.property(scenarioArb, ({ spec, pods }) => {
        const { plan: p, pods: objects, input } = plan(spec, pods);
        const live = objects.filter((o) => !o.metadata?.deletionTimestamp);
        const updatedBefore = live.filter((o) => o.metadata?.labels?.['controller-revision-hash'] === NEW).length;
        const moved = intentsOf(p, 'patch').filter(
          (i) => i.step.patch && JSON.stringify(i.step.patch).includes(NEW),
        ).length;
        const limit =
          input.cloneSet.spec.replicas -
          (p.status.expectedUpdatedReplicas === undefined
            ? 0
            : input.cloneSet.spec.replicas - p.status.expectedUpdatedReplicas);
        // Pods above replicas on the update revision are surge, and leave at the end: an old pod
        // updated in place is kept before them (decision 72), so the updated count may pass the
        // partition's by the surge for a while, as Kruise's surge pods do.
        const { maxSurge } = resolveRolloutLimits({
          replicas: spec.replicas,
          maxSurge: spec.maxSurge,
          maxUnavailable: spec.maxUnavailable,
          paused: spec.paused,
        });
        expect(updatedBefore + moved).toBeLessThanOrEqual(Math.max(updatedBefore, limit + maxSurge));
      }),
      {
        numRuns: 400,
        // Found by this property: replicas 1 and maxSurge 1 with a new pod above replicas (taken
        // for surge) and old pods to update in place (decision 72).
        examples: [
          [
            {
              spec: {
                replicas: 1,
                type: 'InPlaceOnly',
                maxUnavailable: '50%',
                maxSurge: '25%',
                partition: '0%',
                paused: false,
                onInfeasible: 'Recreate',
                onTimeout: 'Recreate',
                change: 'cpu',
                podsToDelete: ['p0', 'p1'],
              },
              pods: [
                { name: 'p0', revision: OLD, ready: false, scheduled: false, terminating: true },
                { name: 'p1', revision: OLD, ready: true, scheduled: true },
                { name: 'p2', revision: OLD, ready: false, scheduled: true },
                { name: 'p3', revision: NEW, ready: false, scheduled: false },
                { name: 'p4', revision: OLD, ready: false, scheduled: true },
              ],
            },
          ],
        ],
      },
    );
  });

  it('plans the same on pods trimmed for the cache (pod-cache.ts) as on whole pods with every field', () => {
    fc.assert(
      fc.property(scenarioArb, ({ spec, pods }) => {
        const whole = plan(spec, pods);
        const noisy = whole.pods.map((p) => withUnreadFields(p));
        const fromWhole = planReconcile({ ...whole.input, pods: noisy });
        const fromTrimmed = planReconcile({ ...whole.input, pods: noisy.map((p) => trimPod(p)) });
        const shape = (p: Plan) => ({
          intents: p.intents.map((i) => [
            i.kind,
            i.kind === 'create' ? i.revision : i.pod.metadata?.name,
            i.kind === 'patch' ? i.step.patch : null,
          ]),
          status: p.status,
          budget: p.budget,
          wakeAt: p.wakeAt,
        });
        expect(shape(fromTrimmed)).toEqual(shape(fromWhole));
      }),
      { numRuns: 200 },
    );
  });

  it('planning again on the resulting state stays within the budget and repeats nothing', () => {
    fc.assert(
      fc.property(scenarioArb, ({ spec, pods }) => {
        const first = plan(spec, pods);
        const templates = first.input.revisions.templates as ReturnType<typeof revisionTemplates>;
        const after = applyPlan(first.pods, first.plan, templates);
        const second = planReconcile({
          ...first.input,
          pods: after,
          cloneSet: cloneSet({ ...spec, status: first.plan.status }),
        });
        const start = availableCount(first.pods);
        const end = availableCount(applyPlan(after, second, templates));
        expect(end).toBeGreaterThanOrEqual(Math.min(start, floorOf(spec)));
        const again = (kind: 'delete' | 'drain'): string[] => {
          const before = new Set(intentsOf(first.plan, kind).map((i) => i.pod.metadata?.name));
          return intentsOf(second, kind)
            .map((i) => i.pod.metadata?.name ?? '')
            .filter((n) => before.has(n));
        };
        expect(again('delete')).toEqual([]);
        expect(again('drain')).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the pod cache', () => {
  it('drops what no decision reads and keeps what they do', () => {
    const trimmed = trimPod(
      withUnreadFields(pod({ name: 'a', revision: NEW, resize: 'Infeasible', drained: true, updateState: '{}' })),
    );
    expect(trimmed.metadata?.managedFields).toBeUndefined();
    expect(trimmed.spec?.volumes).toBeUndefined();
    expect(trimmed.spec?.containers[0]).toEqual({
      name: 'app',
      image: 'busybox:v2',
      resources: expect.anything(),
      resizePolicy: expect.anything(),
    });
    expect(trimmed.status?.hostIP).toBeUndefined();
    expect(trimmed.status?.conditions?.map((c) => c.type)).toContain('PodResizePending');
    expect(trimmed.metadata?.annotations?.['apps.tailor.dev/inplace-update-state']).toBe('{}');
    expect(trimmed.spec?.readinessGates).toHaveLength(1);
  });

  // Issue 20.14: anyone who may create a pod can make its annotations large; the cache keeps only what is read.
  it("keeps only Tailor's annotations and the deletion cost", () => {
    const big = pod({
      name: 'a',
      annotations: {
        'example.com/blob': 'x'.repeat(200_000),
        'controller.kubernetes.io/pod-deletion-cost': '5',
        'apps.tailor.dev/resize-status': '{}',
        'lifecycle.apps.tailor.dev/timestamp': 't',
        'notapps.tailor.dev/x': 'y',
      },
    });
    expect(trimPod(big).metadata?.annotations).toEqual({
      'controller.kubernetes.io/pod-deletion-cost': '5',
      'apps.tailor.dev/resize-status': '{}',
      'lifecycle.apps.tailor.dev/timestamp': 't',
    });
  });
});
