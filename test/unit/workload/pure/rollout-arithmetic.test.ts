// Table tests for the CloneSet rollout arithmetic (src/cloneset): calculateDiffs, planScale,
// planUpdate, rankForDeletion and the int-or-percent rules. The scenarios of the first table
// carry over the facts of OpenKruise's calculateDiffsWithExpectation test suite (inputs and
// expected numbers), restated in our own notation; rows marked "ours" are Tailor's additions.

import { describe, expect, it } from '@jest/globals';

import type { IntOrString } from '../../../../src/api/types.js';
import {
  compareActivePods,
  parseDeletionCost,
  rankForDeletion,
  type PodSummary,
} from '../../../../src/workload/pure/pod-state.js';
import { planScale, type ScalePlan } from '../../../../src/workload/pure/scale.js';
import {
  NO_DIFFS,
  calculateDiffs,
  planUpdate,
  type RolloutDiffs,
  type RolloutInput,
  type RolloutSpec,
  type UpdatePlan,
} from '../../../../src/workload/pure/update.js';
import { resolvePartition, resolveRolloutLimits } from '../../../../src/workload/pure/limits.js';

const OLD = 'web-rev-old';
const NEW = 'web-rev-new';

/**
 * Pods in a compact notation, one token per pod, named p0, p1, … in order (later pods are
 * newer), all Running on one node:
 *   N / O   on the update (new) / current (old) revision, Ready and available
 *   n / o   the same, not Ready
 * followed by any of
 *   ?  Ready but not yet available (minReadySeconds not reached)
 *   *  specified for deletion
 *   ~  an in-place update is in flight
 *   !  terminating
 *   g  an in-place update is waiting out its grace period
 */
function podsFrom(notation: string): PodSummary[] {
  return notation
    .split(/\s+/)
    .filter((token) => token !== '')
    .map((token, i): PodSummary => {
      const match = /^([NnOo])([?*~!g]*)$/.exec(token);
      if (match === null || match[1] === undefined) throw new Error(`bad pod token "${token}"`);
      const letter = match[1];
      const marks = match[2] ?? '';
      const ready = letter === letter.toUpperCase();
      return {
        name: `p${i}`,
        revision: letter.toUpperCase() === 'N' ? NEW : OLD,
        nodeName: 'node-1',
        phase: 'Running',
        ready,
        available: ready && !marks.includes('?'),
        readySince: ready ? 1_000 : undefined,
        createdAt: 1_000 * (i + 1),
        specifiedDelete: marks.includes('*'),
        inPlaceUpdating: marks.includes('~'),
        terminating: marks.includes('!'),
        inPlaceGracePending: marks.includes('g'),
      };
    });
}

interface Scenario {
  readonly name: string;
  readonly spec: RolloutSpec;
  readonly pods: string;
  /** Which revision is the CloneSet's current one; 'new' means the rollout has nothing to do. */
  readonly current?: 'old' | 'new';
}

function inputOf(row: Scenario, defaults: Partial<RolloutSpec> = {}): RolloutInput {
  return {
    ...defaults,
    ...row.spec,
    currentRevision: row.current === 'new' ? NEW : OLD,
    updateRevision: NEW,
    pods: podsFrom(row.pods),
  };
}

// ---------------------------------------------------------------------------------------------
// calculateDiffs
// ---------------------------------------------------------------------------------------------

interface DiffRow extends Scenario {
  /** Only the non-zero fields; everything else must be 0. */
  readonly expected: Partial<RolloutDiffs>;
}

/** Kruise's suite runs with its CloneSetPartitionRollback gate on; so do these rows. */
const PORTED_DEFAULTS: Partial<RolloutSpec> = { partitionRollback: true };

const plain = (
  replicas: number,
  partition: IntOrString,
  maxUnavailable: IntOrString,
  maxSurge: IntOrString,
): RolloutSpec => ({
  replicas,
  partition,
  maxUnavailable,
  maxSurge,
});

