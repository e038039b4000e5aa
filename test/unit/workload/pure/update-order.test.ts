// Table tests for the update order (src/workload/pure/update-order.ts): priority comparison and sort,
// scatter terms and interleaving, and how planUpdate uses them inside the one disruption budget.
// The priority and scatter tables carry over the cases of OpenKruise v1.9.1's update-sort unit
// tests (their inputs and expected orders), restated as tables; rows marked "ours" are Tailor's.

import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';

import type { UpdatePriorityStrategy, UpdateScatterTerm } from '../../../../src/api/types.js';
import type { Labels } from '../../../../src/api/wire.js';
import { disruptionBudget } from '../../../../src/workload/pure/budget.js';
import type { PodSummary } from '../../../../src/workload/pure/pod-state.js';
import {
  comparePriority,
  orderForUpdate,
  scatter,
  scatterByTerm,
  scatterTerms,
  sortByPriority,
  trailingInteger,
  type UpdateOrder,
} from '../../../../src/workload/pure/update-order.js';
import { planUpdate, type RolloutInput } from '../../../../src/workload/pure/update.js';
import { resolveRolloutLimits } from '../../../../src/workload/pure/limits.js';

const weights = (...terms: [number, Record<string, string>][]): UpdatePriorityStrategy => ({
  weightPriority: terms.map(([weight, matchLabels]) => ({ weight, matchSelector: { matchLabels } })),
});
const orders = (...keys: string[]): UpdatePriorityStrategy => ({
  orderPriority: keys.map((orderedKey) => ({ orderedKey })),
});

const FOO_20_BAR_10 = weights([20, { key: 'foo' }], [10, { key: 'bar' }]);
const ORDER_KEY1_KEY2 = orders('key1', 'key2');

describe('comparePriority: which of two labelled pods goes first', () => {
  // `first` is 'a' when the pod labelled `a` goes first or the two tie (the earlier order stands).
  const rows: { name: string; strategy: UpdatePriorityStrategy; a: Labels; b: Labels; first: 'a' | 'b' }[] = [
    { name: 'no labels on either pod tie', strategy: FOO_20_BAR_10, a: {}, b: {}, first: 'a' },
    {
      name: 'the same matching label on both ties',
      strategy: FOO_20_BAR_10,
      a: { key: 'foo' },
      b: { key: 'foo' },
      first: 'a',
    },
    {
      name: 'weight 20 goes before weight 10',
      strategy: FOO_20_BAR_10,
      a: { key: 'bar' },
      b: { key: 'foo' },
      first: 'b',
    },
    {
      name: 'a pod matching a term goes before one matching none',
      strategy: FOO_20_BAR_10,
      a: {},
      b: { key: 'bar' },
      first: 'b',
    },
    {
      name: 'a pod matching the heavier term goes before one matching none',
      strategy: FOO_20_BAR_10,
      a: {},
      b: { key: 'foo' },
      first: 'b',
    },
    {
      name: 'weights add up: 10 + 15 beats 20',
      strategy: weights([20, { key1: 'foo' }], [10, { key2: 'bar' }], [15, { key3: 'baz' }]),
      a: { key1: 'foo' },
      b: { key2: 'bar', key3: 'baz' },
      first: 'b',
    },
    {
      name: 'weights add up: 10 + 5 loses to 20',
      strategy: weights([20, { key1: 'foo' }], [10, { key2: 'bar' }], [5, { key3: 'baz' }]),
      a: { key2: 'bar', key3: 'baz' },
      b: { key1: 'foo' },
      first: 'b',
    },
    { name: 'order keys on neither pod tie', strategy: ORDER_KEY1_KEY2, a: {}, b: {}, first: 'a' },
    {
      name: 'the higher trailing integer goes first (o-10 before o-5)',
      strategy: ORDER_KEY1_KEY2,
      a: { key1: 'o-10' },
      b: { key1: 'o-5' },
      first: 'a',
    },
    { name: 'equal values tie', strategy: ORDER_KEY1_KEY2, a: { key1: 'o-10' }, b: { key1: 'o-10' }, first: 'a' },
    { name: 'o-20 goes before o-10', strategy: ORDER_KEY1_KEY2, a: { key1: 'o-10' }, b: { key1: 'o-20' }, first: 'b' },
    {
      name: 'a pod with the first key goes before one with only the second',
      strategy: ORDER_KEY1_KEY2,
      a: { key2: 'o-20' },
      b: { key1: 'o-10' },
      first: 'b',
    },
    {
      name: 'on the second key, too, the higher integer goes first',
      strategy: ORDER_KEY1_KEY2,
      a: { key2: 'o-20' },
      b: { key2: 'o-10' },
      first: 'a',
    },
    // ours
    {
      name: 'ours: a pod with no order key goes before one with any',
      strategy: ORDER_KEY1_KEY2,
      a: { key1: '9' },
      b: {},
      first: 'b',
    },
    { name: 'ours: an empty strategy never reorders', strategy: {}, a: {}, b: { key: 'foo' }, first: 'a' },
    {
      name: 'ours: a matchExpressions selector counts like matchLabels',
      strategy: {
        weightPriority: [
          { weight: 50, matchSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] } },
        ],
      },
      a: { zone: 'c' },
      b: { zone: 'b' },
      first: 'b',
    },
  ];
  it.each(rows)('$name', ({ strategy, a, b, first }) => {
    const c = comparePriority(strategy, a, b);
    expect(first === 'a' ? c <= 0 : c > 0).toBe(true);
  });
});

