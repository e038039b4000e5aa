import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { revisionsToPrePull } from '../../../../src/workload/pure/prepull-publication.js';
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
