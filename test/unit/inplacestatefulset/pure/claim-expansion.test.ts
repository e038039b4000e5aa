// Claims that follow their template's storage under volumeClaimUpdateStrategy InPlace (decision
// 98): which claims a round raises (only pods on the update revision, never lower, never a claim
// being deleted, nothing under OnClaimDelete) and status.volumeClaims' counts, as Advanced
// StatefulSet reports them.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { claimResizes, volumeClaimsStatus } from '../../../../src/inplacestatefulset/pure/claim-expansion.js';
import type { WireCloneSet } from '../../../../src/api/wire.js';
import type { Claim } from '../../../../src/workload/pure/claims.js';
import type { PodSummary } from '../../../../src/workload/pure/pod-state.js';
import { parseQuantity, toBytes } from '../../../../src/api/quantity.js';

const pod = (ordinal: number, revision: string, extra: Partial<PodSummary> = {}): PodSummary => ({
  name: `web-${ordinal}`,
  revision,
  nodeName: 'n1',
  phase: 'Running',
  ready: true,
  available: true,
  ...extra,
});

const claim = (name: string, requested: string, capacity?: string, deleting = false): Claim => ({
  metadata: { name, ...(deleting ? { deletionTimestamp: '2026-11-28T00:00:00Z' } : {}) },
  spec: { resources: { requests: { storage: requested } } },
  ...(capacity ? { status: { capacity: { storage: capacity } } } : {}),
});

const set = (storage: Record<string, string>, strategy?: 'InPlace' | 'OnClaimDelete'): WireCloneSet => ({
  metadata: { name: 'web' },
  spec: {
    replicas: 3,
    selector: {},
    template: {},
    volumeClaimTemplates: Object.entries(storage).map(([name, s]) => ({
      metadata: { name },
      spec: { resources: { requests: { storage: s } } },
    })),
    ...(strategy ? { volumeClaimUpdateStrategy: { type: strategy } } : {}),
  },
});

const raised = (view: WireCloneSet, pods: PodSummary[], claims: Claim[]): string[] =>
  claimResizes(view, pods, claims, 'v2').map((r) => `${r.claim.metadata?.name}=${r.storage}`);

describe('claimResizes', () => {
  it.each<[string, WireCloneSet, PodSummary[], Claim[], string[]]>([
    [
      'InPlace raises the claims of pods on the update revision',
      set({ data: '2Gi' }, 'InPlace'),
      [pod(0, 'v2'), pod(1, 'v2')],
      [claim('data-web-0', '1Gi'), claim('data-web-1', '1Gi')],
      ['data-web-0=2Gi', 'data-web-1=2Gi'],
    ],
    [
      'a partition holds the claims of the pods it holds',
      set({ data: '2Gi' }, 'InPlace'),
      [pod(0, 'v1'), pod(1, 'v1'), pod(2, 'v2')],
      [claim('data-web-0', '1Gi'), claim('data-web-1', '1Gi'), claim('data-web-2', '1Gi')],
      ['data-web-2=2Gi'],
    ],
    [
      'OnClaimDelete (the default) leaves every claim as it is',
      set({ data: '2Gi' }),
      [pod(0, 'v2')],
      [claim('data-web-0', '1Gi')],
      [],
    ],
    [
      'a claim already at or above the template is never lowered (a rollback of the size)',
      set({ data: '1Gi' }, 'InPlace'),
      [pod(0, 'v2'), pod(1, 'v2')],
      [claim('data-web-0', '2Gi'), claim('data-web-1', '1024Mi')],
      [],
    ],
    [
      'quantities compare by value, not by text',
      set({ data: '1.5Gi' }, 'InPlace'),
      [pod(0, 'v2')],
      [claim('data-web-0', '1536Mi')],
      [],
    ],
    [
      'only the templates that grew, each claim by its own template',
      set({ data: '2Gi', logs: '1Gi' }, 'InPlace'),
      [pod(0, 'v2')],
      [claim('data-web-0', '1Gi'), claim('logs-web-0', '1Gi')],
      ['data-web-0=2Gi'],
    ],
    [
      'a claim being deleted, a missing claim, a terminating or ended pod: nothing',
      set({ data: '2Gi' }, 'InPlace'),
      [pod(0, 'v2'), pod(1, 'v2'), pod(2, 'v2', { terminating: true }), pod(3, 'v2', { phase: 'Failed' })],
      [claim('data-web-0', '1Gi', undefined, true), claim('data-web-2', '1Gi'), claim('data-web-3', '1Gi')],
      [],
    ],
    [
      "another set's claim of a similar name is not the pod's",
      set({ data: '2Gi' }, 'InPlace'),
      [pod(1, 'v2')],
      [claim('data-web-10', '1Gi'), claim('data-webx-1', '1Gi')],
      [],
    ],
  ])('%s', (...[, view, pods, claims, expected]) => {
    expect(raised(view, pods, claims)).toEqual(expected);
  });

  const sizes = fc.constantFrom('512Mi', '1Gi', '1024Mi', '1.5Gi', '2Gi', '3G', '4Gi');
  const bytes = (q: string): bigint => toBytes(parseQuantity(q));

  it('raises exactly the live claims of updated, active pods that request less than their template, to it', () => {
    fc.assert(
      fc.property(
        sizes,
        fc.array(fc.record({ updated: fc.boolean(), requested: sizes, active: fc.boolean() }), { maxLength: 8 }),
        (template, members) => {
          const pods = members.map((m, i) => pod(i, m.updated ? 'v2' : 'v1', m.active ? {} : { terminating: true }));
          const claims = members.map((m, i) => claim(`data-web-${i}`, m.requested));
          const resizes = claimResizes(set({ data: template }, 'InPlace'), pods, claims, 'v2');
          const expected = members.flatMap((m, i) =>
            m.updated && m.active && bytes(m.requested) < bytes(template) ? [`data-web-${i}`] : [],
          );
          expect(resizes.map((r) => r.claim.metadata?.name)).toEqual(expected);
          for (const r of resizes) expect(r.storage).toBe(template);
        },
      ),
    );
  });
});

describe('volumeClaimsStatus', () => {
  it.each<[string, PodSummary[], Claim[], number, number]>([
    [
      'all claims resized and grown',
      [pod(0, 'v2'), pod(1, 'v2')],
      [claim('data-web-0', '2Gi', '2Gi'), claim('data-web-1', '2Gi', '2Gi')],
      2,
      2,
    ],
    [
      'requested but not yet grown',
      [pod(0, 'v2'), pod(1, 'v2')],
      [claim('data-web-0', '2Gi', '1Gi'), claim('data-web-1', '1Gi', '1Gi')],
      1,
      0,
    ],
    ['a larger claim is compatible', [pod(0, 'v1')], [claim('data-web-0', '3Gi', '3Gi')], 1, 1],
    [
      'a pod without its claim, or an ended pod, does not count',
      [pod(0, 'v2'), pod(1, 'v2', { phase: 'Succeeded' })],
      [claim('data-web-1', '2Gi', '2Gi')],
      0,
      0,
    ],
  ])('%s: compatible %i, ready %i', (...[, pods, claims, compatibleReplicas, compatibleReadyReplicas]) => {
    expect(volumeClaimsStatus(set({ data: '2Gi' }), pods, claims)).toEqual([
      { volumeClaimName: 'data', compatibleReplicas, compatibleReadyReplicas },
    ]);
  });

  it('is empty when no template requests storage', () => {
    expect(volumeClaimsStatus(set({}), [pod(0, 'v1')], [])).toEqual([]);
  });
});
