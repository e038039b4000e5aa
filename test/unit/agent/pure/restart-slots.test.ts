// The node's slots for restarts in place, shared per pod and per namespace (decision 78): a pod
// holds 4 stops at most, a namespace its share (half the node alone, less as others come), the
// node 64; whatever hangs, a pod of another namespace gets a slot, and a pod over a bound waits
// until other stops end.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  DEFAULT_SLOT_LIMITS,
  grantSlots,
  namespaceShare,
  type PodStops,
  type SlotGrant,
  type SlotLimits,
} from '../../../../src/agent/pure/restart-slots.js';

const stops = (pod: string, held: number, waiting: number): PodStops => ({
  pod,
  namespace: pod.split('/')[0] ?? '',
  held,
  waiting,
});

/** `count` pods of `namespace`, each holding `held` stops. */
const holders = (namespace: string, count: number, held: number): PodStops[] =>
  Array.from({ length: count }, (_, i) => stops(`${namespace}/p${i}`, held, 0));

describe('grantSlots', () => {
  it.each<[string, string, PodStops[], SlotGrant]>([
    ['a pod alone on the node starts every stop it asks for', 'a/web', [stops('a/web', 0, 2)], { granted: 2 }],
    [
      'a pod of many containers starts 4 stops; the others wait on its own bound',
      'a/big',
      [stops('a/big', 0, 10)],
      { granted: 4, waitsOn: 'pod' },
    ],
    ['a pod holding 3 starts one more', 'a/big', [stops('a/big', 3, 5)], { granted: 1, waitsOn: 'pod' }],
    [
      "the review's case: one pod with 64 hanging preStop hooks holds 4, and another tenant's pod gets its slot",
      'b/web',
      [stops('a/hang', 4, 60), stops('b/web', 0, 1)],
      { granted: 1 },
    ],
    [
      'a namespace alone holds half the node: 30 held, 2 more start, the rest wait on the namespace',
      'a/next',
      [...holders('a', 10, 3), stops('a/next', 0, 4)],
      { granted: 2, waitsOn: 'namespace' },
    ],
    [
      'a namespace over its share since another arrived starts no more',
      'a/next',
      [...holders('a', 8, 4), stops('a/next', 0, 1), stops('b/web', 0, 3)],
      { granted: 0, waitsOn: 'namespace' },
    ],
    [
      'the namespace that arrived while another held half the node starts its stops',
      'b/web',
      [...holders('a', 8, 4), stops('a/next', 0, 1), stops('b/web', 0, 3)],
      { granted: 3 },
    ],
    [
      'a full node: a fourth namespace waits on the node while three hold every slot',
      'd/web',
      [...holders('a', 8, 4), ...holders('b', 5, 4), ...holders('c', 3, 4), stops('d/web', 0, 1)],
      { granted: 0, waitsOn: 'node' },
    ],
    [
      'a pod with nothing waiting is granted nothing, and waits on nothing',
      'a/web',
      [stops('a/web', 2, 0)],
      { granted: 0 },
    ],
    ['a pod the node does not list is granted nothing', 'a/gone', [stops('a/web', 1, 1)], { granted: 0 }],
  ])('%s', (_, pod, node, expected) => {
    expect(grantSlots(pod, node)).toEqual(expected);
  });

  it('a node bound below a pod bound holds', () => {
    const limits = { node: 1, pod: 4 };
    expect(grantSlots('b/web', [stops('a/web', 1, 0), stops('b/web', 0, 2)], limits)).toEqual({
      granted: 0,
      waitsOn: 'node',
    });
  });
});

describe('namespaceShare', () => {
  it.each([
    [1, 32],
    [2, 21],
    [3, 16],
    [15, 4],
    [40, 4],
  ])('with %i namespaces holding or waiting, each may hold %i', (namespaces, share) => {
    expect(namespaceShare(namespaces)).toBe(share);
  });
});

// ------------------------------------------------------------------------------------- properties

/** Limits where a namespace alone leaves room for another's pod: the node at least twice a pod's bound. */
const limitsArb: fc.Arbitrary<SlotLimits> = fc
  .record({ pod: fc.integer({ min: 1, max: 8 }), extra: fc.integer({ min: 0, max: 120 }) })
  .map(({ pod, extra }) => ({ pod, node: 2 * pod + extra }));

