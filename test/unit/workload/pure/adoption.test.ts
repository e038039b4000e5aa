// Adoption of orphans: a workload adopts the live pods of its namespace that no controller owns,
// that its selector matches and that its kind counts as members; nothing while it is being
// deleted. A round that adopts does only that: the pods count from the next round on, so nothing
// is created beside them. The cache keeps an orphan's labels, bounded, for the selector to read.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { adoptable } from '../../../../src/workload/pure/adoption.js';
import { ORPHAN_LABELS_MAX_CHARS, trimPod } from '../../../../src/workload/pure/pod-cache.js';
import { planReconcile } from '../../../../src/workload/pure/planner.js';
import type { Pod } from '../../../../src/api/wire.js';
import {
  NEW,
  NOW,
  OLD,
  cloneSet,
  intentsOf,
  pod,
  revisionTemplates,
} from '../../../support/fixtures/planner-fixtures.js';

const orphan = (
  name: string,
  extra: { labels?: Record<string, string>; phase?: string; deleting?: boolean } = {},
): Pod => {
  const p = pod({ name });
  const { ownerReferences: _owned, ...metadata } = p.metadata ?? {};
  return {
    ...p,
    metadata: {
      ...metadata,
      labels: extra.labels ?? metadata.labels ?? {},
      ...(extra.deleting ? { deletionTimestamp: '2026-03-01T11:00:00Z' } : {}),
    },
    status: { ...p.status, ...(extra.phase ? { phase: extra.phase } : {}) },
  };
};
const workload = cloneSet({ replicas: 2 });
const names = (pods: readonly Pod[]): string[] => pods.map((p) => p.metadata?.name ?? '');

describe('adoptable', () => {
  it.each([
    ['a live orphan the selector matches', orphan('a'), ['a']],
    ['an orphan the selector does not match', orphan('a', { labels: { app: 'other' } }), []],
    ['an orphan without labels', orphan('a', { labels: {} }), []],
    ['a terminating orphan', orphan('a', { deleting: true }), []],
    ['a Succeeded orphan', orphan('a', { phase: 'Succeeded' }), []],
    ['a Failed orphan', orphan('a', { phase: 'Failed' }), []],
  ])('%s', (_what, candidate, adopted) => {
    expect(names(adoptable([candidate], workload))).toEqual(adopted);
  });

  it('adopts nothing while the workload is being deleted', () => {
    const deleting = { ...workload, metadata: { ...workload.metadata, deletionTimestamp: '2026-03-01T11:00:00Z' } };
    expect(adoptable([orphan('a')], deleting)).toEqual([]);
  });

  it('adopts only the pods the kind counts as members', () => {
    const isMember = (p: Pod): boolean => p.metadata?.name === 'web-0';
    expect(names(adoptable([orphan('web-0'), orphan('other-0')], workload, isMember))).toEqual(['web-0']);
  });

  it('never adopts a pod the selector does not match, whatever its labels (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('app', 'tier', 'x'), fc.constantFrom('web', 'db', '')), (labels) => {
        const adopted = adoptable([orphan('a', { labels })], workload).length === 1;
        expect(adopted).toBe(labels['app'] === 'web');
      }),
    );
  });
});

describe('a round with orphans to adopt', () => {
  const templates = revisionTemplates('image');
  const input = {
    cloneSet: cloneSet({ replicas: 3 }),
    pods: [pod({ name: 'p0' }, templates)],
    orphans: [orphan('p1')],
    revisions: { updateRevision: NEW, currentRevision: OLD, templates },
    now: NOW,
    resizeBackend: 'kubelet' as const,
    nodeEvidence: new Map(),
  };

  it('adopts them and creates nothing beside them, though replicas are short', () => {
    const plan = planReconcile(input);
    expect(names(intentsOf(plan, 'adopt').map((i) => i.pod))).toEqual(['p1']);
    expect(intentsOf(plan, 'create')).toEqual([]);
  });

  it('scales as usual once none is left to adopt', () => {
    const plan = planReconcile({ ...input, orphans: [orphan('p1', { labels: { app: 'other' } })] });
    expect(intentsOf(plan, 'adopt')).toEqual([]);
    expect(intentsOf(plan, 'create')).toHaveLength(2);
  });
});

describe("the cache's orphans", () => {
  it('keep their identity, phase and labels', () => {
    const kept = trimPod(orphan('a'));
    expect(kept.metadata?.labels).toEqual(orphan('a').metadata?.labels);
    expect(kept.status).toEqual({ phase: 'Running' });
    expect(kept.spec).toBeUndefined();
  });

  it(`keep no labels past ${ORPHAN_LABELS_MAX_CHARS} characters, so they are never adopted`, () => {
    const big = orphan('a', { labels: { app: 'web', note: 'x'.repeat(ORPHAN_LABELS_MAX_CHARS) } });
    const kept = trimPod(big);
    expect(kept.metadata?.labels).toBeUndefined();
    expect(adoptable([kept], workload)).toEqual([]);
  });

  it('keep only their identity when another controller owns them', () => {
    const owned = orphan('a');
    owned.metadata!.ownerReferences = [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true },
    ];
    expect(trimPod(owned).metadata?.labels).toBeUndefined();
  });
});
