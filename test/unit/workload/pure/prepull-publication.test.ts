import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { nextPublication, revisionsToPrePull } from '../../../../src/workload/pure/prepull-publication.js';
import type { RevisionRef } from '../../../../src/api/prepull-revisions.js';
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
  const ownedByA = (r: RevisionRef): boolean => r.name.startsWith('a');
  const keys = (next: RevisionRef[] | 'unchanged'): string[] | 'unchanged' =>
    next === 'unchanged' ? next : next.map((r) => `${r.namespace}/${r.name}`);

  it.each<[string, string[], string[], string[] | 'unchanged']>([
    ['nothing wanted, nothing published: unchanged', [], [], 'unchanged'],
    [
      'its own entries already exactly what it wants, in another order: unchanged',
      ['n/a1', 'n/a2'],
      ['n/a2', 'n/a1'],
      'unchanged',
    ],
    ["only another controller's entries differ: unchanged", ['n/a1'], ['n/a1', 'n/b1', 'n/b2'], 'unchanged'],
    ['a new own entry: added first, the others kept', ['n/a1'], ['n/b1'], ['n/a1', 'n/b1']],
    ['an own entry no longer wanted: removed, the others kept', [], ['n/a1', 'n/b1'], ['n/b1']],
    ['its last entry gone and no other: an empty list (the annotation is removed)', [], ['n/a1'], []],
    ['an entry both name: once', ['n/a1', 'n/b1'], ['n/b1'], ['n/a1', 'n/b1']],
  ])('%s', (_name, wanted, published, expected) => {
    expect(keys(nextPublication(refs(...wanted), refs(...published), ownedByA))).toEqual(expected);
  });

  it('two controllers taking turns on one node settle: each writes only when its own part changes, and the list holds both', () => {
    const entry = fc.constantFrom('n/a1', 'n/a2', 'n/a3', 'm/a1', 'n/b1', 'n/b2', 'm/b3');
    fc.assert(
      fc.property(fc.uniqueArray(entry), fc.uniqueArray(entry), fc.uniqueArray(entry), (wa, wb, start) => {
        const wantedA = refs(...wa.filter((k) => k.includes('/a')));
        const wantedB = refs(...wb.filter((k) => k.includes('/b')));
        const ownedByB = (r: RevisionRef): boolean => r.name.startsWith('b');
        let published = refs(...start);
        let writes = 0;
        // Each publishes on every change it sees, as the publisher's node handler wakes it.
        for (let turn = 0; turn < 6; turn++) {
          const [wanted, isOwn] = turn % 2 === 0 ? [wantedA, ownedByA] : [wantedB, ownedByB];
          const next = nextPublication(wanted, published, isOwn);
          if (next !== 'unchanged') {
            published = next;
            writes++;
          }
        }
        expect(writes).toBeLessThanOrEqual(2);
        const own = (isOwn: (r: RevisionRef) => boolean): string[] =>
          published
            .filter(isOwn)
            .map((r) => `${r.namespace}/${r.name}`)
            .sort();
        expect(own(ownedByA)).toEqual(wantedA.map((r) => `${r.namespace}/${r.name}`).sort());
        expect(own(ownedByB)).toEqual(wantedB.map((r) => `${r.namespace}/${r.name}`).sort());
      }),
    );
  });
});
