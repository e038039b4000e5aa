// Table tests for CloneSet lifecycle hooks: the state machine and hook tests (src/cloneset/
// lifecycle.ts), how the rollout arithmetic counts pods in hooked states (calculateDiffs,
// planScale) and what the planner makes of a hooked pod. The calculateDiffs rows carry over the
// facts of OpenKruise v1.9.1's lifecycle rows of its calculateDiffsWithExpectation suite (inputs
// and expected numbers), restated in our notation; the hook rows those of its lifecycle utils.
import { describe, expect, it } from '@jest/globals';

import { LABEL_LIFECYCLE_STATE, type CloneSetLifecycle, type LifecycleHook } from '../../../../src/api/types.js';
import type { Pod } from '../../../../src/api/wire.js';
import {
  deletionStep,
  excludesPreparingDelete,
  inPlaceUpdateGate,
  isAllHooked,
  isHooked,
  marksPodNotReady,
  refreshedLifecycleState,
  type RefreshFacts,
} from '../../../../src/workload/pure/lifecycle.js';
import { planReconcile } from '../../../../src/workload/pure/planner.js';
import { countsAsAvailable, type PodSummary } from '../../../../src/workload/pure/pod-state.js';
import { planScale, type ScalePlan } from '../../../../src/workload/pure/scale.js';
import {
  calculateDiffs,
  NO_DIFFS,
  planUpdate,
  type RolloutDiffs,
  type RolloutInput,
} from '../../../../src/workload/pure/update.js';
import {
  NEW,
  NOW,
  OLD,
  cloneSet,
  intentsOf,
  pod,
  revisionTemplates,
} from '../../../support/fixtures/planner-fixtures.js';

const hookPod = (labels: Record<string, string>, finalizers: string[] = []): Pod => ({
  metadata: { name: 'p', labels, finalizers },
});

