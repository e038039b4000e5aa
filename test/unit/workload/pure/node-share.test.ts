// A rolling update shares its disruption budget out over the nodes (budget.ts nodeShares; decision
// 61): no node has more of the CloneSet's pods out of service at once than its share of
// maxUnavailable, ⌈maxUnavailable × its pods ÷ all scheduled pods⌉ (at least 1), while the whole
// stays within the one budget. On one node nothing changes.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { disruptionBudget, nodeShares } from '../../../../src/workload/pure/budget.js';
import { countsAsAvailable, type PodSummary } from '../../../../src/workload/pure/pod-state.js';
import { planUpdate, type RolloutInput } from '../../../../src/workload/pure/update.js';
import { resolveRolloutLimits } from '../../../../src/workload/pure/limits.js';
import { planReconcile } from '../../../../src/workload/pure/planner.js';
import { summarizePod } from '../../../../src/workload/pure/pod-summary.js';
import type { Plan } from '../../../../src/workload/pure/round-plan.js';
import type { Pod } from '../../../../src/api/wire.js';
import {
  NEW as NEW_REV,
  NOW,
  OLD as OLD_REV,
  cloneSet,
  disruptedAvailable,
  intentsOf,
  pod,
  revisionTemplates,
  type Change,
  type CloneSetSpec,
  type PodSpec as FixturePod,
} from '../../../support/fixtures/planner-fixtures.js';

const OLD = 'rev-old';
const NEW = 'rev-new';

interface PodSpec {
  readonly node: number;
  readonly updated: boolean;
  readonly available: boolean;
}

function podsOf(specs: readonly PodSpec[]): PodSummary[] {
  return specs.map((p, i) => ({
    name: `p${i}`,
    revision: p.updated ? NEW : OLD,
    nodeName: `node-${p.node}`,
    phase: 'Running',
    ready: p.available,
    available: p.available,
    readySince: p.available ? 1_000 : undefined,
    createdAt: 1_000 * (i + 1),
  }));
}

const inputOf = (pods: PodSummary[], maxUnavailable: number | string): RolloutInput => ({
  replicas: pods.length,
  maxUnavailable,
  currentRevision: OLD,
  updateRevision: NEW,
  pods,
});

const nodeOf = (pods: readonly PodSummary[], name: string): string => pods.find((p) => p.name === name)?.nodeName ?? '';

describe('a rolling update over several nodes', () => {
  it.each([
    {
      name: '6 pods, 2 per node on 3 nodes, maxUnavailable 3: one pod per node',
      nodes: [0, 0, 1, 1, 2, 2],
      max: 3,
      perNode: [1, 1, 1],
    },
    {
      name: '6 pods, 2 per node on 3 nodes, maxUnavailable 2: two nodes, one pod each',
      nodes: [0, 0, 1, 1, 2, 2],
      max: 2,
      perNode: [1, 1, 0],
    },
    {
      name: '6 pods, 2 per node on 3 nodes, maxUnavailable 4: a share of ⌈4 × 2 ÷ 6⌉ = 2 per node',
      nodes: [0, 0, 1, 1, 2, 2],
      max: 4,
      perNode: [2, 2, 0],
    },
    {
      name: '6 pods, 2 per node on 3 nodes, maxUnavailable 6: every pod',
      nodes: [0, 0, 1, 1, 2, 2],
      max: 6,
      perNode: [2, 2, 2],
    },
    {
      name: '6 pods, 4 on one node and 1 on two others, maxUnavailable 2: the big node may lose 2, the small ones 1',
      nodes: [0, 0, 0, 0, 1, 2],
      max: 2,
      perNode: [1, 1, 0],
    },
    {
      name: 'all 4 pods on one node, maxUnavailable 2: the budget alone decides',
      nodes: [0, 0, 0, 0],
      max: 2,
      perNode: [2],
    },
  ])('$name', ({ nodes, max, perNode }) => {
    // Which node goes first is the update order's (newest first here); the counts are the rule's.
    const pods = podsOf(nodes.map((node) => ({ node, updated: false, available: true })));
    const chosen = planUpdate(inputOf(pods, max)).toUpdate;
    const counted = [...new Set(nodes)].map(
      (node) => chosen.filter((name) => nodeOf(pods, name) === `node-${node}`).length,
    );
    expect(counted.sort((a, b) => b - a)).toEqual(perNode);
  });

  it('a node whose pods are all out of service (lost, drained) leaves the other nodes their shares', () => {
    const pods = podsOf([
      { node: 0, updated: false, available: false },
      { node: 0, updated: false, available: false },
      { node: 1, updated: false, available: true },
      { node: 1, updated: false, available: true },
      { node: 2, updated: false, available: true },
      { node: 2, updated: false, available: true },
    ]);
    // Budget: 4 available − (6 − 3) = 1; the lost node's pods cost nothing and go first.
    const chosen = planUpdate(inputOf(pods, 3)).toUpdate;
    const nodes = chosen.map((name) => nodeOf(pods, name));
    expect(nodes.filter((n) => n === 'node-0')).toHaveLength(2);
    expect(nodes.filter((n) => n !== 'node-0')).toHaveLength(1);
  });

  it('never takes more available pods from a node than its share left, nor more than the budget, whatever the pods', () => {
    const pod = fc.record({ node: fc.nat({ max: 3 }), updated: fc.boolean(), available: fc.boolean() });
    fc.assert(
      fc.property(fc.array(pod, { minLength: 1, maxLength: 24 }), fc.nat({ max: 100 }), (specs, percent) => {
        const pods = podsOf(specs);
        const input = inputOf(pods, `${percent}%`);
        const chosen = new Set(planUpdate(input).toUpdate);
        const takenAvailable = pods.filter((p) => chosen.has(p.name) && countsAsAvailable(p));
        const { maxUnavailable } = resolveRolloutLimits(input);
        const budget = { replicas: pods.length, maxUnavailable, pods };
        expect(takenAvailable.length).toBeLessThanOrEqual(disruptionBudget(budget));
        for (const [node, left] of nodeShares(budget)) {
          expect(takenAvailable.filter((p) => p.nodeName === node).length).toBeLessThanOrEqual(left);
        }
      }),
    );
  });
});