describe('trailingInteger: the integer that ends a label value', () => {
  const rows: [string, number][] = [
    ['5', 5],
    ['sts-10', 10],
    ['o-05', 5],
    ['abc', 0],
    ['', 0],
    ['10-abc', 0],
    ['99999999999999999999', 0],
  ];
  it.each(rows)('%j reads %d', (value, expected) => expect(trailingInteger(value)).toBe(expected));
});

describe('sortByPriority', () => {
  const labels: Labels[] = [{ hello: 'world' }, {}, { foo: 'bar' }, {}];
  const rows: { name: string; strategy: UpdatePriorityStrategy; want: number[] }[] = [
    { name: 'an empty priority strategy keeps the order', strategy: {}, want: [0, 1, 2, 3] },
    {
      name: 'pods matching no term keep their order behind those that match',
      strategy: weights([100, { foo: 'bar' }], [90, { hello: 'world' }]),
      want: [2, 0, 1, 3],
    },
    {
      name: 'no pod matching any term keeps the order',
      strategy: weights([100, { not: 'match' }], [90, { not1: 'match1' }]),
      want: [0, 1, 2, 3],
    },
  ];
  it.each(rows)('$name', ({ strategy, want }) => {
    expect(sortByPriority([0, 1, 2, 3], strategy, (i) => labels[i]!)).toEqual(want);
  });
});

const A: UpdateScatterTerm = { key: 'labelA', value: 'AAA' };
const B: UpdateScatterTerm = { key: 'labelB', value: 'BBB' };
const C: UpdateScatterTerm = { key: 'labelC', value: 'CCC' };

describe('scatterTerms: the order scatter terms are applied in', () => {
  const rows: { name: string; labels: Labels[]; terms: UpdateScatterTerm[]; want: UpdateScatterTerm[] }[] = [
    {
      name: 'a single term is applied as is',
      labels: [{}, {}, {}, {}, { labelA: 'AAA' }, { labelA: 'AAA' }],
      terms: [A],
      want: [A],
    },
    {
      name: 'the term matched by more pods goes first',
      labels: [{}, {}, { labelB: 'B' }, { labelB: 'BBB' }, { labelA: 'AAA' }, { labelA: 'AAA' }],
      terms: [A, B],
      want: [A, B],
    },
    // ours
    { name: 'ours: terms no pod matches are dropped', labels: [{ labelB: 'BBB' }, {}], terms: [A, B], want: [B] },
    {
      name: 'ours: equal counts keep the order written',
      labels: [{ labelB: 'BBB' }, { labelA: 'AAA' }],
      terms: [B, A],
      want: [B, A],
    },
  ];
  it.each(rows)('$name', ({ labels, terms, want }) => {
    expect(scatterTerms(terms, [...labels.keys()], (i) => labels[i]!)).toEqual(want);
  });
});

/**
 * Pods as tokens, one a pod: the letters A, B and C for the labels labelA=AAA, labelB=BBB and
 * labelC=CCC, x for a label no term names, `.` for no labels.
 */
