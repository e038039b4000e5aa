// Issue 20.2: one CloneSet cannot stall or exhaust the controller. A round creates at most the
// ReplicaSet controller's burst, whatever `replicas` says; instance ids never collide however
// many pods exist; podsToDelete is read as a set.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CREATES_PER_ROUND, planReconcile } from '../../../../src/workload/pure/planner.js';
import { NON_DISRUPTIVE_MOVES_PER_ROUND } from '../../../../src/workload/pure/pod-update.js';
import { newInstanceIds, newPod } from '../../../../src/workload/pure/pods.js';
import { LABEL_INSTANCE_ID } from '../../../../src/api/types.js';
import {
  NEW,
  NOW,
  OLD,
  cloneSet,
  intentsOf,
  pod,
  revisionTemplates,
  type PodSpec,
} from '../../../support/fixtures/planner-fixtures.js';

const planFor = (replicas: number, pods: PodSpec[], podsToDelete?: string[], change: 'image' | 'cpu' = 'image') =>
  planReconcile({
    cloneSet: cloneSet({ replicas, maxUnavailable: 1, change, ...(podsToDelete ? { podsToDelete } : {}) }),
    pods: pods.map((p) => pod(p, revisionTemplates(change))),
    revisions: { updateRevision: NEW, currentRevision: OLD, templates: revisionTemplates(change) },
    now: NOW,
    resizeBackend: 'kubelet',
    nodeEvidence: new Map(),
  });

describe('a round is bounded whatever the CloneSet asks for', () => {
  it.each([
    [3, 3],
    [CREATES_PER_ROUND, CREATES_PER_ROUND],
    [CREATES_PER_ROUND + 1, CREATES_PER_ROUND],
    [1_000_000, CREATES_PER_ROUND],
  ])('replicas %i from none plans %i creates', (replicas, creates) => {
    expect(intentsOf(planFor(replicas, []), 'create')).toHaveLength(creates);
  });

  // maxUnavailable 1: the budget's one pick, plus at most NON_DISRUPTIVE_MOVES_PER_ROUND outside it.
  it.each([
    [3, 3],
    [NON_DISRUPTIVE_MOVES_PER_ROUND + 1, NON_DISRUPTIVE_MOVES_PER_ROUND + 1],
    [1000, NON_DISRUPTIVE_MOVES_PER_ROUND + 1],
  ])('%i pods needing a resize that restarts nothing: %i patched this round', (replicas, patched) => {
    const pods = Array.from({ length: replicas }, (_, i) => ({ name: `p${i}` }));
    expect(intentsOf(planFor(replicas, pods, undefined, 'cpu'), 'patch')).toHaveLength(patched);
  });

  it('a new pod takes no instance id of a pod the CloneSet has, terminating ones included', () => {
    const plan = planFor(4, [
      { name: 'web-bbbbb', labels: { [LABEL_INSTANCE_ID]: 'bbbbb' } },
      { name: 'web-ccccc', labels: { [LABEL_INSTANCE_ID]: 'ccccc' }, terminating: true },
    ]);
    expect([...plan.instanceIdsInUse].sort()).toEqual(['bbbbb', 'ccccc']);
  });

  it('100,000 podsToDelete names against 3,000 pods are read as a set (each pod is looked up once)', () => {
    const pods = Array.from({ length: 3000 }, (_, i) => ({ name: `p${i}`, revision: NEW }));
    const named = Array.from({ length: 100_000 }, (_, i) => `gone-${i}`).concat('p7');
    const deletes = intentsOf(planFor(3000, pods, named), 'delete');
    expect(deletes.map((d) => d.pod.metadata?.name)).toEqual(['p7']);
  });
});

describe('instance ids', () => {
  it('100,000 ids drawn for one CloneSet are all distinct', () => {
    const ids = newInstanceIds(100_000, new Set(), (n) => crypto.getRandomValues(new Uint8Array(n)));
    expect(new Set(ids).size).toBe(100_000);
    expect(ids.every((id) => /^[bcdfghjklmnpqrstvwxz2456789]{5}$/.test(id))).toBe(true);
  });

  it('never returns an id in use or a repeat, even from a random source that repeats itself (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 5, maxLength: 5 }), { minLength: 1, maxLength: 20 }),
        fc.nat({ max: 15 }),
        (draws, count) => {
          // A source that cycles through few draws, then falls back to a counter so it cannot loop forever.
          let i = 0;
          const random = (n: number): Uint8Array =>
            i < draws.length * 3
              ? draws[i++ % draws.length]!
              : Uint8Array.from({ length: n }, (_, k) => (i++ >> (k * 5)) & 0xff);
          const inUse = new Set(newInstanceIds(3, new Set(), random));
          const ids = newInstanceIds(count, inUse, random);
          expect(ids).toHaveLength(count);
          expect(new Set(ids).size).toBe(count);
          expect(ids.some((id) => inUse.has(id))).toBe(false);
        },
      ),
    );
  });
});

describe('a pod built from a template', () => {
  // Issue 20.13: a CloneSet stored before the CRD refused them must not hand Tailor's annotations to its pods.
  it("carries the template's annotations except Tailor's own", () => {
    const cs = cloneSet({ replicas: 1 });
    const template = {
      metadata: {
        labels: { app: 'web' },
        annotations: {
          note: 'kept',
          'apps.tailor.dev/resize-request': '{"forged":true}',
          'apps.tailor.dev/inplace-update-state': '{}',
        },
      },
      spec: { containers: [{ name: 'app', image: 'a' }] },
    };
    expect(newPod(cs, 'web-rev', template, 'bcdfg').metadata?.annotations).toEqual({ note: 'kept' });
  });

  // Issue 31.5: a template's lifecycle state label would mark every pod PreparingDelete at once.
  it("starts every pod in PreparingNormal whatever lifecycle label the template holds, keeping the template's other labels", () => {
    const cs = cloneSet({ replicas: 1 });
    const template = {
      metadata: {
        labels: {
          app: 'web',
          'lifecycle.apps.tailor.dev/state': 'PreparingDelete',
          'apps.tailor.dev/specified-delete': 'true',
        },
        annotations: { 'lifecycle.apps.tailor.dev/timestamp': '2026-01-01T00:00:00Z' },
      },
      spec: { containers: [{ name: 'app', image: 'a' }] },
    };
    const pod = newPod(cs, 'web-rev', template, 'bcdfg');
    expect(pod.metadata?.labels).toEqual({
      app: 'web',
      'controller-revision-hash': 'web-rev',
      'apps.tailor.dev/instance-id': 'bcdfg',
      'lifecycle.apps.tailor.dev/state': 'PreparingNormal',
    });
    expect(pod.metadata?.annotations).toEqual({});
  });
});
