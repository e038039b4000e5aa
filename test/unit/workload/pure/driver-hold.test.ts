// A release the canary driver cannot see is held (src/workload/pure/driver-hold.ts and
// driver-view.ts, decision 97): templates as Kruise Rollout v0.6.2's Kubernetes 1.26 types decode
// them (a table of changes it sees and does not, with apimachinery's semantic equality: zero
// values, pointers, nil and empty lists, quantities by value), properties over any template, the
// hold's conditions, and whole planner rounds: no pod moves while held, the condition and one
// event say why, Reconciling is False with UpdateHeld, and the hold lifts once the driver takes
// the release.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { PodTemplate } from '../../../../src/api/wire.js';
import { CloneSetConditionTypes as Conditions } from '../../../../src/api/types.js';
import { driverHold, KruiseRollout, type DriverHoldInput } from '../../../../src/workload/pure/driver-hold.js';
import { invisibleChanges, sameForDriver } from '../../../../src/workload/pure/driver-view.js';
import { planReconcile } from '../../../../src/workload/pure/planner.js';
import type { Plan } from '../../../../src/workload/pure/round-plan.js';
import { NEW, NOW, OLD, TEMPLATES, cloneSet, pod } from '../../../support/fixtures/planner-fixtures.js';

const tree = KruiseRollout.fields;
const base = TEMPLATES.old;

// Loose JSON, so a case can set any field, newer ones included.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;
/** The base template with `edit` applied to a copy. */
function edited(edit: (t: { metadata: Loose; spec: Loose }) => void): PodTemplate {
  const t = structuredClone(base) as unknown as { metadata: Loose; spec: Loose };
  edit(t);
  return t as unknown as PodTemplate;
}
const container = (t: { spec: Loose }): Loose => t.spec.containers[0] as Loose;

describe('a template as Kruise Rollout v0.6.2 (Kubernetes 1.26 types) sees it', () => {
  // [what changed, the driver sees it as the same, where (fields it lacks), the changed template]
  const cases: [string, boolean, string[], PodTemplate][] = [
    ['a new image', false, [], edited((t) => (container(t).image = 'busybox:v2'))],
    ['a container cpu limit', false, [], edited((t) => (container(t).resources.limits.cpu = '200m'))],
    ['a template annotation', false, [], edited((t) => (t.metadata.annotations = { a: 'b' }))],
    [
      'pod-level resources (1.32)',
      true,
      ['spec.resources'],
      edited((t) => (t.spec.resources = { limits: { cpu: '1' } })),
    ],
    [
      "a container's resizePolicy (1.27)",
      true,
      ['spec.containers[0].resizePolicy'],
      edited((t) => (container(t).resizePolicy[0].restartPolicy = 'RestartContainer')),
    ],
    [
      'a new init container that is a sidecar (restartPolicy, 1.28): the container itself is seen',
      false,
      [],
      edited((t) => (t.spec.initContainers = [{ name: 'init', image: 'i', restartPolicy: 'Always' }])),
    ],
    ['hostNetwork: false where it was absent (a zero value)', true, [], edited((t) => (t.spec.hostNetwork = false))],
    ['an empty env list where there was none', true, [], edited((t) => (container(t).env = []))],
    [
      'cpu 100m written as 0.1 (the same quantity)',
      true,
      [],
      edited((t) => (container(t).resources.limits.cpu = '0.1')),
    ],
    [
      'automountServiceAccountToken: false where it was absent (a pointer)',
      false,
      [],
      edited((t) => (t.spec.automountServiceAccountToken = false)),
    ],
    [
      'terminationGracePeriodSeconds: 0 where it was absent (a pointer)',
      false,
      [],
      edited((t) => (t.spec.terminationGracePeriodSeconds = 0)),
    ],
    [
      'a pod-template-hash label (its comparison ignores it)',
      true,
      [],
      edited((t) => (t.metadata.labels['pod-template-hash'] = 'x')),
    ],
    ['another label', false, [], edited((t) => (t.metadata.labels['tier'] = 'x'))],
  ];
  it.each(cases)('%s: the same for the driver %s, unseen at %j', (_, same, invisible, changed) => {
    expect(sameForDriver(tree, base, changed, KruiseRollout.ignoredLabels)).toBe(same);
    if (same && invisible.length > 0) expect(invisibleChanges(tree, base, changed)).toEqual(invisible);
  });

  it('is an equivalence: reflexive and symmetric over any template, and fields it lacks never count', () => {
    const anyJson = fc.jsonValue({ maxDepth: 3 });
    const template = fc.record({
      image: fc.string({ maxLength: 8 }),
      cpu: fc.constantFrom('100m', '0.1', '1', '1000m', '250m'),
      hostNetwork: fc.option(fc.boolean(), { nil: undefined }),
      newer: fc.option(anyJson, { nil: undefined }),
    });
    const build = (t: { image: string; cpu: string; hostNetwork?: boolean; newer?: unknown }): PodTemplate =>
      edited((x) => {
        container(x).image = t.image;
        container(x).resources.limits.cpu = t.cpu;
        if (t.hostNetwork !== undefined) x.spec.hostNetwork = t.hostNetwork;
        if (t.newer !== undefined) {
          x.spec.resources = t.newer;
          container(x).stopSignal = t.newer;
        }
      });
    fc.assert(
      fc.property(template, template, (a, b) => {
        const [x, y] = [build(a), build(b)];
        expect(sameForDriver(tree, x, x)).toBe(true);
        expect(sameForDriver(tree, x, y)).toBe(sameForDriver(tree, y, x));
        // Only the fields a 1.26 decode keeps decide.
        const seen = (t: typeof a): string =>
          JSON.stringify([
            t.image,
            Math.round(parseFloat(t.cpu) * (t.cpu.endsWith('m') ? 1 : 1000)),
            t.hostNetwork === true,
          ]);
        expect(sameForDriver(tree, x, y)).toBe(seen(a) === seen(b));
      }),
    );
  });
});