const LETTER_LABELS: Record<string, [string, string]> = {
  A: ['labelA', 'AAA'],
  B: ['labelB', 'BBB'],
  C: ['labelC', 'CCC'],
  x: ['other', 'x'],
};
const parseLabels = (token: string): Labels =>
  Object.fromEntries([...token].flatMap((letter) => (LETTER_LABELS[letter] ? [LETTER_LABELS[letter]] : [])));

describe('scatterByTerm: spreading the pods of one term (labelA=AAA) through the order', () => {
  const rows: [string, string, number[]][] = [
    ['no label', '.', [0]],
    ['only one scattered pod', 'A', [0]],
    ['odd scattered pod + odd ordinary pod', 'A .', [0, 1]],
    ['even scattered pods + even ordinary pods', '. . . . A A', [4, 0, 1, 2, 3, 5]],
    ['odd scattered pods + odd ordinary pods', '. . . A A A', [3, 0, 1, 4, 2, 5]],
    ['even scattered pods + odd ordinary pods', '. . . A . . A', [3, 0, 1, 2, 4, 5, 6]],
    ['odd scattered pods + even ordinary pods', '. . . . . . A A A', [6, 0, 1, 2, 7, 3, 4, 5, 8]],
    ['even scattered pods + even ordinary pods, more scattered than ordinary', '. . A A A A', [2, 3, 0, 4, 1, 5]],
    [
      'even scattered pods + odd ordinary pods, more scattered than ordinary',
      '. . A . A A A A A',
      [2, 4, 0, 5, 6, 1, 7, 3, 8],
    ],
    [
      'odd scattered pods + even ordinary pods, more scattered than ordinary',
      '. A . A . . A A A',
      [1, 0, 3, 2, 6, 4, 7, 5, 8],
    ],
    ['other labels count as ordinary', '. . . . . . . A A AB', [7, 0, 1, 2, 3, 8, 4, 5, 6, 9]],
  ];
  it.each(rows)('%s', (_name, notation, want) => {
    const labels = notation.split(' ').map(parseLabels);
    const pods = [...labels.keys()];
    expect(scatterByTerm(A, pods, pods, (i) => labels[i]!)).toEqual(want);
  });
});

describe('scatter: every term, candidates among all the pods', () => {
  // `-` stands for a pod that is not active: it is neither a candidate nor counted. The
  // candidates are the first `want.length` active pods; the pods after them are counted only.
  const rows: [string, string, UpdateScatterTerm[], number[]][] = [
    ['a scattered pod alone', 'AB', [A], [0]],
    ['all ordinary pods', '. . . . . .', [], [0, 1, 2, 3, 4, 5]],
    ['one term, pods with one label', '. . . . A A', [A], [4, 0, 1, 2, 3, 5]],
    ['one term, pods with other labels too', '. . . . x x B A A AB', [B], [6, 0, 1, 2, 3, 4, 5, 7, 8, 9]],
    ['two terms, pods with one label', 'B B . . A A', [A, B], [0, 4, 2, 3, 5, 1]],
    ['two terms, a pod with both labels', '. . . B AB A', [A, B], [4, 0, 1, 2, 5, 3]],
    ['two terms written B, A', '. . . . x x B A A B', [B, A], [7, 6, 0, 1, 2, 3, 4, 5, 9, 8]],
    ['two terms written A, B', '. . . . x x B A A B', [A, B], [6, 7, 0, 1, 2, 3, 4, 5, 8, 9]],
    [
      'two terms on the same pods, even scattered + even ordinary',
      '. . . . x x AB . . AB',
      [A, B],
      [6, 0, 1, 2, 3, 4, 5, 7, 8, 9],
    ],
    [
      'two terms on the same pods, even scattered + odd ordinary',
      '. . . x x AB . . AB',
      [A, B],
      [5, 0, 1, 2, 3, 4, 6, 7, 8],
    ],
    [
      'two terms, odd scattered + odd ordinary, candidates fewer than pods',
      '. . . A x x AB . . .',
      [A, B],
      [3, 0, 1, 2, 4, 5, 7, 6],
    ],
    [
      'two terms, odd scattered + odd ordinary, eleven of twelve pods',
      '. . . A . . x x AB . . AB',
      [A, B],
      [0, 1, 2, 4, 3, 5, 6, 7, 9, 10, 8],
    ],
    [
      'two terms, even scattered + even ordinary, more scattered than ordinary',
      '. . . A Ax x AB . . AB',
      [A, B],
      [6, 3, 0, 1, 4, 2, 5, 7, 8, 9],
    ],
    [
      'two terms, even scattered + odd ordinary, more scattered than ordinary',
      '. A A x x AB . . AB',
      [A, B],
      [5, 1, 0, 3, 2, 4, 6, 7, 8],
    ],
    [
      'two terms, odd scattered + odd ordinary, more scattered than ordinary, eight of ten pods',
      'A . . A Ax x AB . . AB',
      [A, B],
      [1, 0, 2, 3, 5, 4, 7, 6],
    ],
    [
      'two terms, odd scattered + odd ordinary, more scattered than ordinary, eleven of twelve pods',
      '. . A A . A x x AB . . AB',
      [A, B],
      [0, 2, 1, 4, 3, 6, 7, 5, 9, 10, 8],
    ],
    ['three terms, pods with one label', '. A A B B C C C C C', [A, B, C], [3, 1, 5, 0, 6, 7, 8, 9, 2, 4]],
    ['three terms, pods with two labels', '. A AC BC B . . C C C', [A, B, C], [3, 2, 0, 7, 8, 5, 6, 9, 1, 4]],
    ['continuous sort 1', '. . . . A A A', [A], [0, 1, 4, 2, 3, 5]],
    ['continuous sort 2', 'A A . . . . . . . A', [A], [2, 0, 3, 4, 5, 6, 1]],
    [
      'a pod that is not active is neither a candidate nor counted',
      '. A AC BC B - . . C C C',
      [A, B, C],
      [3, 2, 0, 8, 9, 6, 7, 10, 1, 4],
    ],
  ];
  it.each(rows)('%s', (_name, notation, terms, want) => {
    const tokens = notation.split(' ');
    const all = [...tokens.keys()].filter((i) => tokens[i] !== '-');
    const candidates = all.slice(0, want.length);
    expect(scatter(terms, all, candidates, (i) => parseLabels(tokens[i]!))).toEqual(want);
  });
});

