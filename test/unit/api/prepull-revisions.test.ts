// The controller's word to a node agent on what to pre-pull (src/api/prepull-revisions.ts,
// decision 94): what the controller writes the agent reads back, within the bounds; one bad entry
// never voids the others; anything else reads as nothing to pre-pull.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  ANNOTATION_PREPULL_REVISIONS,
  MAX_PUBLISHED_REVISIONS,
  encodePrePullRevisions,
  parsePrePullRevisions,
  type RevisionRef,
} from '../../../src/api/prepull-revisions.js';

const read = (value: string): string[] =>
  parsePrePullRevisions({ [ANNOTATION_PREPULL_REVISIONS]: value }).map((r) => `${r.namespace}/${r.name}`);

describe('the revisions a Node is told to pre-pull', () => {
  it.each<[string, string, string[]]>([
    ['a list of references', '["ns/web-2","db/db-7c9"]', ['ns/web-2', 'db/db-7c9']],
    ['not JSON', 'ns/web-2', []],
    ['an object, not a list', '{"ns/web-2":1}', []],
    [
      'a bad entry among good ones: the others kept',
      '["ns/web-2",7,"no-slash","Ns/x","ns/","/web","ns/web-3"]',
      ['ns/web-2', 'ns/web-3'],
    ],
    ['a namespace over 63 characters: left out', `["${'n'.repeat(64)}/web-2"]`, []],
    ['a name over 253 characters: left out', `["ns/${'w'.repeat(254)}"]`, []],
  ])('%s', (_name, value, expected) => {
    expect(read(value)).toEqual(expected);
  });

  it('reads nothing from a Node without the annotation', () => {
    expect(parsePrePullRevisions(undefined)).toEqual([]);
    expect(parsePrePullRevisions({ other: '["ns/web-2"]' })).toEqual([]);
  });

  it('is not written when nothing is wanted', () => {
    expect(encodePrePullRevisions([])).toBeUndefined();
  });

  it('reads back what is written, at most the bound, and nothing a reader would refuse', () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
    const ref = fc.record({
      namespace: fc.oneof(label, fc.string({ maxLength: 70 })),
      name: fc.oneof(label, fc.string()),
    });
    fc.assert(
      fc.property(fc.array(ref, { maxLength: MAX_PUBLISHED_REVISIONS + 20 }), (refs: RevisionRef[]) => {
        const written = encodePrePullRevisions(refs);
        const back = written === undefined ? [] : read(written);
        expect(back.length).toBeLessThanOrEqual(MAX_PUBLISHED_REVISIONS);
        const readable = refs
          .map((r) => `${r.namespace}/${r.name}`)
          .filter((entry) => read(JSON.stringify([entry])).length === 1);
        expect(back).toEqual(readable.slice(0, MAX_PUBLISHED_REVISIONS));
      }),
    );
  });
});
