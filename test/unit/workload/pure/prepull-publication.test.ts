import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { nextPublication, revisionsToPrePull } from '../../../../src/workload/pure/prepull-publication.js';
import { revisionRefKey as keyOf, type RevisionRef } from '../../../../src/api/prepull-revisions.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../../../src/api/types.js';
import type { Pod } from '../../../../src/api/wire.js';
import { buildPod } from '../../../support/fixtures/pods.js';

/** A pod of workload `owner` on revision `rev`. */
const pod = (owner: string, rev: string, extra: Partial<Parameters<typeof buildPod>[0]> = {}): Pod =>
  buildPod({ name: `${owner}-${rev}`, labels: { [LABEL_CONTROLLER_REVISION_HASH]: rev, owner }, ...extra });
const UPDATE: Record<string, string> = { web: 'web-2', db: 'db-1' };
const updateRevisionOf = (p: Pod): string | undefined => UPDATE[p.metadata?.labels?.owner ?? ''];
const named = (pods: Pod[]): string[] =>
  revisionsToPrePull(pods, updateRevisionOf).map((r) => `${r.namespace}/${r.name}`);

describe('revisionsToPrePull: the update revisions the pods of a node have not reached', () => {
  it.each<[string, Pod[], string[]]>([
    ['no pod: none', [], []],
    ['a pod on an older revision: its workload update revision', [pod('web', 'web-1')], ['ns/web-2']],
    ['pods all on their update revisions: none', [pod('web', 'web-2'), pod('db', 'db-1')], []],
    [
      'two pods of one workload behind: its update revision once',
      [pod('web', 'web-1'), pod('web', 'web-0')],
      ['ns/web-2'],
    ],
    ['a finished pod behind: none', [pod('web', 'web-1', { phase: 'Failed' })], []],
    [
      'a deleted pod behind: none',
      [pod('web', 'web-1', { metadata: { deletionTimestamp: '2026-11-28T00:00:00Z' } })],
      [],
    ],
    ['a pod whose workload is unknown: none', [pod('gone', 'gone-1')], []],
    [
      'workloads of two namespaces: each in its own, in name order',
      [pod('web', 'web-1', { namespace: 'b' }), pod('web', 'web-1', { namespace: 'a' })],
      ['a/web-2', 'b/web-2'],
    ],
  ])('%s', (_name, pods, expected) => {
    expect(named(pods)).toEqual(expected);
  });

  it('names only update revisions that some live pod of the node does not run, each once', () => {
    const arbitraryPod = fc
      .record({
        owner: fc.constantFrom('web', 'db', 'gone'),
        rev: fc.constantFrom('web-1', 'web-2', 'db-1', 'db-0', 'gone-1'),
        namespace: fc.constantFrom('a', 'b'),
        ended: fc.boolean(),
      })
      .map(({ owner, rev, namespace, ended }) =>
        pod(owner, rev, { namespace, ...(ended ? { phase: 'Succeeded' } : {}) }),
      );
    fc.assert(
      fc.property(fc.array(arbitraryPod, { maxLength: 12 }), (pods) => {
        const refs = named(pods);
        expect(new Set(refs).size).toBe(refs.length);
        const behind = pods.filter((p) => p.status?.phase !== 'Succeeded' && updateRevisionOf(p) !== undefined);
        const expected = new Set(
          behind
            .filter((p) => updateRevisionOf(p) !== p.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH])
            .map((p) => `${p.metadata?.namespace}/${updateRevisionOf(p)}`),
        );
        expect(new Set(refs)).toEqual(expected);
      }),
    );
  });
});

