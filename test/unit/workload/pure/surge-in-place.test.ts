// maxSurge with in-place updates (decision 72): whole rollouts played round by round through the
// planner, with a small model of the API server and the kubelet in between (deletes finish,
// created pods start Ready, drained pods restart their containers on the new image, resizes are
// actuated). Properties: no surge pod replaces an old pod that can be updated in place, the pod
// count never exceeds replicas + maxSurge, every old pod keeps its UID, also when a new template
// arrives mid-rollout (V1 → V2 → V3); and a change in place cannot make stays within the surge.

import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_CONTROLLER_REVISION_HASH } from '../../../../src/api/types.js';
import type { Pod, PodTemplate } from '../../../../src/api/wire.js';
import type { Plan } from '../../../../src/workload/pure/round-plan.js';
import { planReconcile } from '../../../../src/workload/pure/planner.js';
import { resolveRolloutLimits } from '../../../../src/workload/pure/limits.js';
import { NOW, TEMPLATES, cloneSet, pod } from '../../../support/fixtures/planner-fixtures.js';

const V1 = 'web-v1';
const V2 = 'web-v2';
const V3 = 'web-v3';

type Change = 'image' | 'cpu' | 'env';

/** V1 is the fixtures' old template; V2 and V3 each make `change` again (a new image, more cpu, new env). */
function templatesFor(change: Change): Map<string, PodTemplate> {
  const step = (from: PodTemplate, n: number): PodTemplate => {
    const t = structuredClone(from);
    const c = t.spec!.containers[0]!;
    if (change === 'image') c.image = `busybox:v${n}`;
    if (change === 'cpu')
      c.resources = { requests: { cpu: `${n}00m`, memory: '64Mi' }, limits: { cpu: `${n}00m`, memory: '64Mi' } };
    if (change === 'env') c.env = [{ name: 'MODE', value: `v${n}` }];
    return t;
  };
  const v2 = step(TEMPLATES.old, 2);
  return new Map([
    [V1, TEMPLATES.old],
    [V2, v2],
    [V3, step(v2, 3)],
  ]);
}

interface Rollout {
  replicas: number;
  maxUnavailable: number | string;
  maxSurge: number | string;
  change: Change;
  /** The round at which the template moves on to V3; undefined: V2 is the last. */
  v3At?: number;
}

interface Outcome {
  peak: number;
  /** UIDs of the first pods still there at the end. */
  kept: string[];
  final: Pod[];
  converged: boolean;
}

const condition = (p: Pod, type: string) => p.status!.conditions!.find((c) => c.type === type)!;
const revisionOf = (p: Pod): string => p.metadata!.labels![LABEL_CONTROLLER_REVISION_HASH]!;
const gateFalse = (p: Pod): boolean => condition(p, CONDITION_INPLACE_UPDATE_READY).status === 'False';

/** The API server and the kubelet after one round's writes, in the order they settle. */
function world(
  pods: Pod[],
  plan: Plan,
  templates: ReadonlyMap<string, PodTemplate>,
  created: { n: number; at: number },
): Pod[] {
  const byName = new Map(pods.map((p) => [p.metadata!.name!, structuredClone(p)]));
  for (const intent of plan.intents) {
    if (intent.kind === 'create') {
      const name = `surge-${created.n++}`;
      const fresh = pod({ name, revision: intent.revision }, templates);
      fresh.metadata!.creationTimestamp = new Date(created.at).toISOString();
      byName.set(name, fresh);
      continue;
    }
    const p = byName.get(intent.pod.metadata!.name!);
    if (!p) continue;
    switch (intent.kind) {
      case 'delete':
        byName.delete(p.metadata!.name!);
        break;
      case 'drain':
        condition(p, CONDITION_INPLACE_UPDATE_READY).status = 'False';
        condition(p, 'Ready').status = 'False';
        break;
      case 'patch': {
        const meta = intent.step.patch.metadata as {
          labels: Record<string, string>;
          annotations: Record<string, string>;
        };
        p.metadata!.labels = { ...p.metadata!.labels, ...meta.labels };
        p.metadata!.annotations = { ...p.metadata!.annotations, ...meta.annotations };
        // The kubelet: the container runs the target template (restarted on a new image), Ready again.
        const target = templates.get(revisionOf(p))!.spec!.containers[0]!;
        const container = p.spec!.containers[0]!;
        const status = p.status!.containerStatuses![0]!;
        if (container.image !== target.image) status.restartCount = (status.restartCount ?? 0) + 1;
        p.spec!.containers[0] = { ...container, image: target.image, resources: target.resources };
        Object.assign(status, { image: target.image, imageID: `sha256:${target.image}`, resources: target.resources });
        condition(p, 'Ready').status = 'True';
        break;
      }
      case 'settle':
      case 'markGateReady':
        condition(p, CONDITION_INPLACE_UPDATE_READY).status = 'True';
        condition(p, 'Ready').status = 'True';
        break;
      default:
        break;
    }
  }
  return [...byName.values()];
}