// ---------------------------------------------------------------------------------------------
// planUpdate with an order: inside the one disruption budget
// ---------------------------------------------------------------------------------------------

const OLD = 'web-rev-old';
const NEW = 'web-rev-new';

interface TestPod {
  readonly summary: PodSummary;
  readonly labels: Labels;
}

function pod(
  i: number,
  labels: Labels,
  state: { revision?: string; available?: boolean; ready?: boolean } = {},
): TestPod {
  const ready = state.ready ?? true;
  return {
    summary: {
      name: `p${i}`,
      revision: state.revision ?? OLD,
      nodeName: 'node-1',
      phase: 'Running',
      ready,
      available: ready && (state.available ?? true),
      readySince: ready ? 1_000 : undefined,
      createdAt: 1_000 * (i + 1),
    },
    labels,
  };
}

function rolloutOf(
  pods: readonly TestPod[],
  spec: Partial<RolloutInput>,
  order?: Omit<UpdateOrder, 'labelsOf'>,
): RolloutInput {
  const labels = new Map(pods.map((p) => [p.summary.name, p.labels]));
  return {
    replicas: pods.length,
    currentRevision: OLD,
    updateRevision: NEW,
    pods: pods.map((p) => p.summary),
    ...spec,
    ...(order ? { updateOrder: { ...order, labelsOf: (name: string) => labels.get(name) ?? {} } } : {}),
  };
}