/** Pods across a few namespaces, each asking for 1–70 stops. */
const podsArb = fc.array(
  fc.record({ namespace: fc.constantFrom('a', 'b', 'c', 'd', 'e'), waiting: fc.integer({ min: 1, max: 70 }) }),
  { minLength: 1, maxLength: 30 },
);

type Step = { readonly kind: 'reconcile' | 'end'; readonly pod: number };
const stepsArb = fc.array(
  fc.record({ kind: fc.constantFrom<Step['kind']>('reconcile', 'reconcile', 'end'), pod: fc.nat() }),
  { maxLength: 200 },
);

/** The node as the actuator sees it, driven by reconciles (start what is granted) and ends of stops. */
class SimulatedNode {
  readonly pods: PodStops[];
  constructor(
    asked: ReadonlyArray<{ namespace: string; waiting: number }>,
    readonly limits: SlotLimits,
  ) {
    this.pods = asked.map((p, i) => stops(`${p.namespace}/p${i}`, 0, p.waiting));
  }
  reconcile(i: number): number {
    const pod = this.pods[i];
    if (pod === undefined) return 0;
    const { granted } = grantSlots(pod.pod, this.pods, this.limits);
    this.pods[i] = { ...pod, held: pod.held + granted, waiting: pod.waiting - granted };
    return granted;
  }
  /** A pod that asks for `waiting` stops now; its index. */
  arrive(namespace: string, waiting: number): number {
    return this.pods.push(stops(`${namespace}/p${this.pods.length}`, 0, waiting)) - 1;
  }
  end(i: number): void {
    const pod = this.pods[i];
    if (pod !== undefined && pod.held > 0) this.pods[i] = { ...pod, held: pod.held - 1 };
  }
  held(namespace?: string): number {
    return this.pods
      .filter((p) => namespace === undefined || p.namespace === namespace)
      .reduce((n, p) => n + p.held, 0);
  }
}

describe('grantSlots properties', () => {
  it('whatever reconciles and ends of stops come in whatever order, no pod, namespace or node holds past its bound', () => {
    fc.assert(
      fc.property(podsArb, stepsArb, limitsArb, (asked, steps, limits) => {
        const node = new SimulatedNode(asked, limits);
        for (const step of steps) {
          const i = step.pod % asked.length;
          if (step.kind === 'reconcile') node.reconcile(i);
          else node.end(i);
          expect(node.pods.every((p) => p.held <= limits.pod && p.waiting >= 0)).toBe(true);
          expect(node.held()).toBeLessThanOrEqual(limits.node);
          for (const ns of new Set(node.pods.map((p) => p.namespace)))
            expect(node.held(ns)).toBeLessThanOrEqual(namespaceShare(1, limits));
        }
      }),
    );
  });

  it("one namespace's stops, all hanging, however many pods hold them, never keep another namespace's pod from a slot", () => {
    fc.assert(
      fc.property(podsArb, fc.array(fc.nat(), { maxLength: 200 }), limitsArb, (asked, order, limits) => {
        const node = new SimulatedNode(
          asked.map((p) => ({ ...p, namespace: 'hang' })),
          limits,
        );
        for (const i of order) node.reconcile(i % asked.length);
        expect(node.reconcile(node.arrive('other', limits.pod))).toBe(limits.pod);
      }),
    );
  });

  it('a pod past a bound waits and is granted its stops as others end: every stop starts within as many rounds as stops asked for', () => {
    fc.assert(
      fc.property(podsArb, limitsArb, (asked, limits) => {
        const node = new SimulatedNode(asked, limits);
        const total = asked.reduce((n, p) => n + p.waiting, 0);
        let rounds = 0;
        while (node.pods.some((p) => p.waiting > 0) && rounds < total) {
          node.pods.forEach((_, i) => node.reconcile(i));
          node.pods.forEach((p, i) => {
            for (let k = p.held; k > 0; k--) node.end(i);
          });
          rounds++;
        }
        expect(node.pods.filter((p) => p.waiting > 0)).toEqual([]);
      }),
    );
  });
});

it('the default limits are the node 64 and a pod 4', () => {
  expect(DEFAULT_SLOT_LIMITS).toEqual({ node: 64, pod: 4 });
});