function play(r: Rollout): Outcome {
  const templates = templatesFor(r.change);
  let pods = Array.from({ length: r.replicas }, (_, i) => pod({ name: `p${i}`, revision: V1 }, templates));
  const firstUids = pods.map((p) => p.metadata!.uid!);
  const created = { n: 0, at: NOW };
  let peak = pods.length;
  let converged = false;
  for (let round = 0; round < 300 && !converged; round++) {
    const updateRevision = r.v3At !== undefined && round >= r.v3At ? V3 : V2;
    const cs = cloneSet({ replicas: r.replicas, maxUnavailable: r.maxUnavailable, maxSurge: r.maxSurge });
    cs.spec.template = templates.get(updateRevision)!;
    const plan = planReconcile({
      cloneSet: cs,
      pods,
      revisions: { updateRevision, currentRevision: V1, templates },
      now: NOW + round * 1000,
      resizeBackend: 'kubelet',
      nodeEvidence: new Map(),
    });
    // Created pods exist before the round's deletes finish: the peak counts both.
    peak = Math.max(peak, pods.length + plan.intents.filter((i) => i.kind === 'create').length);
    created.at = NOW + round * 1000;
    pods = world(pods, plan, templates, created);
    const finalRevision = r.v3At !== undefined ? V3 : V2;
    converged =
      round > (r.v3At ?? 0) &&
      pods.length === r.replicas &&
      pods.every((p) => revisionOf(p) === finalRevision && !gateFalse(p));
  }
  const uids = new Set(pods.map((p) => p.metadata!.uid!));
  return { peak, kept: firstUids.filter((u) => uids.has(u)), final: pods, converged };
}

const surgeOf = (r: Rollout): number =>
  resolveRolloutLimits({ replicas: r.replicas, maxUnavailable: r.maxUnavailable, maxSurge: r.maxSurge }).maxSurge;

describe('maxSurge with in-place updates (decision 72)', () => {
  const cases: { name: string; rollout: Rollout; peak: number }[] = [
    {
      name: 'the issue: 5 pods, maxUnavailable 1, maxSurge 3, a new image: no surge pod, all 5 kept',
      rollout: { replicas: 5, maxUnavailable: 1, maxSurge: 3, change: 'image' },
      peak: 5,
    },
    {
      name: 'the issue: a second template 3 rounds in (V1 → V2 → V3): no surge pod, all 5 kept',
      rollout: { replicas: 5, maxUnavailable: 1, maxSurge: 3, change: 'image', v3At: 3 },
      peak: 5,
    },
    {
      name: "a Deployment's maxSurge 25% with maxUnavailable 25% on 8 pods: updated two at a time, no surge pod",
      rollout: { replicas: 8, maxUnavailable: '25%', maxSurge: '25%', change: 'image' },
      peak: 8,
    },
    {
      name: 'maxUnavailable 0 and maxSurge 1: one surge pod holds capacity, and it is what leaves at the end',
      rollout: { replicas: 5, maxUnavailable: 0, maxSurge: 1, change: 'image' },
      peak: 6,
    },
    {
      name: 'maxUnavailable 0 and maxSurge 2 across V1 → V2 → V3: never more than 7 pods, all 5 kept',
      rollout: { replicas: 5, maxUnavailable: 0, maxSurge: 2, change: 'image', v3At: 4 },
      peak: 7,
    },
    {
      name: 'maxUnavailable 0% and maxSurge 3 on 4 pods, V3 while pods are drained for V2: all 4 kept',
      rollout: { replicas: 4, maxUnavailable: '0%', maxSurge: 3, change: 'image', v3At: 6 },
      peak: 7,
    },
    {
      name: 'a resize (cpu) with maxUnavailable 1 and maxSurge 2: no surge pod, all kept',
      rollout: { replicas: 4, maxUnavailable: 1, maxSurge: 2, change: 'cpu' },
      peak: 4,
    },
  ];
  it.each(cases)('$name', ({ rollout, peak }) => {
    const outcome = play(rollout);
    expect(outcome.converged).toBe(true);
    expect(outcome.peak).toBe(peak);
    expect(outcome.kept).toHaveLength(rollout.replicas);
  });

  it('a change that cannot be made in place (env) may use the surge as a ReCreate rollout does', () => {
    const rollout: Rollout = { replicas: 5, maxUnavailable: 1, maxSurge: 3, change: 'env' };
    const outcome = play(rollout);
    expect(outcome.converged).toBe(true);
    expect(outcome.peak).toBeGreaterThan(5);
    expect(outcome.peak).toBeLessThanOrEqual(8);
  });

  it('for any in-place rollout, with or without a new template mid-way: every pod kept, never above replicas + maxSurge', () => {
    fc.assert(
      fc.property(
        fc.record({
          replicas: fc.integer({ min: 1, max: 8 }),
          maxUnavailable: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('0%', '20%', '50%')),
          maxSurge: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constantFrom('25%', '50%')),
          change: fc.constantFrom<Change>('image', 'cpu'),
          v3At: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
        }),
        (rollout) => {
          const outcome = play(rollout);
          expect(outcome.converged).toBe(true);
          expect(outcome.kept).toHaveLength(rollout.replicas);
          expect(outcome.peak).toBeLessThanOrEqual(rollout.replicas + surgeOf(rollout));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('for any rollout, in place or not: never above replicas + maxSurge', () => {
    fc.assert(
      fc.property(
        fc.record({
          replicas: fc.integer({ min: 1, max: 6 }),
          maxUnavailable: fc.integer({ min: 0, max: 2 }),
          maxSurge: fc.integer({ min: 1, max: 3 }),
          change: fc.constantFrom<Change>('image', 'cpu', 'env'),
          v3At: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        }),
        (rollout) => {
          const outcome = play(rollout);
          expect(outcome.converged).toBe(true);
          expect(outcome.peak).toBeLessThanOrEqual(rollout.replicas + surgeOf(rollout));
        },
      ),
      { numRuns: 100 },
    );
  });
});
