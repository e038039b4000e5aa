// Infeasible resizes the strategy recreates (decision 79), played round by round through the
// planner with a model of the API server, the scheduler and the kubelet in between: pods on node
// `small` cannot take the new cpu (the kubelet says Infeasible), a created pod lands on node `big`
// and turns Ready one round later, deletes finish at once. The issue-47 case (maxSurge 1 with
// maxUnavailable rounding to 0), the paths with and without surge, and a property: for any
// replicas, maxUnavailable, maxSurge and pause, the rollout either ends with every pod on the new
// resources, never above replicas + maxSurge nor below replicas − maxUnavailable available, or is
// Stalled (InfeasibleResizeNotAdmissible) exactly when the spec lets the budget never admit it.

import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CloneSetConditionTypes as Types, LABEL_CONTROLLER_REVISION_HASH } from '../../../../src/api/types.js';
import type { Pod } from '../../../../src/api/wire.js';
import type { Plan } from '../../../../src/workload/pure/round-plan.js';
import { planReconcile } from '../../../../src/workload/pure/planner.js';
import { resolveRolloutLimits } from '../../../../src/workload/pure/limits.js';
import {
  allocate,
  budgetFor,
  recreateEverAdmitted,
  surgeRoom,
  type BudgetInput,
} from '../../../../src/workload/pure/budget.js';
import type { PodSummary } from '../../../../src/workload/pure/pod-state.js';
import {
  NEW,
  NOW,
  OLD,
  availableCount,
  cloneSet,
  pod,
  revisionTemplates,
} from '../../../support/fixtures/planner-fixtures.js';

const TEMPLATES = revisionTemplates('cpu');
const NEW_CPU = TEMPLATES.get(NEW)!.spec!.containers[0]!.resources;

interface Rollout {
  replicas: number;
  maxUnavailable: number | string;
  maxSurge: number | string;
  paused?: boolean;
  /** Which of the first pods run on node `small` (bit i: pod i). */
  smallMask: number;
  /** 'v1': the pods start on the old revision and the rollout resizes them; 'patched': already resized. */
  start: 'v1' | 'patched';
}

interface Outcome {
  converged: boolean;
  /** Most pods at once (a round's creates counted before its deletes finish). */
  peak: number;
  /** Fewest available pods after any round. */
  minAvailable: number;
  /** Stalled's reason every round, and the last plan. */
  stalledReasons: Set<string>;
  last: Plan;
  kept: string[];
}

const onSmall = (r: Rollout, i: number): boolean => ((r.smallMask >> i) & 1) === 1;
const condition = (p: Pod, type: string) => p.status!.conditions!.find((c) => c.type === type);
const statusCondition = (plan: Plan, type: string) => plan.status.conditions?.find((c) => c.type === type);

function initialPods(r: Rollout): Pod[] {
  return Array.from({ length: r.replicas }, (_, i) => {
    const node = onSmall(r, i) ? 'small' : 'big';
    if (r.start === 'v1') return pod({ name: `p${i}`, revision: OLD, node }, TEMPLATES);
    return pod(
      { name: `p${i}`, revision: NEW, node, ...(node === 'small' ? { resize: 'Infeasible' } : {}) },
      TEMPLATES,
    );
  });
}

/** The kubelet's answer to a resize: actuated on `big`, Infeasible on `small` (the old cpu kept). */
function resized(p: Pod): void {
  const generation = (p.metadata!.generation ?? 1) + 1;
  p.metadata!.generation = generation;
  p.status!.observedGeneration = generation;
  p.spec!.containers[0]!.resources = NEW_CPU;
  if (p.spec!.nodeName !== 'small') {
    p.status!.containerStatuses![0]!.resources = NEW_CPU;
    return;
  }
  p.status!.conditions!.push({
    type: 'PodResizePending',
    status: 'True',
    reason: 'Infeasible',
    message: 'Node cannot fit the new cpu',
    lastTransitionTime: new Date(NOW).toISOString(),
    observedGeneration: generation,
  });
}