describe('nextPublication: a controller replaces its own entries on a node and keeps every other', () => {
  const ref = (key: string): RevisionRef => ({ namespace: key.split('/')[0] ?? '', name: key.split('/')[1] ?? '' });
  const refs = (...keys: string[]): RevisionRef[] => keys.map(ref);
  const ownedBy =
    (prefix: string) =>
    (r: RevisionRef): boolean =>
      r.name.startsWith(prefix);
  const keys = (next: RevisionRef[] | 'unchanged'): string[] | 'unchanged' =>
    next === 'unchanged' ? next : next.map(keyOf);

  it.each<[string, string[], string[], string[] | 'unchanged']>([
    ['nothing wanted, nothing published: unchanged', [], [], 'unchanged'],
    [
      'its own entries already exactly what it wants, in another order: unchanged',
      ['n/a1', 'n/a2'],
      ['n/a2', 'n/a1'],
      'unchanged',
    ],
    ["only another controller's entries differ: unchanged", ['n/a1'], ['n/a1', 'n/b1', 'n/b2'], 'unchanged'],
    ['a new own entry: added, the others kept, in name order', ['n/a1'], ['n/0'], ['n/0', 'n/a1']],
    ['an own entry no longer wanted: removed, the others kept', [], ['n/a1', 'n/b1'], ['n/b1']],
    ['its last entry gone and no other: an empty list (the annotation is removed)', [], ['n/a1'], []],
    ['an entry both name: once', ['n/a1', 'n/b1'], ['n/b1'], ['n/a1', 'n/b1']],
    ['an entry it wants but does not claim, already there: unchanged', ['n/a1', 'n/b1'], ['n/a1', 'n/b1'], 'unchanged'],
  ])('%s', (_name, wanted, published, expected) => {
    expect(keys(nextPublication(refs(...wanted), refs(...published), ownedBy('a')))).toEqual(expected);
  });

  it('cuts the union at the bound in name order: the entries past it wait, and a cut it agrees with is no reason to write', () => {
    expect(keys(nextPublication(refs('n/a1', 'n/a3'), refs('n/b2'), ownedBy('a'), 2))).toEqual(['n/a1', 'n/a3']);
    expect(nextPublication(refs('n/b2'), refs('n/a1', 'n/a3'), ownedBy('b'), 2)).toBe('unchanged');
  });

  it('two controllers taking turns on one node settle within three writes, at any bound, each with what survives the cut', () => {
    const pool = (prefix: string): fc.Arbitrary<string[]> =>
      fc.uniqueArray(fc.constantFrom(...[1, 2, 3, 4, 5, 6].map((i) => `n/${prefix}${i}`)));
    fc.assert(
      fc.property(
        pool('a'),
        pool('b'),
        fc.uniqueArray(fc.constantFrom('n/a1', 'n/a7', 'n/b2', 'n/b7', 'n/c1', 'n/c9')),
        fc.integer({ min: 1, max: 10 }),
        (wa, wb, start, bound) => {
          const sides = [
            { wanted: refs(...wa), isOwn: ownedBy('a') },
            { wanted: refs(...wb), isOwn: ownedBy('b') },
          ];
          // The start is a list some publisher wrote: in name order, within the bound (the reader
          // cuts any longer one). A list nobody needs to change stays as it is.
          let published = refs(...[...start].sort().slice(0, bound));
          const writes: number[] = [];
          // Each publishes on every change it sees, as the publisher's node handler wakes it.
          for (let turn = 0; turn < 8; turn++) {
            const side = sides[turn % 2] as (typeof sides)[number];
            const next = nextPublication(side.wanted, published, side.isOwn, bound);
            if (next !== 'unchanged') {
              published = next;
              writes.push(turn);
            }
          }
          expect(writes.length).toBeLessThanOrEqual(3);
          expect(writes.every((turn) => turn < 6)).toBe(true);
          const final = published.map(keyOf);
          expect(final.length).toBeLessThanOrEqual(bound);
          expect([...final].sort()).toEqual(final);
          for (const side of sides) {
            // Nothing of its own it does not want; what it wants is there, or past a full list's end.
            expect(published.filter((r) => side.isOwn(r) && !side.wanted.some((w) => keyOf(w) === keyOf(r)))).toEqual(
              [],
            );
            for (const w of side.wanted.map(keyOf)) {
              if (!final.includes(w)) expect(final.length === bound && w > (final.at(-1) ?? '')).toBe(true);
            }
          }
        },
      ),
    );
  });
});
