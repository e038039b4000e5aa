import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { MAX_NAMED_SUBJECTS, summaryDueAt, summaryMessage } from '../../../../src/runtime/pure/event-batch.js';

describe('when a batch of routine news is summarized', () => {
  it.each([
    // the earlier of quiet after the last news and the longest time open
    { openedAt: 0, lastNewsAt: 0, quietMs: 10_000, maxMs: 300_000, due: 10_000 },
    { openedAt: 0, lastNewsAt: 25_000, quietMs: 10_000, maxMs: 300_000, due: 35_000 },
    { openedAt: 0, lastNewsAt: 295_000, quietMs: 10_000, maxMs: 300_000, due: 300_000 },
    { openedAt: 1_000, lastNewsAt: 1_000, quietMs: 60_000, maxMs: 30_000, due: 31_000 },
  ])('opened at $openedAt, news last at $lastNewsAt, quiet $quietMs, max $maxMs: due at $due', (row) => {
    expect(summaryDueAt(row, row)).toBe(row.due);
  });

  it('is never later than the longest time open, nor than quiet after the last news, and never before either bound can be met', () => {
    fc.assert(
      fc.property(
        fc.nat(1e9),
        fc.nat(1e6),
        fc.integer({ min: 1, max: 1e6 }),
        fc.integer({ min: 1, max: 1e7 }),
        (openedAt, since, quietMs, maxMs) => {
          const batch = { openedAt, lastNewsAt: openedAt + since };
          const due = summaryDueAt(batch, { quietMs, maxMs });
          expect(due).toBeLessThanOrEqual(openedAt + maxMs);
          expect(due).toBeLessThanOrEqual(batch.lastNewsAt + quietMs);
          expect([openedAt + maxMs, batch.lastNewsAt + quietMs]).toContain(due);
        },
      ),
    );
  });
});

describe('the summary of a batch', () => {
  it.each([
    [[], undefined],
    [['b'], 'updated: 1 pod: b'],
    [['b', 'c', 'd'], 'updated: 3 pods: b, c, d'],
  ])('for later pods %j says %j', (later, message) => {
    expect(summaryMessage('updated', later)).toBe(message);
  });

  it('names at most a bounded number of pods and counts the rest', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), { minLength: 1, maxLength: 200 }),
        (later) => {
          const message = summaryMessage('updated', later) ?? '';
          expect(message.startsWith(`updated: ${later.length} pod`)).toBe(true);
          const named = later.slice(0, MAX_NAMED_SUBJECTS);
          expect(message).toContain(named.join(', '));
          if (later.length > MAX_NAMED_SUBJECTS)
            expect(message.endsWith(` and ${later.length - MAX_NAMED_SUBJECTS} more`)).toBe(true);
        },
      ),
    );
  });
});