/** The cluster after one round's writes: pods created last round turn Ready, this round's writes land. */
function world(pods: Pod[], plan: Plan, created: { n: number }): Pod[] {
  const byName = new Map(pods.map((p) => [p.metadata!.name!, structuredClone(p)]));
  for (const p of byName.values()) if (p.spec!.nodeName === undefined) Object.assign(p, placed(p));
  for (const intent of plan.intents) {
    if (intent.kind === 'create') {
      const name = `new-${created.n++}`;
      byName.set(name, pod({ name, revision: intent.revision, scheduled: false }, TEMPLATES));
      continue;
    }
    const p = byName.get(intent.pod.metadata!.name!);
    if (!p) continue;
    if (intent.kind === 'delete') byName.delete(p.metadata!.name!);
    if (intent.kind === 'patch') {
      const labels = (intent.step.patch.metadata as { labels: Record<string, string> }).labels;
      p.metadata!.labels = { ...p.metadata!.labels, ...labels };
      if (intent.step.resize) resized(p);
    }
  }
  return [...byName.values()];
}

/** A pending pod scheduled on `big` (the node its resources fit), running and Ready. */
const placed = (p: Pod): Pod =>
  pod(
    { name: p.metadata!.name!, revision: p.metadata!.labels![LABEL_CONTROLLER_REVISION_HASH]!, node: 'big' },
    TEMPLATES,
  );

const actuated = (p: Pod): boolean =>
  p.status?.containerStatuses?.[0]?.resources?.requests?.cpu === NEW_CPU?.requests?.cpu &&
  condition(p, 'PodResizePending') === undefined;

/** One round of the controller over `pods`, the status it wrote last round carried over. */
function planRound(r: Rollout, pods: readonly Pod[], status: Plan['status'] | undefined, round: number): Plan {
  const cs = cloneSet({ replicas: r.replicas, maxUnavailable: r.maxUnavailable, maxSurge: r.maxSurge, change: 'cpu' });
  cs.spec.updateStrategy.paused = r.paused === true;
  if (status) cs.status = status;
  return planReconcile({
    cloneSet: cs,
    pods,
    revisions: { updateRevision: NEW, currentRevision: OLD, templates: TEMPLATES },
    now: NOW + round * 1000,
    resizeBackend: 'kubelet',
    nodeEvidence: new Map(),
  });
}

function play(r: Rollout): Outcome {
  let pods = initialPods(r);
  const firstUids = pods.map((p) => p.metadata!.uid!);
  const created = { n: 0 };
  const out = { peak: pods.length, minAvailable: availableCount(pods), stalledReasons: new Set<string>() };
  let last: Plan | undefined;
  let converged = false;
  let round = 0;
  for (; round < 60 && !converged; round++) {
    last = planRound(r, pods, last?.status, round);
    out.stalledReasons.add(statusCondition(last, Types.Stalled)?.reason ?? '');
    out.peak = Math.max(out.peak, pods.length + last.intents.filter((i) => i.kind === 'create').length);
    pods = world(pods, last, created);
    out.minAvailable = Math.min(out.minAvailable, availableCount(pods));
    converged =
      pods.length === r.replicas &&
      pods.every((p) => actuated(p) && p.metadata!.labels![LABEL_CONTROLLER_REVISION_HASH] === NEW) &&
      availableCount(pods) === r.replicas;
  }
  // The round after the last write: what the CloneSet then says.
  if (converged) last = planRound(r, pods, last?.status, round);
  const uids = new Set(pods.map((p) => p.metadata!.uid!));
  return { ...out, converged, last: last!, kept: firstUids.filter((u) => uids.has(u)) };
}

const limitsOf = (r: Rollout) =>
  resolveRolloutLimits({
    replicas: r.replicas,
    maxUnavailable: r.maxUnavailable,
    maxSurge: r.maxSurge,
    paused: r.paused === true,
  });