const diffRows: DiffRow[] = [
  // Scaling
  { name: 'an empty CloneSet with no pods needs nothing', spec: plain(0, 0, 1, 0), pods: '', expected: {} },
  {
    name: 'raising replicas from nothing to 5 creates all 5 at once',
    spec: plain(5, 0, 1, 0),
    pods: '',
    expected: { scaleUp: 5, scaleUpLimit: 5 },
  },
  { name: 'five ready pods for five replicas need nothing', spec: plain(5, 0, 1, 0), pods: 'N N N N N', expected: {} },

  // Specified deletion without surge: delete first, then replace
  {
    name: 'one of five ready pods marked for deletion may be deleted (one ready pod of budget)',
    spec: plain(5, 0, 1, 0),
    pods: 'N* N N N N',
    expected: { deleteReadyLimit: 1 },
  },
  {
    name: 'after the marked pod is gone its replacement is created',
    spec: plain(5, 0, 1, 0),
    pods: 'N N N N',
    expected: { scaleUp: 1, scaleUpLimit: 1 },
  },
  {
    name: 'two marked pods among five ready ones may only go one at a time',
    spec: plain(5, 0, 1, 0),
    pods: 'N* N* N N N',
    expected: { deleteReadyLimit: 1 },
  },
  {
    name: 'with one marked pod gone and one left, the gap is refilled first',
    spec: plain(5, 0, 1, 0),
    pods: 'N* N N N',
    expected: { scaleUp: 1, scaleUpLimit: 1 },
  },
  {
    name: 'while the replacement is not ready the second marked pod must wait',
    spec: plain(5, 0, 1, 0),
    pods: 'N* N N N n',
    expected: {},
  },
  {
    // Kruise allows 2 here (marked pods do not count as unavailable); Tailor's one budget does
    // not: three available pods are the floor for 4 replicas with maxUnavailable 1, so no ready
    // pod may go. The unready marked pods cost nothing and are still deleted (decision 0006).
    name: 'two unready marked pods with replicas lowered to 4 leave no budget for a ready pod',
    spec: plain(4, 0, 1, 0),
    pods: 'n* n* N N N',
    expected: { deleteReadyLimit: 0 },
  },
  {
    name: 'after both marked pods are gone, three pods for four replicas need one more',
    spec: plain(4, 0, 1, 0),
    pods: 'N N N',
    expected: { scaleUp: 1, scaleUpLimit: 1 },
  },
  { name: 'four ready pods for four replicas need nothing', spec: plain(4, 0, 1, 0), pods: 'N N N N', expected: {} },

  // Partitioned update and partition rollback
  {
    name: 'partition 3 of 5 on an all-old set asks for two updates within one unavailable',
    spec: plain(5, 3, 1, 0),
    pods: 'O O O O O',
    expected: { update: 2, updateMaxUnavailable: 1 },
  },
  {
    name: 'partition 3 of 5 with one pod updated asks for one more',
    spec: plain(5, 3, 1, 0),
    pods: 'N O O O O',
    expected: { update: 1, updateMaxUnavailable: 1 },
  },
  { name: 'partition 3 of 5 with two pods updated is done', spec: plain(5, 3, 1, 0), pods: 'N N O O O', expected: {} },
  {
    name: 'raising the partition to 4 with four pods updated rolls three back',
    spec: plain(5, 4, 2, 0),
    pods: 'N N N N O',
    expected: { update: -3, updateMaxUnavailable: 2 },
  },
  {
    name: 'partition 4 with two pods still updated rolls one more back',
    spec: plain(5, 4, 2, 0),
    pods: 'N N O O O',
    expected: { update: -1, updateMaxUnavailable: 2 },
  },
  { name: 'partition 4 with one pod updated is done', spec: plain(5, 4, 2, 0), pods: 'N O O O O', expected: {} },

  // Specified deletion with surge: replace first, then delete
  {
    name: 'a marked pod with maxSurge 1 and no unavailable budget gets a surge replacement first',
    spec: plain(5, 0, 0, 1),
    pods: 'N* N N N N',
    expected: { scaleUp: 1, scaleUpLimit: 1, surge: 1 },
  },
  {
    name: 'while the surge replacement is not ready the marked pod stays',
    spec: plain(5, 0, 0, 1),
    pods: 'N* N N N N n',
    expected: { surge: 1 },
  },
  {
    name: 'once the surge replacement is ready the marked pod may be deleted',
    spec: plain(5, 0, 0, 1),
    pods: 'N* N N N N N',
    expected: { surge: 1, deleteReadyLimit: 1 },
  },
  {
    name: 'after the marked pod is deleted the surge is given back',
    spec: plain(5, 0, 0, 1),
    pods: 'N N N N N',
    expected: {},
  },

  // In-place update with partition 3 and maxSurge 1
  {
    name: 'partition 3 with maxSurge 1 creates one surge pod and asks for two updates',
    spec: plain(5, 3, 1, 1),
    pods: 'O O O O O',
    expected: { scaleUp: 1, scaleUpLimit: 1, surge: 1, update: 2, updateMaxUnavailable: 1 },
  },
  {
    name: 'with the surge pod still starting, one more update is asked for and the budget grows by the surplus',
    spec: plain(5, 3, 1, 1),
    pods: 'O O O O O n',
    expected: { surge: 1, update: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'with one pod mid in-place update the surplus old pod is to go, but no ready pod may be deleted yet',
    spec: plain(5, 3, 1, 1),
    pods: 'O O O O n~ n',
    expected: { scaleDown: 1, scaleDownAtCurrentRevision: 1 },
  },
  {
    name: 'once the in-place update is ready the surplus old pod may be deleted',
    spec: plain(5, 3, 1, 1),
    pods: 'O O O O N n',
    expected: { scaleDown: 1, scaleDownAtCurrentRevision: 1, deleteReadyLimit: 1 },
  },

  // Recreate update with partition 3 and maxSurge 1 (an update marks the old pod for deletion)
  {
    name: 'an old pod marked for recreation keeps the surge on the old revision until it is gone',
    spec: plain(5, 3, 1, 1),
    pods: 'O O O O O* n',
    expected: { surge: 1, surgeAtCurrentRevision: 1, deleteReadyLimit: 1, update: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'after the recreated pod is deleted the surge creates its successor',
    spec: plain(5, 3, 1, 1),
    pods: 'O O O O n',
    expected: { scaleUp: 1, scaleUpLimit: 1, surge: 1, update: 1, updateMaxUnavailable: 1 },
  },
  {
    name: 'with both new pods starting, the extra old pod is to go but nothing ready may be deleted',
    spec: plain(5, 3, 1, 1),
    pods: 'O O O O n n',
    expected: { scaleDown: 1, scaleDownAtCurrentRevision: 1 },
  },
  {
    name: 'three old and two new ready pods finish partition 3',
    spec: plain(5, 3, 1, 1),
    pods: 'O O O N N',
    expected: {},
  },

  // Percentages
  {
    name: 'partition 99% of 5 keeps four old pods, and maxSurge 2 only uses what the update needs',
    spec: plain(5, '99%', 3, 2),
    pods: 'O O O O O',
    expected: { scaleUp: 1, scaleUpLimit: 1, surge: 1, update: 1, updateMaxUnavailable: 3 },
  },
  {
    name: 'partition 99% with the new pod created removes one old pod within a budget of three',
    spec: plain(5, '99%', 3, 2),
    pods: 'O O O O O n',
    expected: { scaleDown: 1, scaleDownAtCurrentRevision: 1, deleteReadyLimit: 3 },
  },
  {
    name: 'partition 99% with four old and one new pod is done',
    spec: plain(5, '99%', 3, 2),
    pods: 'O O O O n',
    expected: {},
  },
  {
    name: 'maxUnavailable 40% rounds down to 2 of 5 when maxSurge 30% is in use',
    spec: plain(5, '99%', '40%', '30%'),
    pods: 'O O O O O',
    expected: { scaleUp: 1, scaleUpLimit: 1, surge: 1, update: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'maxUnavailable 40% with surge gives a delete budget of 2',
    spec: plain(5, '99%', '40%', '30%'),
    pods: 'O O O O O n',
    expected: { scaleDown: 1, scaleDownAtCurrentRevision: 1, deleteReadyLimit: 2 },
  },
  {
    name: 'maxUnavailable 40% rollout ends with four old pods and one new',
    spec: plain(5, '99%', '40%', '30%'),
    pods: 'O O O O n',
    expected: {},
  },
  {
    name: 'maxUnavailable 30% rounds down to 1 of 5 when maxSurge 30% is in use',
    spec: plain(5, '99%', '30%', '30%'),
    pods: 'O O O O O',
    expected: { scaleUp: 1, scaleUpLimit: 1, surge: 1, update: 1, updateMaxUnavailable: 1 },
  },
  {
    name: 'maxUnavailable 30% with surge gives a delete budget of 1',
    spec: plain(5, '99%', '30%', '30%'),
    pods: 'O O O O O n',
    expected: { scaleDown: 1, scaleDownAtCurrentRevision: 1, deleteReadyLimit: 1 },
  },
  {
    name: 'maxUnavailable 30% rollout ends with four old pods and one new',
    spec: plain(5, '99%', '30%', '30%'),
    pods: 'O O O O n',
    expected: {},
  },

  // Current revision equal to the update revision (no rollback possible)
  {
    name: 'when current and update revisions agree, five new pods need nothing',
    spec: plain(5, 0, 1, 0),
    pods: 'N N N N N',
    current: 'new',
    expected: {},
  },
  {
    name: 'when revisions agree, partition 3 never rolls new pods back',
    spec: plain(5, 3, 1, 0),
    pods: 'N N N N N',
    current: 'new',
    expected: {},
  },
  {
    name: 'when revisions agree, two stray old pods under partition 3 are left alone',
    spec: plain(5, 3, 1, 0),
    pods: 'O O N N N',
    current: 'new',
    expected: {},
  },
  {
    name: 'when revisions agree, stray old pods above partition 1 are still updated',
    spec: plain(5, 1, 1, 0),
    pods: 'O O O N N',
    current: 'new',
    expected: { update: 2, updateMaxUnavailable: 1 },
  },
  {
    name: 'a missing pod does not stop the update: both are asked for',
    spec: plain(5, 1, 2, 0),
    pods: 'O O N N',
    current: 'new',
    expected: { scaleUp: 1, scaleUpLimit: 1, update: 1, updateMaxUnavailable: 1 },
  },
  {
    name: 'a surplus pod does not stop the update: both are asked for',
    spec: plain(5, 1, 1, 0),
    pods: 'O O O N N N',
    current: 'new',
    expected: { scaleDown: 1, scaleDownAtCurrentRevision: 2, deleteReadyLimit: 2, update: 1, updateMaxUnavailable: 2 },
  },
  {
    name: 'without partition rollback a raised partition leaves updated pods where they are',
    spec: { ...plain(5, 4, 1, 0), partitionRollback: false },
    pods: 'O N N N N',
    expected: {},
  },

  // scaleStrategy.maxUnavailable
  {
    name: 'scale maxUnavailable 2 lets only two of five new pods be created at once',
    spec: { ...plain(5, 0, 1, 0), scaleMaxUnavailable: 2 },
    pods: '',
    expected: { scaleUp: 5, scaleUpLimit: 2 },
  },
  {
    name: 'scale maxUnavailable 2 with one unready pod lets one more be created',
    spec: { ...plain(6, 0, 1, 0), scaleMaxUnavailable: 2 },
    pods: 'N N n',
    expected: { scaleUp: 3, scaleUpLimit: 1 },
  },
  {
    name: 'scale maxUnavailable 2 with two unready pods lets none be created',
    spec: { ...plain(6, 0, 1, 0), scaleMaxUnavailable: 2 },
    pods: 'N n n',
    expected: { scaleUp: 3, scaleUpLimit: 0 },
  },

  // Small sets
  {
    name: 'one marked pod of three may be deleted',
    spec: plain(3, 0, 1, 0),
    pods: 'N N N*',
    expected: { deleteReadyLimit: 1 },
  },
  {
    name: 'two pods for three replicas need one more',
    spec: plain(3, 0, 1, 0),
    pods: 'N N',
    expected: { scaleUp: 1, scaleUpLimit: 1 },
  },
  { name: 'an unready third pod still counts as present', spec: plain(3, 0, 1, 0), pods: 'N N n', expected: {} },
  {
    name: 'four pods for three replicas, one unready, give one surplus and a budget of one',
    spec: plain(3, 0, 1, 0),
    pods: 'N N N n',
    expected: { scaleDown: 1, deleteReadyLimit: 1 },
  },
  {
    name: 'lowering replicas to 2 while a pod is marked gives a budget of two and no extra surplus',
    spec: plain(2, 0, 1, 0),
    pods: 'N N N*',
    expected: { deleteReadyLimit: 2 },
  },
  {
    name: 'partition 90% of 4 keeps three old pods, so the missing fourth is new (ours: Kruise counts a preparing pod here)',
    spec: plain(4, '90%', 1, 0),
    pods: 'O O O',
    expected: { scaleUp: 1, scaleUpLimit: 1 },
  },
  {
    name: 'partition 2 of 4 with three old pods creates one and updates one (ours: Kruise counts a preparing pod here)',
    spec: plain(4, 2, 1, 0),
    pods: 'O O O',
    expected: { scaleUp: 1, scaleUpLimit: 1, update: 1, updateMaxUnavailable: 0 },
  },

  // Paused
  {
    name: 'paused with maxSurge 3 scales 3 old pods up to 5 without surge',
    spec: { ...plain(5, 0, 0, 3), paused: true },
    pods: 'O O O',
    expected: { scaleUp: 2, scaleUpLimit: 2, update: 3, updateMaxUnavailable: -2 },
  },
  {
    name: 'paused with maxSurge 3 scales 5 old pods down to 3, taking old pods',
    spec: { ...plain(3, 0, 0, 3), paused: true },
    pods: 'O O O O O',
    expected: { scaleDown: 2, scaleDownAtCurrentRevision: 5, deleteReadyLimit: 2, update: 3, updateMaxUnavailable: 2 },
  },
  {
    name: 'pausing drops the surge: three starting new pods become surplus',
    spec: { ...plain(5, 0, 0, 3), paused: true },
    pods: 'O O O O O n n n',
    expected: { scaleDown: 3, scaleDownAtCurrentRevision: 5, update: 2, updateMaxUnavailable: 3 },
  },
  {
    name: 'pausing with partition 2 drops the surge: three old pods are surplus',
    spec: { ...plain(5, 2, 0, 3), paused: true },
    pods: 'O O O O O n n n',
    expected: { scaleDown: 3, scaleDownAtCurrentRevision: 3 },
  },

  // Ours
  { name: 'terminating pods are not counted (ours)', spec: plain(3, 0, 1, 0), pods: 'N N N N!', expected: {} },
  {
    name: 'a terminating pod is replaced at once (ours)',
    spec: plain(3, 0, 1, 0),
    pods: 'N N N!',
    expected: { scaleUp: 1, scaleUpLimit: 1 },
  },
  {
    name: 'a ready pod short of minReadySeconds counts against scale maxUnavailable (ours)',
    spec: { ...plain(4, 0, 1, 0), scaleMaxUnavailable: 1 },
    pods: 'N N N?',
    expected: { scaleUp: 1, scaleUpLimit: 0 },
  },
  {
    name: 'a pod mid in-place update counts against scale maxUnavailable even if Ready (ours)',
    spec: { ...plain(4, 0, 1, 0), scaleMaxUnavailable: 1 },
    pods: 'N N N~',
    expected: { scaleUp: 1, scaleUpLimit: 0 },
  },
  {
    name: 'the default maxUnavailable of 20% rounds up to 1 of 3 without surge (ours)',
    spec: { replicas: 3 },
    pods: 'O O O',
    expected: { update: 3, updateMaxUnavailable: 1 },
  },
  {
    name: 'the default maxUnavailable of 20% rounds down to 0 of 3 with surge, so the surge carries the update (ours)',
    spec: { replicas: 3, maxSurge: 1 },
    pods: 'O O O',
    expected: { scaleUp: 1, scaleUpLimit: 1, surge: 1, update: 3, updateMaxUnavailable: 0 },
  },
  {
    name: 'maxSurge 10% of 5 rounds up to one pod (ours)',
    spec: { replicas: 5, maxSurge: '10%', maxUnavailable: 0 },
    pods: 'O O O O O',
    expected: { scaleUp: 1, scaleUpLimit: 1, surge: 1, update: 5, updateMaxUnavailable: 0 },
  },
  { name: 'partition 100% keeps every pod old (ours)', spec: plain(4, '100%', 1, 0), pods: 'O O O O', expected: {} },
  {
    name: 'partition 50% of 5 rounds up to three old pods (ours)',
    spec: plain(5, '50%', 1, 0),
    pods: 'O O O O O',
    expected: { update: 2, updateMaxUnavailable: 1 },
  },
  {
    name: 'a partition above replicas is clamped to replicas (ours)',
    spec: plain(3, 7, 1, 0),
    pods: 'O O O',
    expected: {},
  },
  {
    name: 'a pod named in podsToDelete counts as marked (ours)',
    spec: { ...plain(3, 0, 1, 0), podsToDelete: new Set(['p1']) },
    pods: 'N N N',
    expected: { deleteReadyLimit: 1 },
  },
];

describe('calculateDiffs', () => {
  it.each(diffRows)('$name', (row) => {
    expect(calculateDiffs(inputOf(row, PORTED_DEFAULTS))).toEqual({ ...NO_DIFFS, ...row.expected });
  });
});

// ---------------------------------------------------------------------------------------------
// planScale
// ---------------------------------------------------------------------------------------------

interface ScaleRow extends Scenario {
  readonly expected: Partial<ScalePlan>;
}

const scaleRows: ScaleRow[] = [
  {
    name: 'five pods ready but short of minReadySeconds are not scaled down to 3: no budget for ready pods',
    spec: { replicas: 3, maxUnavailable: '20%' },
    pods: 'N? N? N? N? N?',
    current: 'new',
    expected: { delete: [] },
  },
  {
    name: 'scaling 5 to 3 with one pod marked deletes only the marked pod this round',
    spec: { replicas: 3, maxUnavailable: '20%' },
    pods: 'N* N N N N',
    current: 'new',
    expected: { delete: ['p0'] },
  },
  {
    name: 'scaling 5 ready pods to 3 deletes the two newest',
    spec: { replicas: 3, maxUnavailable: '20%' },
    pods: 'N N N N N',
    current: 'new',
    expected: { delete: ['p4', 'p3'] },
  },
  {
    name: 'scaling out with scale maxUnavailable 2 creates two of the five missing',
    spec: { replicas: 5, scaleMaxUnavailable: 2 },
    pods: '',
    current: 'new',
    expected: { create: 2, missing: 5 },
  },
  {
    name: 'a lost old pod under partition 3 is recreated at the current revision',
    spec: { replicas: 5, partition: 3 },
    pods: 'O O N N',
    expected: { create: 1, createAtCurrentRevision: 1, missing: 1 },
  },
  {
    name: 'creating leaves deletion for a later round even when a pod is marked',
    spec: { replicas: 5, maxUnavailable: 1 },
    pods: 'N* N N N',
    current: 'new',
    expected: { create: 1, missing: 1, delete: [] },
  },
  {
    name: 'two ready marked pods with a budget of one: the newer goes first',
    spec: { replicas: 5, maxUnavailable: 1 },
    pods: 'N* N* N N N',
    current: 'new',
    expected: { delete: ['p1'] },
  },
  {
    name: 'unready marked pods are deleted regardless of the budget',
    spec: { replicas: 5, maxUnavailable: 1 },
    pods: 'n* n* N N N',
    current: 'new',
    expected: { delete: ['p1', 'p0'] },
  },
  {
    name: 'a pod named in podsToDelete is deleted',
    spec: { replicas: 3, maxUnavailable: 1, podsToDelete: new Set(['p1']) },
    pods: 'N N N',
    current: 'new',
    expected: { delete: ['p1'] },
  },
  {
    name: 'surplus pods wait while a marked pod cannot be deleted yet',
    spec: { replicas: 3, maxUnavailable: 1 },
    pods: 'N* N n n n',
    current: 'new',
    expected: { delete: [] },
  },
  {
    name: 'a marked pod with surge available is replaced before it is deleted',
    spec: { replicas: 5, maxUnavailable: 0, maxSurge: 1 },
    pods: 'N* N N N N',
    current: 'new',
    expected: { create: 1, missing: 1, delete: [] },
  },
  {
    name: 'after the update the surge pod is taken back from the old revision',
    spec: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: 'O O O O N n',
    expected: { delete: ['p3'] },
  },
  {
    name: 'the surge is not taken back while no ready pod may be deleted',
    spec: { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    pods: 'O O O O n n',
    expected: { delete: [] },
  },
  {
    name: 'scaling down during an update removes old pods before updated ones',
    spec: { replicas: 3, maxUnavailable: 1 },
    pods: 'O O N N N',
    expected: { delete: ['p1', 'p0'] },
  },
  {
    name: 'scaling down removes an unready pod before ready ones',
    spec: { replicas: 2, maxUnavailable: 1 },
    pods: 'n N N',
    current: 'new',
    expected: { delete: ['p0'] },
  },
  {
    name: 'a terminating pod is replaced, not counted',
    spec: { replicas: 3 },
    pods: 'N N N!',
    current: 'new',
    expected: { create: 1, missing: 1 },
  },
  { name: 'a settled CloneSet needs no scaling', spec: { replicas: 3 }, pods: 'N N N', current: 'new', expected: {} },
];

describe('planScale', () => {
  it.each(scaleRows)('$name', (row) => {
    const none: ScalePlan = { create: 0, createAtCurrentRevision: 0, missing: 0, delete: [], cancelDelete: [] };
    expect(planScale(inputOf(row))).toEqual({ ...none, ...row.expected });
  });
});

// ---------------------------------------------------------------------------------------------
// planUpdate
// ---------------------------------------------------------------------------------------------

interface UpdateRow extends Scenario {
  readonly toUpdate: string[];
  readonly targetRevision?: 'old' | 'new';
  readonly expectedUpdatedReplicas: number;
}

const updateRows: UpdateRow[] = [
  {
    name: 'three ready old pods with default maxUnavailable update one at a time',
    spec: { replicas: 3 },
    pods: 'O O O',
    toUpdate: ['p2'],
    expectedUpdatedReplicas: 3,
  },
  {
    name: 'an unready old pod is updated first and uses up the budget (Kruise, unsorted, updates none)',
    spec: { replicas: 3 },
    pods: 'O o O',
    toUpdate: ['p1'],
    expectedUpdatedReplicas: 3,
  },
  {
    name: 'an unready first pod is updated and the ready ones wait',
    spec: { replicas: 3 },
    pods: 'o O O',
    toUpdate: ['p0'],
    expectedUpdatedReplicas: 3,
  },
  {
    name: 'two unready old pods of ten are both updated within 20% (Kruise, unsorted, updates one)',
    spec: { replicas: 10 },
    pods: 'o O O O O O O O o N',
    toUpdate: ['p8', 'p0'],
    expectedUpdatedReplicas: 10,
  },
  {
    name: 'partition 2 of 3 with one pod updated is done',
    spec: { replicas: 3, partition: 2, maxUnavailable: 3 },
    pods: 'o O N',
    toUpdate: [],
    expectedUpdatedReplicas: 1,
  },
  {
    name: 'partition 2 of 8 with maxUnavailable 3 updates three ready pods',
    spec: { replicas: 8, partition: 2, maxUnavailable: 3 },
    pods: 'O O O O O O O N',
    toUpdate: ['p6', 'p5', 'p4'],
    expectedUpdatedReplicas: 6,
  },
  {
    name: 'five unavailable old pods with maxUnavailable 2 update only two',
    spec: { replicas: 5, partition: 0, maxUnavailable: 2 },
    pods: 'o o o o o',
    toUpdate: ['p4', 'p3'],
    expectedUpdatedReplicas: 5,
  },
  {
    name: 'two unavailable updated pods use up maxUnavailable 2',
    spec: { replicas: 5, partition: 0, maxUnavailable: 2 },
    pods: 'o o o n n',
    toUpdate: [],
    expectedUpdatedReplicas: 5,
  },
  {
    name: 'one unavailable updated pod leaves room for one more',
    spec: { replicas: 5, partition: 0, maxUnavailable: 2 },
    pods: 'o o o N n',
    toUpdate: ['p2'],
    expectedUpdatedReplicas: 5,
  },
  {
    name: 'a starting surge pod widens the budget to three: two more updates',
    spec: { replicas: 5, partition: 0, maxUnavailable: 2, maxSurge: 1 },
    pods: 'o o o o o n',
    toUpdate: ['p4', 'p3'],
    expectedUpdatedReplicas: 5,
  },
  {
    name: 'with surge, one ready and one unavailable updated pod leave room for two',
    spec: { replicas: 5, partition: 0, maxUnavailable: 2, maxSurge: 1 },
    pods: 'o o o o N n',
    toUpdate: ['p3', 'p2'],
    expectedUpdatedReplicas: 5,
  },
  {
    name: 'with surge, two unavailable updated pods leave room for one',
    spec: { replicas: 5, partition: 0, maxUnavailable: 2, maxSurge: 1 },
    pods: 'o o o n N n',
    toUpdate: ['p2'],
    expectedUpdatedReplicas: 5,
  },
  {
    name: 'with surge, three unavailable updated pods leave no room',
    spec: { replicas: 5, partition: 0, maxUnavailable: 2, maxSurge: 1 },
    pods: 'o o o n n n',
    toUpdate: [],
    expectedUpdatedReplicas: 5,
  },
  {
    name: 'rolling back to partition 7 of 8 moves three unavailable pods back within maxUnavailable 3',
    spec: { replicas: 8, partition: 7, maxUnavailable: 3, partitionRollback: true },
    pods: 'O O O n n n n n',
    toUpdate: ['p7', 'p6', 'p5'],
    targetRevision: 'old',
    expectedUpdatedReplicas: 1,
  },
  {
    name: 'with one surge pod in use, one of two old pods is updated',
    spec: { replicas: 4, maxUnavailable: 2, maxSurge: 1 },
    pods: 'O O N N N',
    toUpdate: ['p1'],
    expectedUpdatedReplicas: 4,
  },
  {
    name: 'with two surge pods in use, two of four old pods are updated',
    spec: { replicas: 4, maxUnavailable: 2, maxSurge: 1 },
    pods: 'O O O O N N',
    toUpdate: ['p3', 'p2'],
    expectedUpdatedReplicas: 4,
  },
  {
    name: 'nothing is updated while paused',
    spec: { replicas: 3, paused: true },
    pods: 'O O O',
    toUpdate: [],
    expectedUpdatedReplicas: 3,
  },
  {
    name: 'a pod waiting out its in-place grace period is not picked again',
    spec: { replicas: 3, maxUnavailable: 2 },
    pods: 'Og O O',
    toUpdate: ['p2', 'p1'],
    expectedUpdatedReplicas: 3,
  },
  {
    name: 'a pod mid in-place update holds the only unavailable slot',
    spec: { replicas: 5, maxUnavailable: 1 },
    pods: 'n~ O O O O',
    toUpdate: [],
    expectedUpdatedReplicas: 5,
  },
  {
    name: 'partition 50% of 5 expects two updated pods',
    spec: { replicas: 5, partition: '50%', maxUnavailable: 2 },
    pods: 'O O O O O',
    toUpdate: ['p4', 'p3'],
    expectedUpdatedReplicas: 2,
  },
  {
    name: 'a raised partition does not roll back unless partitionRollback is set',
    spec: { replicas: 5, partition: 4, maxUnavailable: 2 },
    pods: 'O N N N N',
    toUpdate: [],
    expectedUpdatedReplicas: 1,
  },
  {
    name: 'with partitionRollback a raised partition moves the newest updated pods back first',
    spec: { replicas: 5, partition: 4, maxUnavailable: 2, partitionRollback: true },
    pods: 'O N N N N',
    toUpdate: ['p4', 'p3'],
    targetRevision: 'old',
    expectedUpdatedReplicas: 1,
  },
  {
    name: 'an updated CloneSet updates nothing',
    spec: { replicas: 3 },
    pods: 'N N N',
    toUpdate: [],
    expectedUpdatedReplicas: 3,
  },
];

describe('planUpdate', () => {
  it.each(updateRows)('$name', (row) => {
    const expected: Omit<UpdatePlan, 'budgetUsed'> = {
      toUpdate: row.toUpdate,
      targetRevision: row.targetRevision === 'old' ? OLD : NEW,
      expectedUpdatedReplicas: row.expectedUpdatedReplicas,
    };
    expect(planUpdate(inputOf(row))).toMatchObject(expected);
  });

  it('updates unready and pending pods before running ready ones, as Kruise sorts them', () => {
    // Kruise's SortUpdateIndexes case: no timestamps, no nodes, only phase and readiness differ.
    const base = { revision: OLD, nodeName: '', available: false } as const;
    const pods: PodSummary[] = [
      { ...base, name: 'p0', phase: 'Pending', ready: true },
      { ...base, name: 'p1', phase: 'Pending', ready: false },
      { ...base, name: 'p2', phase: 'Pending', ready: false, revision: NEW },
      { ...base, name: 'p3', phase: 'Running', ready: true, available: true },
      { ...base, name: 'p4', phase: 'Running', ready: false },
    ];
    const plan = planUpdate({ replicas: 5, maxUnavailable: 5, currentRevision: OLD, updateRevision: NEW, pods });
    expect(plan.toUpdate).toEqual(['p1', 'p0', 'p4', 'p3']);
  });
});

// ---------------------------------------------------------------------------------------------
// Orders
// ---------------------------------------------------------------------------------------------

const T = 1_700_000_000_000;

function running(name: string, extra: Partial<PodSummary> = {}): PodSummary {
  return {
    name,
    revision: NEW,
    nodeName: `node-${name}`,
    phase: 'Running',
    ready: true,
    available: true,
    readySince: T,
    createdAt: T - 60_000,
    ...extra,
  };
}

interface OrderRow {
  readonly name: string;
  readonly pods: PodSummary[];
  /** Names, first victim first. */
  readonly order: string[];
}

const deletionRows: OrderRow[] = [
  {
    name: 'an unscheduled pod goes before a scheduled one, even a pending one',
    pods: [
      running('sched', { phase: 'Pending', ready: false, available: false }),
      running('unsched', { nodeName: '', phase: 'Pending', ready: false, available: false }),
    ],
    order: ['unsched', 'sched'],
  },
  {
    name: 'Pending goes before Unknown, which goes before Running',
    pods: [
      running('run'),
      running('unknown', { phase: 'Unknown', ready: false, available: false }),
      running('pending', { phase: 'Pending', ready: false, available: false }),
    ],
    order: ['pending', 'unknown', 'run'],
  },
  {
    name: 'a running pod that is not ready goes before a ready one',
    pods: [running('ready'), running('unready', { ready: false, available: false })],
    order: ['unready', 'ready'],
  },
  {
    name: 'a ready pod short of minReadySeconds goes before an available one',
    pods: [running('avail'), running('young', { available: false })],
    order: ['young', 'avail'],
  },
  {
    name: 'a pod mid in-place update goes before an available one',
    pods: [running('avail'), running('updating', { inPlaceUpdating: true })],
    order: ['updating', 'avail'],
  },
  {
    name: 'the lower pod-deletion-cost goes first',
    pods: [running('dear', { deletionCost: 100 }), running('cheap', { deletionCost: -5 }), running('plain')],
    order: ['cheap', 'plain', 'dear'],
  },
  {
    name: 'deletion cost does not outrank readiness',
    pods: [
      running('cheap-ready', { deletionCost: -100 }),
      running('dear-unready', { deletionCost: 100, ready: false, available: false }),
    ],
    order: ['dear-unready', 'cheap-ready'],
  },
  {
    name: 'pods doubled up on a node go before a pod alone on its node',
    pods: [
      running('shared-old', { nodeName: 'node-1', createdAt: T - 90_000 }),
      running('shared-new', { nodeName: 'node-1', createdAt: T - 80_000 }),
      running('alone', { nodeName: 'node-2', createdAt: T - 10_000 }),
    ],
    order: ['shared-new', 'alone', 'shared-old'],
  },
  {
    name: 'deletion cost outranks being doubled up on a node',
    pods: [
      running('shared-a', { nodeName: 'node-1', deletionCost: 10 }),
      running('shared-b', { nodeName: 'node-1', deletionCost: 10 }),
      running('alone', { nodeName: 'node-2' }),
    ],
    order: ['alone', 'shared-a', 'shared-b'],
  },
  {
    name: 'the pod ready for the shorter time goes first',
    pods: [running('long', { readySince: T - 3_600_000 }), running('short', { readySince: T - 1_000 })],
    order: ['short', 'long'],
  },
  {
    name: 'a ready pod with an unknown ready time counts as ready for the shortest time',
    pods: [running('known', { readySince: T - 1_000 }), running('unknown', { readySince: undefined })],
    order: ['unknown', 'known'],
  },
  {
    name: 'the pod with more container restarts goes first',
    pods: [running('calm', { restarts: 0 }), running('flappy', { restarts: 7 })],
    order: ['flappy', 'calm'],
  },
  {
    name: 'the newer pod goes first',
    pods: [running('older', { createdAt: T - 120_000 }), running('newer', { createdAt: T - 5_000 })],
    order: ['newer', 'older'],
  },
  {
    name: 'a pod with an unknown creation time counts as the newest',
    pods: [running('newer', { createdAt: T - 5_000 }), running('unknown', { createdAt: 0 })],
    order: ['unknown', 'newer'],
  },
  {
    name: 'pods that tie on every rule go in name order',
    pods: [running('b'), running('a'), running('c')],
    order: ['a', 'b', 'c'],
  },
];

describe('rankForDeletion', () => {
  it.each(deletionRows)('$name', (row) => {
    expect(rankForDeletion(row.pods).map((p) => p.name)).toEqual(row.order);
  });

  it('does not reorder the array it is given', () => {
    const pods = [running('older', { createdAt: T - 120_000 }), running('newer', { createdAt: T - 5_000 })];
    rankForDeletion(pods);
    expect(pods.map((p) => p.name)).toEqual(['older', 'newer']);
  });
});

const updateOrderRows: OrderRow[] = [
  {
    name: 'the update order ignores pod-deletion-cost, like Kubernetes ActivePods',
    pods: [
      running('cheap', { deletionCost: -100, createdAt: T - 90_000 }),
      running('dear', { deletionCost: 100, createdAt: T - 10_000 }),
    ],
    order: ['dear', 'cheap'],
  },
  {
    name: 'the update order ignores minReadySeconds, reading only the Ready condition',
    pods: [
      running('young', { available: false, readySince: T - 60_000 }),
      running('settled', { readySince: T - 1_000 }),
    ],
    order: ['settled', 'young'],
  },
  {
    name: 'the update order takes unscheduled, then pending, then unready pods first',
    pods: [
      running('ready'),
      running('unready', { ready: false, available: false }),
      running('pending', { phase: 'Pending', ready: false, available: false }),
      running('unsched', { nodeName: '', phase: 'Pending', ready: false, available: false }),
    ],
    order: ['unsched', 'pending', 'unready', 'ready'],
  },
];

describe('compareActivePods', () => {
  it.each(updateOrderRows)('$name', (row) => {
    expect([...row.pods].sort(compareActivePods).map((p) => p.name)).toEqual(row.order);
  });
});

// ---------------------------------------------------------------------------------------------
// Int-or-percent and spec resolution
// ---------------------------------------------------------------------------------------------

describe('resolvePartition', () => {
  it.each([
    { partition: undefined, replicas: 5, expected: 0 },
    { partition: 2, replicas: 5, expected: 2 },
    { partition: 9, replicas: 5, expected: 5 },
    { partition: '1%', replicas: 5, expected: 1 },
    { partition: '99%', replicas: 5, expected: 4 },
    { partition: '100%', replicas: 5, expected: 5 },
    { partition: '99%', replicas: 1, expected: 1 },
    { partition: '50%', replicas: 0, expected: 0 },
  ])('keeps $expected of $replicas pods old for partition $partition', ({ partition, replicas, expected }) => {
    expect(resolvePartition(partition, replicas)).toBe(expected);
  });
});

describe('resolveRolloutLimits', () => {
  it('defaults to 20% unavailable rounded up, no surge, unlimited scale-out', () => {
    expect(resolveRolloutLimits({ replicas: 3 })).toEqual({
      partition: 0,
      maxSurge: 0,
      maxUnavailable: 1,
      scaleMaxUnavailable: 2147483647,
    });
  });

  it('uses no surge while paused, and then rounds maxUnavailable up again', () => {
    expect(resolveRolloutLimits({ replicas: 5, maxSurge: '50%', maxUnavailable: '30%', paused: true })).toMatchObject({
      maxSurge: 0,
      maxUnavailable: 2,
    });
  });
});

describe('parseDeletionCost', () => {
  it.each([
    { annotation: '10', expected: 10 },
    { annotation: '-5', expected: -5 },
    { annotation: '0', expected: 0 },
    { annotation: '2147483647', expected: 2147483647 },
    { annotation: '+1', expected: 0 },
    { annotation: '007', expected: 0 },
    { annotation: '-0', expected: 0 },
    { annotation: '1.5', expected: 0 },
    { annotation: '2147483648', expected: 0 },
    { annotation: 'high', expected: 0 },
    { annotation: undefined, expected: 0 },
  ])('reads the annotation $annotation as cost $expected', ({ annotation, expected }) => {
    expect(parseDeletionCost(annotation)).toBe(expected);
  });
});
