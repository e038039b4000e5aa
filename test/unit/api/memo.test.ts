import { describe, expect, it } from '@jest/globals';
import { perObject } from '../../../src/api/memo.js';
import { ANNOTATION_INPLACE_UPDATE_STATE } from '../../../src/api/types.js';
import { parseInPlaceUpdateState } from '../../../src/api/schemas.js';

describe('perObject', () => {
  it('computes a view once per object and anew for another object, undefined included', () => {
    const computed: object[] = [];
    const view = perObject((o: { n: number }) => {
      computed.push(o);
      return o.n > 0 ? o.n * 2 : undefined;
    });
    const a = { n: 1 };
    const zero = { n: 0 };
    expect([view(a), view(a), view({ n: 1 }), view(zero), view(zero)]).toEqual([2, 2, 2, undefined, undefined]);
    expect(computed).toHaveLength(3);
  });
});

describe('annotation parsing per record', () => {
  const state = (revision: string): string => JSON.stringify({ revision, updateTimestamp: '2026-11-24T00:00:00Z' });

  it('reads a record written after its first read as it is now, not as it was', () => {
    const annotations: Record<string, string> = { [ANNOTATION_INPLACE_UPDATE_STATE]: state('r1') };
    expect(parseInPlaceUpdateState(annotations)).toMatchObject({ ok: true, value: { revision: 'r1' } });
    annotations[ANNOTATION_INPLACE_UPDATE_STATE] = state('r2');
    expect(parseInPlaceUpdateState(annotations)).toMatchObject({ ok: true, value: { revision: 'r2' } });
  });
});