// Issue 32.4: Kruise's CloneSet label, in Tailor's domain, works as the field does.
describe('excludesPreparingDelete: the scaleStrategy field or the CloneSet label', () => {
  const LABEL = 'apps.tailor.dev/cloneset-scaling-exclude-preparing-delete';
  it.each<[string, Record<string, string> | undefined, boolean | undefined, boolean]>([
    ['neither', undefined, undefined, false],
    ['the field', undefined, true, true],
    ['the field false', undefined, false, false],
    ['the label "true"', { [LABEL]: 'true' }, undefined, true],
    ['the label with another value', { [LABEL]: 'yes' }, undefined, false],
    [
      "Kruise's own label (another API group's) is not read",
      { 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete': 'true' },
      undefined,
      false,
    ],
    ['the label with the field false', { [LABEL]: 'true' }, false, true],
  ])('%s', (_name, labels, field, excluded) => {
    const cs = {
      metadata: { ...(labels ? { labels } : {}) },
      spec: { scaleStrategy: field === undefined ? {} : { excludePreparingDelete: field } },
    };
    expect(excludesPreparingDelete(cs)).toBe(excluded);
  });
});

describe('isHooked and isAllHooked', () => {
  const hook: LifecycleHook = { labelsHandler: { 'hold-me': 'true' }, finalizersHandler: ['example.com/drain'] };
  it.each([
    { name: 'no hook holds nothing', hook: undefined, pod: hookPod({ 'hold-me': 'true' }), hooked: false, all: false },
    {
      name: 'a matching finalizer holds the pod',
      hook,
      pod: hookPod({}, ['example.com/drain']),
      hooked: true,
      all: false,
    },
    { name: 'a matching label holds the pod', hook, pod: hookPod({ 'hold-me': 'true' }), hooked: true, all: false },
    {
      name: 'a label with another value does not',
      hook,
      pod: hookPod({ 'hold-me': 'false' }),
      hooked: false,
      all: false,
    },
    {
      name: 'label and finalizer both: all hooked',
      hook,
      pod: hookPod({ 'hold-me': 'true' }, ['example.com/drain']),
      hooked: true,
      all: true,
    },
    { name: 'neither: released', hook, pod: hookPod({}), hooked: false, all: false },
    { name: 'an empty hook is all hooked on any pod', hook: {}, pod: hookPod({}), hooked: false, all: true },
  ])('$name', (row) => {
    expect({ hooked: isHooked(row.hook, row.pod), all: isAllHooked(row.hook, row.pod) }).toEqual({
      hooked: row.hooked,
      all: row.all,
    });
  });

  it.each([
    { name: 'no lifecycle', lifecycle: undefined, marks: false },
    { name: 'hooks without markPodNotReady', lifecycle: { preDelete: {}, inPlaceUpdate: {} }, marks: false },
    { name: 'preDelete marks pods not ready', lifecycle: { preDelete: { markPodNotReady: true } }, marks: true },
    {
      name: 'inPlaceUpdate marks pods not ready',
      lifecycle: { inPlaceUpdate: { markPodNotReady: true } },
      marks: true,
    },
    { name: 'preNormal does not count', lifecycle: { preNormal: { markPodNotReady: true } }, marks: false },
  ])('markPodNotReady: $name', ({ lifecycle, marks }) => {
    expect(marksPodNotReady(lifecycle as CloneSetLifecycle | undefined)).toBe(marks);
  });
});

describe('refreshedLifecycleState: the moves a pod makes without being deleted or updated', () => {
  const held = { labelsHandler: { hook: 'true' } };
  const facts = (f: Partial<RefreshFacts> = {}): RefreshFacts => ({
    updateRevision: NEW,
    revision: OLD,
    scheduled: true,
    inPlaceUpdateDone: false,
    ...f,
  });
  const inState = (state: string, labels: Record<string, string> = {}): Pod =>
    hookPod({ [LABEL_LIFECYCLE_STATE]: state, ...labels });
  it.each([
    {
      name: 'a scheduled new pod without preNormal becomes Normal',
      l: undefined,
      pod: inState('PreparingNormal'),
      f: facts(),
      to: 'Normal',
    },
    {
      name: 'an unscheduled new pod stays PreparingNormal',
      l: undefined,
      pod: inState('PreparingNormal'),
      f: facts({ scheduled: false }),
      to: undefined,
    },
    {
      name: 'preNormal: waits until every hook label is on',
      l: { preNormal: held },
      pod: inState('PreparingNormal'),
      f: facts(),
      to: undefined,
    },
    {
      name: 'preNormal: Normal once the hook is all on, scheduled or not',
      l: { preNormal: held },
      pod: inState('PreparingNormal', { hook: 'true' }),
      f: facts({ scheduled: false }),
      to: 'Normal',
    },
    { name: 'Normal stays', l: undefined, pod: inState('Normal'), f: facts(), to: undefined },
    { name: 'no label stays unlabelled', l: undefined, pod: hookPod({}), f: facts(), to: undefined },
    {
      name: 'PreparingDelete stays',
      l: { preDelete: held },
      pod: inState('PreparingDelete'),
      f: facts(),
      to: undefined,
    },
    {
      name: 'PreparingUpdate of a pod already at the update revision (rolled back): Updated while the hook is off',
      l: { inPlaceUpdate: held },
      pod: inState('PreparingUpdate'),
      f: facts({ revision: NEW }),
      to: 'Updated',
    },
    {
      name: 'PreparingUpdate rolled back with the hook on again: Normal',
      l: { inPlaceUpdate: held },
      pod: inState('PreparingUpdate', { hook: 'true' }),
      f: facts({ revision: NEW }),
      to: 'Normal',
    },
    {
      name: 'PreparingUpdate of an old pod stays',
      l: { inPlaceUpdate: held },
      pod: inState('PreparingUpdate'),
      f: facts(),
      to: undefined,
    },
    {
      name: 'Updating stays until the update is done',
      l: undefined,
      pod: inState('Updating'),
      f: facts(),
      to: undefined,
    },
    {
      name: 'Updating, done, no lifecycle: Normal',
      l: undefined,
      pod: inState('Updating'),
      f: facts({ inPlaceUpdateDone: true }),
      to: 'Normal',
    },
    {
      name: 'Updating, done, hook not back on: Updated',
      l: { inPlaceUpdate: held },
      pod: inState('Updating'),
      f: facts({ inPlaceUpdateDone: true }),
      to: 'Updated',
    },
    {
      name: 'Updating, done, a lifecycle without inPlaceUpdate: Updated (then Normal)',
      l: { preDelete: held },
      pod: inState('Updating'),
      f: facts({ inPlaceUpdateDone: true }),
      to: 'Updated',
    },
    {
      name: 'Updated with no inPlaceUpdate hook: Normal',
      l: { preDelete: held },
      pod: inState('Updated'),
      f: facts(),
      to: 'Normal',
    },
    {
      name: 'Updated waits for the hook back on',
      l: { inPlaceUpdate: held },
      pod: inState('Updated'),
      f: facts(),
      to: undefined,
    },
    {
      name: 'Updated with the hook back on: Normal',
      l: { inPlaceUpdate: held },
      pod: inState('Updated', { hook: 'true' }),
      f: facts(),
      to: 'Normal',
    },
  ])('$name', (row) => {
    expect(refreshedLifecycleState(row.l as CloneSetLifecycle | undefined, row.pod, row.f)).toBe(row.to);
  });
});

describe('deletionStep and inPlaceUpdateGate', () => {
  const lifecycle: CloneSetLifecycle = {
    preDelete: { labelsHandler: { del: 'hold' } },
    inPlaceUpdate: { finalizersHandler: ['x/upd'] },
  };
  const at = (state: string, labels: Record<string, string> = {}, finalizers: string[] = []): Pod =>
    hookPod({ ...(state ? { [LABEL_LIFECYCLE_STATE]: state } : {}), ...labels }, finalizers);
  it.each([
    { name: 'an unhooked pod is deleted', pod: at('Normal'), step: 'delete' },
    { name: 'a hooked pod is prepared first', pod: at('Normal', { del: 'hold' }), step: 'prepare' },
    { name: 'a prepared pod still hooked waits', pod: at('PreparingDelete', { del: 'hold' }), step: 'wait' },
    { name: 'a prepared pod released is deleted', pod: at('PreparingDelete'), step: 'delete' },
  ])('deleting: $name', ({ pod: p, step }) => {
    expect(deletionStep(lifecycle, p)).toBe(step);
  });
  it.each([
    { name: 'an unlabelled unhooked pod proceeds', pod: at(''), gate: { kind: 'proceed' } },
    {
      name: 'a Normal hooked pod is prepared',
      pod: at('Normal', {}, ['x/upd']),
      gate: { kind: 'prepare', restoreHook: false },
    },
    {
      name: 'a PreparingNormal hooked pod is prepared',
      pod: at('PreparingNormal', {}, ['x/upd']),
      gate: { kind: 'prepare', restoreHook: false },
    },
    {
      name: 'a PreparingUpdate pod still hooked holds',
      pod: at('PreparingUpdate', {}, ['x/upd']),
      gate: { kind: 'hold' },
    },
    { name: 'a PreparingUpdate pod released proceeds', pod: at('PreparingUpdate'), gate: { kind: 'proceed' } },
    { name: 'an Updating pod proceeds', pod: at('Updating'), gate: { kind: 'proceed' } },
    {
      name: 'an Updated pod is prepared with its hook put back',
      pod: at('Updated'),
      gate: { kind: 'prepare', restoreHook: true },
    },
    { name: 'a PreparingDelete pod is never updated', pod: at('PreparingDelete'), gate: { kind: 'hold' } },
  ])('updating in place: $name', ({ pod: p, gate }) => {
    expect(inPlaceUpdateGate(lifecycle, p)).toEqual(gate);
  });
});

/**
 * Pods in compact notation (p0, p1, … all Running): N / O on the update / current revision, Ready
 * and available; n / o not Ready; then `*` specified for deletion, `D` PreparingDelete (`H` also
 * held by its preDelete hook), `U` PreparingUpdate, `P` PreparingNormal.
 */
function podsFrom(notation: string): PodSummary[] {
  return notation
    .split(/\s+/)
    .filter((t) => t !== '')
    .map((token, i): PodSummary => {
      const match = /^([NnOo])([*DHUP]*)$/.exec(token);
      if (!match?.[1]) throw new Error(`bad pod token "${token}"`);
      const marks = match[2] ?? '';
      const ready = match[1] === match[1].toUpperCase();
      const state =
        marks.includes('D') || marks.includes('H')
          ? 'PreparingDelete'
          : marks.includes('U')
            ? 'PreparingUpdate'
            : marks.includes('P')
              ? 'PreparingNormal'
              : 'Normal';
      return {
        name: `p${i}`,
        revision: match[1].toUpperCase() === 'N' ? NEW : OLD,
        nodeName: 'node-1',
        phase: 'Running',
        ready,
        available: ready,
        createdAt: 1_000 * (i + 1),
        specifiedDelete: marks.includes('*'),
        lifecycleState: state,
        preDeleteHooked: marks.includes('H'),
      };
    });
}

interface Row {
  readonly name: string;
  readonly replicas: number;
  readonly partition?: number | string;
  readonly exclude?: boolean;
  readonly pods: string;
}
const inputOf = (row: Row): RolloutInput => ({
  replicas: row.replicas,
  partition: row.partition ?? 0,
  maxUnavailable: 1,
  maxSurge: 0,
  excludePreparingDelete: row.exclude === true,
  currentRevision: OLD,
  updateRevision: NEW,
  pods: podsFrom(row.pods),
});

describe('calculateDiffs counts hooked pods as Kruise does', () => {
  const rows: (Row & { purpose?: 'scale'; expected: Partial<RolloutDiffs> })[] = [
    { name: 'specified delete of a hooked pod (1/4)', replicas: 3, pods: 'N N N*', expected: { deleteReadyLimit: 1 } },
    { name: 'it waits in PreparingDelete: no scale-up (2/4)', replicas: 3, pods: 'N N ND*', expected: {} },
    {
      name: 'released and deleted: one pod missing (3/4)',
      replicas: 3,
      pods: 'N N',
      expected: { scaleUp: 1, scaleUpLimit: 1 },
    },
    { name: 'replaced (4/4)', replicas: 3, pods: 'N N n', expected: {} },
    {
      name: 'excluded: specified delete of a hooked pod (1/4)',
      replicas: 3,
      exclude: true,
      pods: 'N N N*',
      expected: { deleteReadyLimit: 1 },
    },
    {
      name: 'excluded: a PreparingDelete pod is replaced at once (2/4)',
      replicas: 3,
      exclude: true,
      pods: 'N N ND*',
      expected: { scaleUp: 1, scaleUpLimit: 1 },
    },
    { name: 'excluded: replaced while it waits (3/4)', replicas: 3, exclude: true, pods: 'N N ND* n', expected: {} },
    {
      name: 'excluded and taken back: the extra pod is scaled down (cancel 4/5)',
      replicas: 3,
      exclude: true,
      pods: 'N N N n',
      expected: { scaleDown: 1, deleteReadyLimit: 1 },
    },
    {
      name: 'excluded: scale down to 2 with a specified pod (2/6)',
      replicas: 2,
      exclude: true,
      pods: 'N N N*',
      expected: { deleteReadyLimit: 2 },
    },
    { name: 'excluded: it waits in PreparingDelete (3/6)', replicas: 2, exclude: true, pods: 'N N ND*', expected: {} },
    {
      name: 'excluded: scale up to 3 while it waits (4/6)',
      replicas: 3,
      exclude: true,
      pods: 'N N ND*',
      expected: { scaleUp: 1, scaleUpLimit: 1 },
    },
    { name: 'excluded: four pods, three counted (5/6)', replicas: 3, exclude: true, pods: 'N N ND* n', expected: {} },
    {
      name: 'scaling: a PreparingUpdate pod counts as updated, expected-updated 1',
      replicas: 4,
      partition: '90%',
      exclude: true,
      purpose: 'scale',
      pods: 'OU O O',
      expected: { scaleUp: 1, scaleUpLimit: 1, scaleUpAtCurrentRevision: 1 },
    },
    {
      name: 'scaling: a PreparingUpdate pod counts as updated, expected-updated 2',
      replicas: 4,
      partition: 2,
      exclude: true,
      purpose: 'scale',
      pods: 'OU O O',
      expected: { scaleUp: 1, scaleUpLimit: 1 },
    },
    {
      name: 'ours: updating, a PreparingUpdate pod is still an old one',
      replicas: 3,
      partition: 1,
      pods: 'OU O O',
      expected: { update: 2, updateMaxUnavailable: 1 },
    },
  ];
  it.each(rows)('$name', (row) => {
    expect(calculateDiffs(inputOf(row), row.purpose)).toEqual({ ...NO_DIFFS, ...row.expected });
  });

  it.each([
    { state: 'Normal', available: true },
    { state: undefined, available: true },
    { state: 'PreparingNormal', available: false },
    { state: 'PreparingDelete', available: false },
    { state: 'PreparingUpdate', available: false },
    { state: 'Updated', available: false },
  ])('a ready pod in lifecycle state $state counts as available: $available', ({ state, available }) => {
    const summary: PodSummary = {
      name: 'p',
      revision: NEW,
      nodeName: 'n',
      phase: 'Running',
      ready: true,
      available: true,
      lifecycleState: state,
    };
    expect(countsAsAvailable(summary)).toBe(available);
  });
});

describe('planUpdate with hooked pods', () => {
  it.each([
    { name: 'a PreparingUpdate pod goes first, whatever the ActivePods order says', pods: 'o OU', toUpdate: ['p1'] },
    { name: 'without one, the ActivePods order decides', pods: 'o O', toUpdate: ['p0'] },
    {
      name: 'a PreparingDelete pod is never picked (and uses the budget up)',
      pods: 'oD O O',
      partition: 0,
      toUpdate: ['p2'],
    },
  ])('$name', ({ pods, toUpdate, partition }) => {
    expect(planUpdate(inputOf({ name: '', replicas: 2, partition: partition ?? 1, pods })).toUpdate).toEqual(toUpdate);
  });
});

describe('planScale with hooked pods', () => {
  const none: ScalePlan = { create: 0, createAtCurrentRevision: 0, missing: 0, delete: [], cancelDelete: [] };
  const rows: (Row & { marksNotReady?: boolean; podsToDelete?: string[]; expected: Partial<ScalePlan> })[] = [
    {
      name: 'a specified hooked pod is named for deletion (the planner prepares it)',
      replicas: 3,
      pods: 'N N N*',
      expected: { delete: ['p2'] },
    },
    { name: 'a specified pod held in PreparingDelete: nothing to do', replicas: 3, pods: 'N N NH*', expected: {} },
    { name: 'a released PreparingDelete pod is deleted', replicas: 3, pods: 'N N ND*', expected: { delete: ['p2'] } },
    { name: 'surplus pods wait while a pod is held in PreparingDelete', replicas: 1, pods: 'N N NH', expected: {} },
    {
      name: 'scale-up takes back a PreparingDelete pod that is not specified',
      replicas: 3,
      pods: 'N N NH',
      expected: { cancelDelete: ['p2'] },
    },
    { name: 'a specified PreparingDelete pod is never taken back', replicas: 3, pods: 'N N NH*', expected: {} },
    {
      name: 'never taken back when a hook marks pods not ready',
      replicas: 3,
      marksNotReady: true,
      pods: 'N N NH',
      expected: {},
    },
    {
      name: 'excluded: a held PreparingDelete pod is replaced',
      replicas: 3,
      exclude: true,
      pods: 'N N NH*',
      expected: { create: 1, missing: 1 },
    },
    {
      name: 'a not-ready PreparingNormal pod costs nothing to delete',
      replicas: 1,
      pods: 'N NP',
      expected: { delete: ['p1'] },
    },
  ];
  it.each(rows)('$name', (row) => {
    expect(planScale({ ...inputOf(row), lifecycleMarksNotReady: row.marksNotReady === true })).toEqual({
      ...none,
      ...row.expected,
    });
  });
});

describe('the planner with lifecycle hooks', () => {
  const templates = revisionTemplates('image');
  const hooked = (spec: Parameters<typeof cloneSet>[0], lifecycle: CloneSetLifecycle) => {
    const cs = cloneSet(spec);
    cs.spec.lifecycle = lifecycle;
    return cs;
  };
  const planFor = (cs: ReturnType<typeof cloneSet>, pods: Pod[]) =>
    planReconcile({
      cloneSet: cs,
      pods,
      revisions: { updateRevision: NEW, currentRevision: NEW, templates },
      now: NOW,
      resizeBackend: 'kubelet',
      nodeEvidence: new Map(),
    });
  const normal = (name: string, labels: Record<string, string> = {}, ready = true): Pod =>
    pod({ name, revision: NEW, ready, labels: { [LABEL_LIFECYCLE_STATE]: 'Normal', ...labels } }, templates);

  it('scale-down moves a pod its preDelete hook holds to PreparingDelete instead of deleting it', () => {
    const cs = hooked(
      { replicas: 2, status: { currentRevision: NEW } },
      { preDelete: { labelsHandler: { hold: 'yes' }, markPodNotReady: true } },
    );
    const plan = planFor(cs, [
      normal('p0', { hold: 'yes' }),
      normal('p1', { hold: 'yes' }),
      normal('p2', { hold: 'yes' }, false),
    ]);
    expect(intentsOf(plan, 'delete')).toEqual([]);
    expect(intentsOf(plan, 'lifecycle').map((i) => [i.pod.metadata?.name, i.state, i.markNotReady])).toEqual([
      ['p2', 'PreparingDelete', true],
    ]);
  });

  it('a pod without the hook is deleted as before', () => {
    const cs = hooked(
      { replicas: 2, status: { currentRevision: NEW } },
      { preDelete: { labelsHandler: { hold: 'yes' } } },
    );
    const plan = planFor(cs, [normal('p0', { hold: 'yes' }), normal('p1', { hold: 'yes' }), normal('p2', {}, false)]);
    expect(intentsOf(plan, 'delete').map((i) => i.pod.metadata?.name)).toEqual(['p2']);
    expect(intentsOf(plan, 'lifecycle')).toEqual([]);
  });

  it('a scale-up takes back a pod waiting in PreparingDelete instead of creating one', () => {
    const cs = hooked(
      { replicas: 3, status: { currentRevision: NEW } },
      { preDelete: { labelsHandler: { hold: 'yes' } } },
    );
    const waiting = pod(
      { name: 'p2', revision: NEW, labels: { [LABEL_LIFECYCLE_STATE]: 'PreparingDelete', hold: 'yes' } },
      templates,
    );
    const plan = planFor(cs, [normal('p0'), normal('p1'), waiting]);
    expect([
      intentsOf(plan, 'create').length,
      intentsOf(plan, 'lifecycle').map((i) => [i.pod.metadata?.name, i.state]),
    ]).toEqual([0, [['p2', 'PreparingNormal']]]);
  });

  it('a pod the preDelete hook marks not ready keeps its gate False while it waits', () => {
    const cs = hooked(
      { replicas: 1, status: { currentRevision: NEW } },
      { preDelete: { labelsHandler: { hold: 'yes' }, markPodNotReady: true } },
    );
    const waiting = pod(
      { name: 'p1', revision: NEW, drained: true, labels: { [LABEL_LIFECYCLE_STATE]: 'PreparingDelete', hold: 'yes' } },
      templates,
    );
    const plan = planFor(cs, [normal('p0'), waiting]);
    expect(plan.intents).toEqual([]);
  });

  // Issue 31.6: the hook's not-ready is re-asserted every round (Kruise re-applies it), so one
  // failed write, or someone setting the gate True, does not leave a held pod serving.
  it.each<{
    name: string;
    lifecycle: CloneSetLifecycle;
    state: string;
    revision: string;
    drained: boolean;
    held: string[][];
  }>([
    {
      name: 'PreparingDelete held by preDelete, gate True',
      lifecycle: { preDelete: { markPodNotReady: true } },
      state: 'PreparingDelete',
      revision: NEW,
      drained: false,
      held: [['p1', 'PreparingDelete']],
    },
    {
      name: 'PreparingUpdate held by inPlaceUpdate, gate True',
      lifecycle: { inPlaceUpdate: { markPodNotReady: true } },
      state: 'PreparingUpdate',
      revision: OLD,
      drained: false,
      held: [['p1', 'PreparingUpdate']],
    },
    {
      name: 'PreparingDelete held by preDelete, gate already False',
      lifecycle: { preDelete: { markPodNotReady: true } },
      state: 'PreparingDelete',
      revision: NEW,
      drained: true,
      held: [],
    },
    {
      name: 'PreparingDelete, the hook does not mark pods not ready',
      lifecycle: { preDelete: {} },
      state: 'PreparingDelete',
      revision: NEW,
      drained: false,
      held: [],
    },
    {
      name: 'Normal, whatever the hooks say',
      lifecycle: { preDelete: { markPodNotReady: true } },
      state: 'Normal',
      revision: NEW,
      drained: false,
      held: [],
    },
  ])('holds the gate False again when it is not: $name', ({ lifecycle, state, revision, drained, held }) => {
    const hold = { labelsHandler: { hold: 'yes' } };
    const cs = hooked(
      { replicas: 2, status: { currentRevision: OLD } },
      Object.fromEntries(Object.entries(lifecycle).map(([k, v]) => [k, { ...hold, ...(v as LifecycleHook) }])),
    );
    const p1 = pod(
      { name: 'p1', revision, drained, labels: { [LABEL_LIFECYCLE_STATE]: state, hold: 'yes' } },
      templates,
    );
    const plan = planFor(cs, [normal('p0'), p1]);
    expect(intentsOf(plan, 'holdNotReady').map((i) => [i.pod.metadata?.name, i.state])).toEqual(held);
    expect(intentsOf(plan, 'settle').filter((i) => i.pod.metadata?.name === 'p1')).toEqual([]);
  });

  it('a new pod becomes Normal once scheduled, and only then', () => {
    const cs = hooked({ replicas: 2, status: { currentRevision: NEW } }, {});
    const fresh = (name: string, scheduled: boolean): Pod =>
      pod({ name, revision: NEW, scheduled, labels: { [LABEL_LIFECYCLE_STATE]: 'PreparingNormal' } }, templates);
    const plan = planFor(cs, [fresh('p0', true), fresh('p1', false)]);
    expect(intentsOf(plan, 'lifecycle').map((i) => [i.pod.metadata?.name, i.state])).toEqual([['p0', 'Normal']]);
  });

  it('preNormal holds a ready pod in PreparingNormal, out of availableReplicas but in readyReplicas', () => {
    const cs = hooked(
      { replicas: 1, status: { currentRevision: NEW } },
      { preNormal: { finalizersHandler: ['example.com/warm'] } },
    );
    const plan = planFor(cs, [
      pod({ name: 'p0', revision: NEW, labels: { [LABEL_LIFECYCLE_STATE]: 'PreparingNormal' } }, templates),
    ]);
    expect(intentsOf(plan, 'lifecycle')).toEqual([]);
    expect([plan.status.readyReplicas, plan.status.availableReplicas]).toEqual([1, 0]);
  });
});

describe('the planner gates updates by the inPlaceUpdate and preDelete hooks', () => {
  const hold = { labelsHandler: { 'update-hook': 'true' } };
  const planUpdateOf = (
    lifecycle: CloneSetLifecycle,
    change: 'image' | 'cpu' | 'env',
    state: string,
    labels: Record<string, string> = {},
  ) => {
    const templates = revisionTemplates(change);
    const cs = cloneSet({ replicas: 1, change, maxUnavailable: 1 });
    cs.spec.lifecycle = lifecycle;
    const pods = [pod({ name: 'p0', revision: OLD, labels: { [LABEL_LIFECYCLE_STATE]: state, ...labels } }, templates)];
    return planReconcile({
      cloneSet: cs,
      pods,
      revisions: { updateRevision: NEW, currentRevision: OLD, templates },
      now: NOW,
      resizeBackend: 'kubelet',
      nodeEvidence: new Map(),
    });
  };
  const kinds = (plan: ReturnType<typeof planReconcile>): string[] => plan.intents.map((i) => i.kind);

  it('a Normal pod the hook holds moves to PreparingUpdate and is not drained', () => {
    const plan = planUpdateOf({ inPlaceUpdate: { ...hold, markPodNotReady: true } }, 'image', 'Normal', {
      'update-hook': 'true',
    });
    expect(intentsOf(plan, 'lifecycle').map((i) => [i.state, i.markNotReady])).toEqual([['PreparingUpdate', true]]);
    expect(kinds(plan)).toEqual(['lifecycle']);
  });

  it('a PreparingUpdate pod still held waits: nothing is written', () => {
    expect(kinds(planUpdateOf({ inPlaceUpdate: hold }, 'image', 'PreparingUpdate', { 'update-hook': 'true' }))).toEqual(
      [],
    );
  });

  it('a PreparingUpdate pod released is drained for its update', () => {
    expect(kinds(planUpdateOf({ inPlaceUpdate: hold }, 'image', 'PreparingUpdate'))).toEqual(['drain']);
  });

  it('an Updated pod picked again goes back to PreparingUpdate with the hook put back', () => {
    const [move] = intentsOf(planUpdateOf({ inPlaceUpdate: hold }, 'image', 'Updated'), 'lifecycle');
    expect([move?.state, move?.restoreHook]).toEqual(['PreparingUpdate', hold]);
  });

  it('with an inPlaceUpdate hook the in-place patch labels the pod Updating', () => {
    const [patch] = intentsOf(planUpdateOf({ inPlaceUpdate: hold }, 'cpu', 'PreparingUpdate'), 'patch');
    expect((patch?.step.patch.metadata as { labels: Record<string, string> }).labels[LABEL_LIFECYCLE_STATE]).toBe(
      'Updating',
    );
  });

  it('without an inPlaceUpdate hook the pod stays Normal through its update', () => {
    const [patch] = intentsOf(planUpdateOf({ preDelete: hold }, 'cpu', 'Normal'), 'patch');
    expect(
      (patch?.step.patch.metadata as { labels: Record<string, string> }).labels[LABEL_LIFECYCLE_STATE],
    ).toBeUndefined();
  });

  it('pods outside the budget that a change moves without a restart never enter PreparingUpdate or Updating', () => {
    // 4 pods, maxUnavailable 1, a NotRequired cpu resize: one pod is picked, the others may move
    // without a restart; the hook may mark pods not ready, so only the picked one may enter it.
    const templates = revisionTemplates('cpu');
    const cs = cloneSet({ replicas: 4, change: 'cpu', maxUnavailable: 1 });
    cs.spec.lifecycle = { inPlaceUpdate: { ...hold, markPodNotReady: true } };
    const labels = { [LABEL_LIFECYCLE_STATE]: 'Normal', 'update-hook': 'true' };
    const pods = ['p0', 'p1', 'p2', 'p3'].map((name) => pod({ name, revision: OLD, labels }, templates));
    const plan = planReconcile({
      cloneSet: cs,
      pods,
      revisions: { updateRevision: NEW, currentRevision: OLD, templates },
      now: NOW,
      resizeBackend: 'kubelet',
      nodeEvidence: new Map(),
    });
    expect(intentsOf(plan, 'lifecycle').filter((i) => i.state === 'PreparingUpdate')).toHaveLength(1);
    const updating = intentsOf(plan, 'patch').filter(
      (i) =>
        (i.step.patch.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[LABEL_LIFECYCLE_STATE] ===
        'Updating',
    );
    expect(updating).toHaveLength(0);
  });

  it('a recreate of a pod the preDelete hook holds moves it to PreparingDelete', () => {
    const plan = planUpdateOf({ preDelete: hold }, 'env', 'Normal', { 'update-hook': 'true' });
    expect([kinds(plan), intentsOf(plan, 'lifecycle').map((i) => i.state)]).toEqual([
      ['lifecycle'],
      ['PreparingDelete'],
    ]);
  });
});