// Issue 47: the node share applies to every path that takes pods out of service, in allocate
// itself: resize recreates and scale-down too, not only the rolling update.
describe('every path that takes pods out of service keeps to the node shares', () => {
  const onNodes = (nodes: readonly string[], s: Omit<FixturePod, 'name' | 'node'> = {}): FixturePod[] =>
    nodes.map((node, i) => ({ name: `p${i}`, node, ...s }));
  const planOn = (spec: CloneSetSpec, pods: FixturePod[]): { plan: Plan; objects: Pod[] } => {
    const templates = revisionTemplates(spec.change ?? 'image');
    const objects = pods.map((p) => pod(p, templates));
    const plan = planReconcile({
      cloneSet: cloneSet(spec),
      pods: objects,
      revisions: { updateRevision: NEW_REV, currentRevision: OLD_REV, templates },
      now: NOW,
      resizeBackend: 'kubelet',
      nodeEvidence: new Map(),
    });
    return { plan, objects };
  };
  const deletedPerNode = (plan: Plan, objects: readonly Pod[]): Map<string, number> => {
    const nodeOfPod = new Map(objects.map((o) => [o.metadata?.name, o.spec?.nodeName ?? '']));
    const per = new Map<string, number>();
    for (const d of intentsOf(plan, 'delete')) {
      const node = nodeOfPod.get(d.pod.metadata?.name) ?? '';
      per.set(node, (per.get(node) ?? 0) + 1);
    }
    return per;
  };

  it('recreates Infeasible pods of one node only up to its share (2 of its 4 with maxUnavailable 3 over 6 pods)', () => {
    const nodes = ['a', 'a', 'a', 'a', 'b', 'b'];
    const pods = onNodes(nodes, { revision: NEW_REV }).map((p, i) =>
      i < 4 ? { ...p, resize: 'Infeasible' as const } : p,
    );
    const { plan, objects } = planOn({ replicas: 6, maxUnavailable: 3, change: 'cpu' }, pods);
    // Node a holds 4 of 6 pods: its share is ⌈3 × 4 / 6⌉ = 2, though the budget (3) would allow 3.
    expect(deletedPerNode(plan, objects).get('a')).toBe(2);
  });

  it('deletes specified pods of one node only up to its share, the rest in later rounds', () => {
    const nodes = ['a', 'a', 'a', 'a', 'b', 'b'];
    const { plan, objects } = planOn(
      { replicas: 6, maxUnavailable: 3, podsToDelete: ['p0', 'p1', 'p2', 'p3'] },
      onNodes(nodes, { revision: NEW_REV }),
    );
    expect(deletedPerNode(plan, objects).get('a')).toBe(2);
  });

  it('scales down without taking more ready pods of a node than its share', () => {
    const nodes = ['a', 'a', 'a', 'a', 'b', 'b'];
    const { plan, objects } = planOn({ replicas: 2, maxUnavailable: 3 }, onNodes(nodes, { revision: NEW_REV }));
    for (const [, count] of deletedPerNode(plan, objects)) expect(count).toBeLessThanOrEqual(2);
  });

  it('for any pods over nodes: no node loses more available pods in one round than its share', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 2, maxLength: 9 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 511 }),
        fc.constantFrom<Change>('image', 'cpu'),
        (nodes, maxUnavailable, infeasibleMask, change) => {
          const pods = onNodes(nodes, { revision: change === 'cpu' ? NEW_REV : OLD_REV }).map((p, i) =>
            change === 'cpu' && (infeasibleMask >> i) & 1 ? { ...p, resize: 'Infeasible' as const } : p,
          );
          const { plan, objects } = planOn({ replicas: nodes.length, maxUnavailable, change }, pods);
          const shares = nodeShares({
            replicas: nodes.length,
            maxUnavailable,
            pods: objects.map((o) => summarizePod(o, { minReadySeconds: 0, now: NOW })),
          });
          const disrupted = new Set(disruptedAvailable(plan, objects));
          for (const [node, share] of shares) {
            const lost = objects.filter(
              (o) => o.spec?.nodeName === node && disrupted.has(o.metadata?.name ?? ''),
            ).length;
            expect(lost).toBeLessThanOrEqual(share);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
