// persistentVolumeClaimRetentionPolicy as the InPlaceStatefulSet keeps it: under whenDeleted Delete
// its claims name the set as an owner (the garbage collector deletes them with it), under
// whenScaled Delete a scale-down deletes a removed pod's claims, and Retain keeps both; the engine
// puts the owner on, or takes it off, existing claims each round (claim-owners.ts); a pending pod
// the scheduler cannot place gets its missing claims made again.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { claimOwnerOf, scaleDownClaimsOf } from '../../../../src/inplacestatefulset/pure/retention.js';
import { retainedClaim } from '../../../../src/inplacestatefulset/pure/identity.js';
import {
  claimOwnerWrites,
  podsMissingClaims,
  withScaleDownClaims,
} from '../../../../src/workload/pure/claim-owners.js';
import type { Claim } from '../../../../src/workload/pure/claims.js';
import type { DefaultedWireCloneSet } from '../../../../src/workload/pure/pods.js';
import type { Pod } from '../../../../src/api/wire.js';

type Policy = 'Retain' | 'Delete' | undefined;
const set = (whenDeleted: Policy, whenScaled: Policy): DefaultedWireCloneSet =>
  ({
    apiVersion: 'apps.tailor.dev/v1alpha1',
    kind: 'InPlaceStatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'set-uid' },
    spec: {
      persistentVolumeClaimRetentionPolicy: {
        ...(whenDeleted ? { whenDeleted } : {}),
        ...(whenScaled ? { whenScaled } : {}),
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' } }, { metadata: { name: 'logs' } }],
    },
  }) as unknown as DefaultedWireCloneSet;
const pod = (ordinal: string): Pod => ({
  metadata: { name: `web-${ordinal}`, labels: { 'apps.tailor.dev/instance-id': ordinal } },
});
const claim = (name: string, owners: string[] = [], deleting = false): Claim => ({
  metadata: {
    name,
    namespace: 'ns',
    uid: `${name}-uid`,
    ownerReferences: owners.map((uid) => ({ apiVersion: 'x/v1', kind: 'X', name: 'x', uid })),
    ...(deleting ? { deletionTimestamp: '2026-11-28T00:00:00Z' } : {}),
  },
});
const identity = { claimOwner: claimOwnerOf, scaleDownClaims: scaleDownClaimsOf };

describe('claimOwnerOf and retainedClaim', () => {
  it.each<[string, Policy, boolean]>([
    ['whenDeleted Delete: claims owned by the set', 'Delete', true],
    ['whenDeleted Retain: claims of no owner', 'Retain', false],
    ['no policy (Retain): claims of no owner', undefined, false],
  ])('%s', (_what, whenDeleted, owned) => {
    const owner = claimOwnerOf(set(whenDeleted, undefined));
    expect(owner !== undefined).toBe(owned);
    const made = retainedClaim(claim('data-web-0', ['someone-else']), set(whenDeleted, undefined));
    expect(made.metadata?.ownerReferences?.map((o) => o.uid) ?? []).toEqual(owned ? ['set-uid'] : []);
    expect(made.metadata?.labels?.['apps.tailor.dev/inplacestatefulset']).toBe('web');
  });

  it('names the set without claiming to be its controller, and blocks its deletion until the claim is gone', () => {
    expect(claimOwnerOf(set('Delete', undefined))).toEqual({
      apiVersion: 'apps.tailor.dev/v1alpha1',
      kind: 'InPlaceStatefulSet',
      name: 'web',
      uid: 'set-uid',
      blockOwnerDeletion: true,
    });
  });
});

describe('scaleDownClaimsOf', () => {
  it.each<[string, Policy, string[]]>([
    ['whenScaled Delete: every template of the ordinal', 'Delete', ['data-web-6', 'logs-web-6']],
    ['whenScaled Retain: none', 'Retain', []],
    ['no policy: none', undefined, []],
  ])('%s', (_what, whenScaled, names) => {
    expect(scaleDownClaimsOf(pod('6'), set(undefined, whenScaled))).toEqual(names);
  });

  it('adds them to what goes with each scaled-down pod, keeping what was there', () => {
    const plan = {
      reuseIds: [],
      claimIds: new Set<string>(),
      heldCreates: 0,
      deleteWithPod: new Map([['web-2', ['data-web-2']]]),
      deleteNow: [],
    };
    const out = withScaleDownClaims(plan, [pod('2'), pod('1')], set(undefined, 'Delete'), identity);
    expect([...out.deleteWithPod]).toEqual([
      ['web-2', ['data-web-2', 'logs-web-2']],
      ['web-1', ['data-web-1', 'logs-web-1']],
    ]);
    expect([...plan.deleteWithPod]).toEqual([['web-2', ['data-web-2']]]);
  });
});

describe('claimOwnerWrites', () => {
  it('puts the set on the claims that lack it under Delete, and takes it off under Retain; leaves claims being deleted', () => {
    const claims = [claim('a'), claim('b', ['set-uid']), claim('c', ['other']), claim('d', [], true)];
    const names = (ws: ReturnType<typeof claimOwnerWrites>): [string, boolean][] =>
      ws.map((w) => [w.claim.metadata?.name ?? '', w.owner !== undefined]);
    expect(names(claimOwnerWrites(claims, set('Delete', undefined), identity))).toEqual([
      ['a', true],
      ['c', true],
    ]);
    expect(names(claimOwnerWrites(claims, set('Retain', undefined), identity))).toEqual([['b', false]]);
  });

  it('a claim written as asked needs no write the next round (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Policy>('Retain', 'Delete', undefined),
        fc.array(fc.boolean(), { maxLength: 6 }),
        (policy, owned) => {
          const s = set(policy, undefined);
          const claims = owned.map((o, i) => claim(`c${i}`, o ? ['set-uid'] : []));
          const after = claims.map((c) => {
            const w = claimOwnerWrites([c], s, identity)[0];
            if (!w) return c;
            const others = (c.metadata?.ownerReferences ?? []).filter((r) => r.uid !== 'set-uid');
            return { ...c, metadata: { ...c.metadata, ownerReferences: w.owner ? [...others, w.owner] : others } };
          });
          expect(claimOwnerWrites(after, s, identity)).toEqual([]);
        },
      ),
    );
  });
});