describe('an Infeasible resize the strategy recreates (decision 79)', () => {
  it('the issue: 3 pods, maxUnavailable 10% (rounds to 0), maxSurge 1: the replacement first, never below 3 available', () => {
    const rollout: Rollout = { replicas: 3, maxUnavailable: '10%', maxSurge: 1, smallMask: 0b001, start: 'v1' };
    const outcome = play(rollout);
    expect(outcome.converged).toBe(true);
    expect(outcome.peak).toBe(4);
    expect(outcome.minAvailable).toBe(3);
    // The pods on `big` were resized in place; only the Infeasible one was replaced.
    expect(outcome.kept).toEqual(['uid-p1', 'uid-p2']);
    expect(outcome.stalledReasons).toEqual(new Set(['NotStalled']));
    expect(statusCondition(outcome.last, Types.Reconciling)).toMatchObject({ status: 'False', reason: 'Complete' });
  });

  it('with maxSurge 1 the Infeasible pod stays while its replacement is not yet available, and ResizeBlocked says so', () => {
    const rollout: Rollout = { replicas: 3, maxUnavailable: 1, maxSurge: 1, smallMask: 0b001, start: 'patched' };
    const pods = [...initialPods(rollout), pod({ name: 'new-0', revision: NEW, node: 'big', ready: false }, TEMPLATES)];
    const plan = planRound(rollout, pods, undefined, 0);
    expect(plan.intents.filter((i) => i.kind === 'delete' || i.kind === 'create')).toEqual([]);
    expect(statusCondition(plan, Types.ResizeBlocked)?.message).toBe(
      'p0: Infeasible, recreate waits for its replacement to be available (maxSurge 1)',
    );
  });

  const cases: { name: string; rollout: Rollout; peak: number; minAvailable: number }[] = [
    {
      name: 'maxSurge 0, maxUnavailable 1: through maxUnavailable as before (one pod out at a time, no extra pod)',
      rollout: { replicas: 4, maxUnavailable: 1, maxSurge: 0, smallMask: 0b0011, start: 'v1' },
      peak: 4,
      minAvailable: 3,
    },
    {
      name: 'maxSurge 1, maxUnavailable 2, three Infeasible pods: one replacement at a time, capacity never drops',
      rollout: { replicas: 5, maxUnavailable: 2, maxSurge: 1, smallMask: 0b10101, start: 'patched' },
      peak: 6,
      minAvailable: 5,
    },
    {
      name: 'maxSurge 25% of 8 (2), maxUnavailable 0: two replacements at once',
      rollout: { replicas: 8, maxUnavailable: 0, maxSurge: '25%', smallMask: 0b1111, start: 'patched' },
      peak: 10,
      minAvailable: 8,
    },
    {
      name: 'paused, maxUnavailable 10% of 3: no surge while paused, so maxUnavailable rounds up to 1 and admits it',
      rollout: { replicas: 3, maxUnavailable: '10%', maxSurge: 1, paused: true, smallMask: 0b001, start: 'patched' },
      peak: 3,
      minAvailable: 2,
    },
  ];
  it.each(cases)('$name', ({ rollout, peak, minAvailable }) => {
    const outcome = play(rollout);
    expect(outcome.converged).toBe(true);
    expect(outcome.peak).toBe(peak);
    expect(outcome.minAvailable).toBe(minAvailable);
    expect(outcome.stalledReasons).toEqual(new Set(['NotStalled']));
  });

  const never: { name: string; rollout: Rollout; says: string }[] = [
    {
      name: 'paused with maxUnavailable 0 and maxSurge 1: a pause uses no surge',
      rollout: { replicas: 3, maxUnavailable: 0, maxSurge: 1, paused: true, smallMask: 0b010, start: 'patched' },
      says: 'maxUnavailable 0 resolves to 0 of 3 pods and updateStrategy.paused uses no surge; unpause it, raise updateStrategy.maxUnavailable or lower the resources the template asks for',
    },
    {
      name: 'maxUnavailable 0% and maxSurge 0 (an object stored before the CRD refused both at 0)',
      rollout: { replicas: 3, maxUnavailable: '0%', maxSurge: 0, smallMask: 0b010, start: 'patched' },
      says: 'maxUnavailable 0% resolves to 0 of 3 pods and maxSurge is 0; raise updateStrategy.maxUnavailable or maxSurge, or lower the resources the template asks for',
    },
  ];
  it.each(never)('can never be admitted: Stalled, never Complete, the pod kept ($name)', ({ rollout, says }) => {
    const outcome = play(rollout);
    expect(outcome.converged).toBe(false);
    expect(outcome.kept).toHaveLength(rollout.replicas);
    expect(outcome.peak).toBe(rollout.replicas);
    expect(outcome.stalledReasons).toEqual(new Set(['InfeasibleResizeNotAdmissible']));
    expect(statusCondition(outcome.last, Types.Stalled)?.message).toBe(
      `1 pod(s) cannot be resized on their nodes and their recreate can never be admitted: ${says}: ` +
        'p1: Infeasible, recreate waits for maxUnavailable 0 (out of service: pods not yet created)',
    );
    // kstatus reads Reconciling first: False (Stalled), never Complete (decision 22).
    expect(statusCondition(outcome.last, Types.Reconciling)).toMatchObject({ status: 'False', reason: 'Stalled' });
  });

  it('for any replicas, maxUnavailable, maxSurge and pause: done within the limits, or Stalled exactly when never admitted', () => {
    fc.assert(
      fc.property(
        fc.record({
          replicas: fc.integer({ min: 1, max: 7 }),
          maxUnavailable: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('0%', '10%', '25%', '50%')),
          maxSurge: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('0%', '10%', '25%')),
          paused: fc.boolean(),
          smallMask: fc.integer({ min: 1, max: 127 }),
          start: fc.constant<Rollout['start']>('patched'),
        }),
        (rollout) => {
          fc.pre((rollout.smallMask & ((1 << rollout.replicas) - 1)) !== 0);
          const limits = limitsOf(rollout);
          const never = limits.maxUnavailable === 0 && limits.maxSurge === 0;
          const outcome = play(rollout);
          if (never) {
            expect(outcome.stalledReasons).toEqual(new Set(['InfeasibleResizeNotAdmissible']));
            expect(outcome.kept).toHaveLength(rollout.replicas);
            return;
          }
          expect(outcome.converged).toBe(true);
          expect(outcome.stalledReasons).toEqual(new Set(['NotStalled']));
          expect(outcome.peak).toBeLessThanOrEqual(rollout.replicas + limits.maxSurge);
          expect(outcome.minAvailable).toBeGreaterThanOrEqual(rollout.replicas - limits.maxUnavailable);
          // With surge, a recreate waits for its replacement: capacity never drops.
          if (limits.maxSurge > 0) expect(outcome.minAvailable).toBe(rollout.replicas);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('the budget for surged recreates (budget.ts)', () => {
  const summary = (name: string, available: boolean, nodeName = 'n1'): PodSummary => ({
    name,
    revision: NEW,
    nodeName,
    phase: 'Running',
    ready: available,
    available,
  });
  const input = (available: number, unavailable: number, maxUnavailable: number): BudgetInput => ({
    replicas: 3,
    maxUnavailable,
    pods: [
      ...Array.from({ length: available }, (_, i) => summary(`a${i}`, true)),
      ...Array.from({ length: unavailable }, (_, i) => summary(`u${i}`, false)),
    ],
  });

  it.each([
    { name: '3 available of 3: no room above replicas', available: 3, unavailable: 0, room: 0 },
    { name: '4 available of 3 (a surge pod ready): room for one', available: 4, unavailable: 0, room: 1 },
    { name: '3 available and a surge pod not yet ready: none', available: 3, unavailable: 1, room: 0 },
    { name: '5 available of 3: two', available: 5, unavailable: 0, room: 2 },
  ])('surgeRoom: $name', ({ available, unavailable, room }) => {
    expect(surgeRoom(input(available, unavailable, 2))).toBe(room);
  });

  it.each([
    { maxUnavailable: 0, maxSurge: 0, admitted: false },
    { maxUnavailable: 1, maxSurge: 0, admitted: true },
    { maxUnavailable: 0, maxSurge: 1, admitted: true },
    { maxUnavailable: 2, maxSurge: 3, admitted: true },
  ])('recreateEverAdmitted(maxUnavailable $maxUnavailable, maxSurge $maxSurge) is $admitted', (limits) => {
    expect(recreateEverAdmitted(limits)).toBe(limits.admitted);
  });

  it('allocate with a cap spends at most the cap, takes it off the budget, and still admits pods that serve nobody', () => {
    const budget = input(4, 1, 2);
    const left = budgetFor(budget);
    expect(left.total).toBe(3);
    const { admitted, held } = allocate(left, budget.pods, (p) => p, 1);
    expect(admitted.map((p) => p.name)).toEqual(['a0', 'u0']);
    expect(held.map((p) => p.name)).toEqual(['a1', 'a2', 'a3']);
    expect(left.total).toBe(2);
  });

  it('for any pods and cap: allocate never spends more than the cap nor the budget', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 4 }),
        (available, unavailable, maxUnavailable, cap) => {
          const budget = input(available, unavailable, maxUnavailable);
          const left = budgetFor(budget);
          const before = left.total;
          const { admitted } = allocate(left, budget.pods, (p) => p, cap);
          const spent = admitted.filter((p) => p.available).length;
          expect(spent).toBeLessThanOrEqual(Math.min(cap, before));
          expect(before - left.total).toBe(spent);
          expect(admitted.filter((p) => !p.available)).toHaveLength(unavailable);
        },
      ),
    );
  });
});
