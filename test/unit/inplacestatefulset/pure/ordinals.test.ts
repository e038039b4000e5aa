// The ordinals an InPlaceStatefulSet wants and reads back from pod names: tables of the native and
// Advanced StatefulSet cases, and properties over any start, size and reserved set.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ordinalOf, reservedRanges, wantedOrdinals } from '../../../../src/inplacestatefulset/pure/ordinals.js';

describe('wanted ordinals', () => {
  it.each([
    { case: 'native: 0..replicas-1', start: 0, replicas: 3, reserve: [], wanted: [0, 1, 2] },
    { case: 'ordinals.start shifts them', start: 5, replicas: 3, reserve: [], wanted: [5, 6, 7] },
    { case: 'a reserved ordinal is skipped, the size kept', start: 0, replicas: 3, reserve: [1], wanted: [0, 2, 3] },
    { case: 'a reserved range is skipped', start: 0, replicas: 3, reserve: ['1-3'], wanted: [0, 4, 5] },
    { case: 'reserved below start changes nothing', start: 4, replicas: 2, reserve: [1, '2-3'], wanted: [4, 5] },
    { case: 'overlapping reservations', start: 0, replicas: 2, reserve: ['0-2', 1, '2-4'], wanted: [5, 6] },
    { case: 'zero replicas', start: 0, replicas: 0, reserve: [1], wanted: [] },
    {
      case: 'a huge reserved range costs nothing',
      start: 0,
      replicas: 2,
      reserve: ['1-2000000000'],
      wanted: [0, 2000000001],
    },
  ])('$case', ({ start, replicas, reserve, wanted }) => {
    expect(wantedOrdinals(start, replicas, reservedRanges(reserve))).toEqual(wanted);
  });

  it('malformed reservations are ignored (the CRD refuses them)', () => {
    expect(reservedRanges(['3-1', 'a', -1, 1.5, '2'])).toEqual([[2, 2]]);
  });

  it('always wants exactly replicas ordinals, ascending, none reserved, none below start', () => {
    fc.assert(
      fc.property(
        fc.nat(50),
        fc.nat(40),
        fc.array(
          fc.oneof(
            fc.nat(80),
            fc.tuple(fc.nat(80), fc.nat(10)).map(([a, n]) => `${a}-${a + n}`),
          ),
          {
            maxLength: 8,
          },
        ),
        (start, replicas, reserve) => {
          const ranges = reservedRanges(reserve);
          const wanted = wantedOrdinals(start, replicas, ranges);
          expect(wanted).toHaveLength(replicas);
          for (const [i, o] of wanted.entries()) {
            expect(o).toBeGreaterThanOrEqual(start);
            if (i > 0) expect(o).toBeGreaterThan(wanted[i - 1]!);
            expect(ranges.some(([a, b]) => a <= o && o <= b)).toBe(false);
          }
        },
      ),
    );
  });
});

describe('the ordinal in a pod name', () => {
  it.each([
    ['db-0', 'db', 0],
    ['db-12', 'db', 12],
    ['db-x', 'db', undefined],
    ['db-01', 'db', undefined],
    ['dbx-1', 'db', undefined],
    ['db-1-2', 'db', undefined],
    ['db-1-2', 'db-1', 2],
    ['other-1', 'db', undefined],
  ])('%s of set %s reads %s', (name, set, ordinal) => {
    expect(ordinalOf(name, set)).toBe(ordinal);
  });
});