describe('podsMissingClaims', () => {
  const pending = (
    ordinal: string,
    scheduled: 'True' | 'False' | undefined,
    extra: Partial<Pod['metadata']> = {},
  ): Pod => ({
    metadata: { ...pod(ordinal).metadata, ...extra },
    status: {
      phase: 'Pending',
      ...(scheduled ? { conditions: [{ type: 'PodScheduled', status: scheduled }] } : {}),
    },
  });
  const names = (pods: Pod[]): string[] => pods.map((p) => p.metadata?.name ?? '');

  it.each<[string, Pod[], Claim[], string[]]>([
    ['an unschedulable pending pod without its claims', [pending('0', 'False')], [], ['web-0']],
    ['one of its two claims missing is enough', [pending('0', 'False')], [claim('data-web-0')], ['web-0']],
    ['both claims there: nothing', [pending('0', 'False')], [claim('data-web-0'), claim('logs-web-0')], []],
    [
      'a claim being deleted counts as there',
      [pending('0', 'False')],
      [claim('data-web-0', [], true), claim('logs-web-0')],
      [],
    ],
    ['a pod not yet seen by the scheduler: nothing (its claims may be in flight)', [pending('0', undefined)], [], []],
    ['a scheduled pod: nothing', [pending('0', 'True')], [], []],
    ['a running pod: nothing', [{ ...pod('0'), status: { phase: 'Running' } }], [], []],
    ['a terminating pod: nothing', [pending('0', 'False', { deletionTimestamp: '2026-11-28T00:00:00Z' })], [], []],
    [
      "another pod's claims do not count",
      [pending('1', 'False')],
      [claim('data-web-0'), claim('logs-web-0')],
      ['web-1'],
    ],
  ])('%s', (...[, pods, claims, expected]) => {
    expect(names(podsMissingClaims(pods, claims, set('Retain', 'Retain')))).toEqual(expected);
  });

  it('is empty for a set without claim templates', () => {
    const bare = { ...set('Retain', 'Retain'), spec: {} } as unknown as DefaultedWireCloneSet;
    expect(podsMissingClaims([pending('0', 'False')], [], bare)).toEqual([]);
  });
});