const invisible = edited((t) => (t.spec.resources = { limits: { cpu: '1' } }));
const holdInput = (over: Partial<DriverHoldInput> = {}): DriverHoldInput => ({
  labels: { [KruiseRollout.workloadTypeLabel]: 'statefulset' },
  annotations: {},
  currentRevision: OLD,
  updateRevision: NEW,
  templates: new Map([
    [OLD, base],
    [NEW, invisible],
  ]),
  ...over,
});

describe('when an update is held for the driver', () => {
  const cases: [string, boolean, Partial<DriverHoldInput>][] = [
    ['labelled for the generic path, a change only in newer fields, not taken', true, {}],
    ['not labelled: no driver holds its releases', false, { labels: {} }],
    [
      'labelled as another kind (cloneset): not the generic path',
      false,
      { labels: { [KruiseRollout.workloadTypeLabel]: 'cloneset' } },
    ],
    [
      'the driver took the release (in-progressing)',
      false,
      { annotations: { [KruiseRollout.inProgressingAnnotation]: '{}' } },
    ],
    ['no release open (current = update)', false, { updateRevision: OLD }],
    [
      'a change the driver sees',
      false,
      {
        templates: new Map([
          [OLD, base],
          [NEW, TEMPLATES.image],
        ]),
      },
    ],
    ['a template this round does not hold', false, { templates: new Map([[NEW, invisible]]) }],
  ];
  it.each(cases)('%s: held %s', (_, held, over) => {
    const condition = driverHold(holdInput(over));
    expect(condition !== undefined).toBe(held);
    if (held) {
      expect(condition).toMatchObject({ status: 'True', reason: 'ChangeInvisibleToDriver' });
      expect(condition?.message).toContain('(spec.resources)');
      expect(condition?.message).toContain(KruiseRollout.rolloutIdAnnotation);
    }
  });
});

describe('a planner round under Kruise Rollout', () => {
  const round = (annotations: Record<string, string>, status?: Plan['status']): Plan => {
    const cs = cloneSet({ replicas: 3, maxUnavailable: 3, ...(status ? { status } : {}) });
    cs.metadata = { ...cs.metadata, labels: { [KruiseRollout.workloadTypeLabel]: 'statefulset' }, annotations };
    cs.spec.template = invisible;
    const templates = new Map([
      [OLD, base],
      [NEW, invisible],
    ]);
    return planReconcile({
      cloneSet: cs,
      pods: [0, 1, 2].map((i) => pod({ name: `p${i}`, revision: OLD }, templates)),
      revisions: { updateRevision: NEW, currentRevision: OLD, templates },
      now: NOW,
      resizeBackend: 'kubelet',
      nodeEvidence: new Map(),
    });
  };
  const moved = (p: Plan): number =>
    p.intents.filter((i) => i.kind === 'drain' || i.kind === 'patch' || i.kind === 'delete').length;
  const condition = (p: Plan, type: string) => p.status.conditions?.find((c) => c.type === type);

  it('moves no pod, says why in UpdateHeld and one event, and Reconciling is False (held on purpose)', () => {
    const held = round({});
    expect(moved(held)).toBe(0);
    expect(condition(held, Conditions.UpdateHeld)).toMatchObject({ status: 'True', reason: 'ChangeInvisibleToDriver' });
    expect(held.events.filter((e) => e.reason === 'UpdateHeld')).toHaveLength(1);
    expect(condition(held, Conditions.Reconciling)).toMatchObject({ status: 'False', reason: 'UpdateHeld' });
    // The next round, the condition already there, plans no second event.
    expect(round({}, held.status).events.filter((e) => e.reason === 'UpdateHeld')).toHaveLength(0);
  });

  it('lifts the hold once the driver takes the release, and removes the condition', () => {
    const taken = round({ [KruiseRollout.inProgressingAnnotation]: '{"rolloutName":"web"}' }, round({}).status);
    expect(moved(taken)).toBeGreaterThan(0);
    expect(condition(taken, Conditions.UpdateHeld)).toBeUndefined();
  });
});