describe('planUpdate takes pods in the update order, within the budget', () => {
  const zoned = [pod(0, { zone: 'a' }), pod(1, { zone: 'b' }), pod(2, { zone: 'c' }), pod(3, { zone: 'b' })];
  const rows: {
    name: string;
    pods: TestPod[];
    spec: Partial<RolloutInput>;
    order?: Omit<UpdateOrder, 'labelsOf'>;
    want: string[];
  }[] = [
    {
      name: 'ours: without an order, the newest pod goes first',
      pods: zoned,
      spec: { maxUnavailable: 1 },
      want: ['p3'],
    },
    {
      name: 'ours: the heaviest weight goes first, one at a time',
      pods: zoned,
      spec: { maxUnavailable: 1 },
      order: { priorityStrategy: weights([10, { zone: 'b' }], [50, { zone: 'c' }]) },
      want: ['p2'],
    },
    {
      name: 'ours: equal weights keep the default order among them',
      pods: zoned,
      spec: { maxUnavailable: 2 },
      order: { priorityStrategy: weights([10, { zone: 'b' }]) },
      want: ['p3', 'p1'],
    },
    {
      name: 'ours: the highest order value goes first',
      pods: [pod(0, { rank: 'r-3' }), pod(1, { rank: 'r-9' }), pod(2, { rank: 'r-1' })],
      spec: { maxUnavailable: 2 },
      order: { priorityStrategy: orders('rank') },
      want: ['p1', 'p0'],
    },
    {
      name: 'ours: a pod already out of service keeps going first and costs nothing',
      pods: [pod(0, { zone: 'c' }), pod(1, { zone: 'a' }, { ready: false }), pod(2, { zone: 'b' })],
      spec: { maxUnavailable: 2 },
      order: { priorityStrategy: weights([50, { zone: 'c' }], [10, { zone: 'b' }]) },
      want: ['p1', 'p0'],
    },
    {
      name: 'ours: scatter spreads a zone through the order, its last pod at the end',
      pods: [pod(0, { zone: 'a' }), pod(1, { zone: 'a' }), pod(2, { zone: 'a' }), pod(3, {}), pod(4, {}), pod(5, {})],
      spec: { maxUnavailable: 6 },
      order: { scatterStrategy: [{ key: 'zone', value: 'a' }] },
      want: ['p2', 'p5', 'p4', 'p1', 'p3', 'p0'],
    },
  ];
  it.each(rows)('$name', ({ pods, spec, order, want }) => {
    expect(planUpdate(rolloutOf(pods, spec, order)).toUpdate).toEqual(want);
  });
});

describe('orderForUpdate', () => {
  it('without an order returns the candidates as they came', () => {
    const pods = [pod(0, {}), pod(1, {})].map((p) => p.summary);
    expect(orderForUpdate(pods, pods, undefined)).toEqual(pods);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: an order never changes how many pods move or what they cost
// ---------------------------------------------------------------------------------------------

const zones = ['a', 'b', 'c'];
const arbitraryPod = fc.record({
  zone: fc.constantFrom(...zones),
  rank: fc.integer({ min: 0, max: 20 }),
  updated: fc.boolean(),
  ready: fc.boolean(),
  available: fc.boolean(),
});
const arbitraryOrder = fc.record({
  priority: fc.oneof(
    fc.constant(undefined),
    fc
      .array(fc.record({ weight: fc.integer({ min: 0, max: 100 }), zone: fc.constantFrom(...zones) }), {
        minLength: 1,
        maxLength: 3,
      })
      .map((terms) => weights(...terms.map((t): [number, Record<string, string>] => [t.weight, { zone: t.zone }]))),
    fc.constant(orders('rank')),
  ),
  scatter: fc.subarray(zones.map((zone) => ({ key: 'zone', value: zone }))),
});

describe('an update order inside the one budget', () => {
  it('chooses as many pods as the default order, costing the same, never more than the budget', () => {
    fc.assert(
      fc.property(
        fc.array(arbitraryPod, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 4 }),
        arbitraryOrder,
        (specs, maxUnavailable, order) => {
          const pods = specs.map((s, i) =>
            pod(
              i,
              { zone: s.zone, rank: `r-${s.rank}` },
              { revision: s.updated ? NEW : OLD, ready: s.ready, available: s.available },
            ),
          );
          const spec: Partial<RolloutInput> = { maxUnavailable, maxSurge: 0 };
          const plain = planUpdate(rolloutOf(pods, spec));
          const ordered = planUpdate(
            rolloutOf(pods, spec, {
              ...(order.priority ? { priorityStrategy: order.priority } : {}),
              scatterStrategy: order.scatter,
            }),
          );
          const input = rolloutOf(pods, spec);
          const budget = disruptionBudget({
            replicas: input.replicas,
            maxUnavailable: resolveRolloutLimits(input).maxUnavailable,
            pods: input.pods,
          });
          expect(ordered.toUpdate.length).toBe(plain.toUpdate.length);
          expect(ordered.budgetUsed).toBe(plain.budgetUsed);
          expect(ordered.budgetUsed).toBeLessThanOrEqual(budget);
          expect(new Set(ordered.toUpdate).size).toBe(ordered.toUpdate.length);
          const oldNames = new Set(pods.filter((p) => p.summary.revision === OLD).map((p) => p.summary.name));
          expect(ordered.toUpdate.every((name) => oldNames.has(name))).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
