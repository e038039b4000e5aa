// Which revisions' templates one round holds (src/workload/pure/round-templates.ts, decision 81): the
// reviewer's cases of issue 47 item 3 (100 revisions of a 1.37 MB template, one pod each, paused;
// ended pods whose revisions stayed "in use"), the cap, the character bound, what a first plan
// asked for, and a property over any pods, revisions and sizes: a round stays within the cap and
// the bound, and an ended pod never pulls a revision in.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ANNOTATION_INPLACE_UPDATE_STATE, LABEL_CONTROLLER_REVISION_HASH } from '../../../../src/api/types.js';
import type { Pod } from '../../../../src/api/wire.js';
import {
  REVISIONS_IN_USE_CAP,
  ROUND_TEMPLATE_CHARS,
  TEMPLATE_CACHE_CHARS,
  UNKNOWN_TEMPLATE_CHARS,
  revisionsInUseCondition,
  roundTemplateChars,
  roundTemplates,
  type RoundTemplatesInput,
} from '../../../../src/workload/pure/round-templates.js';

const MB137 = 1_370_000;
const CURRENT = 'web-current';
const UPDATE = 'web-update';

type Phase = 'Running' | 'Pending' | 'Succeeded' | 'Failed';
const podOn = (revision: string, i: number, phase: Phase = 'Running', midUpdate = false): Pod => ({
  metadata: {
    name: `web-${i}`,
    labels: { [LABEL_CONTROLLER_REVISION_HASH]: revision },
    ...(midUpdate ? { annotations: { [ANNOTATION_INPLACE_UPDATE_STATE]: '{}' } } : {}),
  },
  status: { phase },
});
const rev = (i: number): string => `web-r${i}`;

/** Every revision named here is known, of `chars` characters (the update's too). */
const input = (pods: Pod[], extra: Partial<RoundTemplatesInput> = {}, chars = MB137): RoundTemplatesInput => ({
  currentRevision: CURRENT,
  updateRevision: UPDATE,
  pods,
  charsOf: () => chars,
  ...extra,
});

const heldChars = (hold: readonly string[], charsOf: (r: string) => number | undefined): number =>
  hold.reduce((sum, r) => sum + (charsOf(r) ?? UNKNOWN_TEMPLATE_CHARS), 0);

describe('the templates a round holds', () => {
  it('bounds a round below the cache, so what one round fetched is there for the next', () => {
    expect(ROUND_TEMPLATE_CHARS * 4).toBeLessThanOrEqual(TEMPLATE_CACHE_CHARS);
    // The cap's templates of 1.37 MB fit in the bound with the current one; of etcd's largest (1.5 MiB), ten do.
    expect((REVISIONS_IN_USE_CAP + 1) * MB137).toBeLessThanOrEqual(ROUND_TEMPLATE_CHARS);
    expect(10 * 1.5 * 1024 * 1024).toBeLessThanOrEqual(ROUND_TEMPLATE_CHARS);
  });

  it('splits the cache between the rounds of any number of workers (--workers), so together they never hold more than it keeps', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 512 }), (workers) => {
        expect(roundTemplateChars(workers) * Math.max(1, workers)).toBeLessThanOrEqual(TEMPLATE_CACHE_CHARS);
        expect(roundTemplateChars(workers)).toBeGreaterThan(0);
      }),
    );
    expect(roundTemplateChars(4)).toBe(ROUND_TEMPLATE_CHARS);
  });

  it("the reviewer's case: 100 paused pods on 100 revisions of 1.37 MB hold the current template only, not 137 MB", () => {
    const pods = Array.from({ length: 100 }, (_, i) => podOn(rev(i), i));
    const round = roundTemplates(input(pods));
    expect(round.hold).toEqual([CURRENT]);
    expect(round.inUse).toBe(100);
    expect(round.deferred.size).toBe(100);
    expect(heldChars(round.hold, () => MB137)).toBe(MB137);
    expect(revisionsInUseCondition(round.inUse)).toMatchObject({ status: 'True', reason: 'TooManyRevisions' });
    // The next round decides the same: it fetches nothing the cache does not keep.
    expect(roundTemplates(input(pods)).hold).toEqual(round.hold);
  });

  it('past the cap, holds what the plan asked for (the pods the rollout moves next), within the cap', () => {
    const pods = Array.from({ length: 100 }, (_, i) => podOn(rev(i), i));
    const wanted = [rev(7), rev(3), rev(7), 'web-gone', ...Array.from({ length: 20 }, (_, i) => rev(50 + i))];
    const round = roundTemplates(input(pods, { wanted }));
    expect(round.hold).toEqual([CURRENT, rev(7), rev(3), ...Array.from({ length: 8 }, (_, i) => rev(50 + i))]);
    expect(round.deferred.has(rev(7))).toBe(false);
    expect(round.deferred.has(rev(58))).toBe(true);
  });

  it('past the cap, pods mid in-place update keep their templates (their next container batch)', () => {
    const pods = Array.from({ length: 30 }, (_, i) => podOn(rev(i), i, 'Running', i === 17));
    expect(roundTemplates(input(pods)).hold).toEqual([CURRENT, rev(17)]);
  });

  it('up to the cap, holds every live revision, most pods first, and defers none', () => {
    const pods = [...Array.from({ length: 10 }, (_, i) => podOn(rev(i), i)), podOn(rev(9), 10), podOn(CURRENT, 11)];
    const round = roundTemplates(input(pods));
    expect(round.hold[0]).toBe(CURRENT);
    expect(round.hold[1]).toBe(rev(9));
    expect(new Set(round.hold)).toEqual(new Set([CURRENT, ...Array.from({ length: 10 }, (_, i) => rev(i))]));
    expect(round.deferred.size).toBe(0);
    expect(revisionsInUseCondition(round.inUse)).toBeNull();
  });

  it("ended pods' revisions are not in use: 118 Succeeded or Failed pods on 118 revisions hold nothing of theirs", () => {
    const ended = Array.from({ length: 118 }, (_, i) => podOn(rev(i), i, i % 2 ? 'Succeeded' : 'Failed'));
    const round = roundTemplates(input([...ended, podOn(UPDATE, 200)]));
    expect(round).toEqual({ hold: [CURRENT], deferred: new Set(), inUse: 0 });
    expect(revisionsInUseCondition(round.inUse)).toBeNull();
  });

  it('118 Pending pods on 118 revisions of about 1 MB (the live case) are past the cap: the current template only', () => {
    const pending = Array.from({ length: 118 }, (_, i) => podOn(rev(i), i, 'Pending'));
    const round = roundTemplates(input(pending, {}, 1_000_000));
    expect(round.hold).toEqual([CURRENT]);
    expect(round.inUse).toBe(118);
  });

  it('bounds by characters: templates past the bound wait, smaller ones still fit', () => {
    const sizes = new Map([
      [CURRENT, 4],
      [rev(0), 5],
      [rev(1), 5],
      [rev(2), 2],
    ]);
    const pods = [podOn(rev(0), 0), podOn(rev(0), 1), podOn(rev(1), 2), podOn(rev(2), 3)];
    const round = roundTemplates(input(pods, { charsOf: (r) => sizes.get(r), boundChars: 11 }));
    expect(round.hold).toEqual([CURRENT, rev(0), rev(2)]);
    expect([...round.deferred]).toEqual([rev(1)]);
  });

  it('a revision the cache does not know is neither held nor deferred (its pods are of an unknown revision)', () => {
    const round = roundTemplates(input([podOn('web-gone', 0)], { charsOf: (r) => (r === 'web-gone' ? undefined : 9) }));
    expect(round).toEqual({ hold: [CURRENT], deferred: new Set(), inUse: 0 });
  });

  it('the current revision is the update revision: nothing is held besides the live pods', () => {
    expect(roundTemplates(input([podOn(rev(1), 0)], { currentRevision: UPDATE })).hold).toEqual([rev(1)]);
  });

  it('the condition says what to do, and is removed under the cap', () => {
    expect(revisionsInUseCondition(11)?.message).toMatch(/11 revisions .* more than the 10 .*unpause/);
    expect(revisionsInUseCondition(10)).toBeNull();
    expect(revisionsInUseCondition(undefined)).toBeNull();
  });

  it('for any pods over any revisions (ended or not) and sizes: within the cap and the bound; ended pods pull nothing in', () => {
    const phase = fc.constantFrom<Phase>('Running', 'Pending', 'Succeeded', 'Failed');
    fc.assert(
      fc.property(
        fc.record({
          specs: fc.array(fc.record({ revision: fc.nat(40), phase, midUpdate: fc.boolean() }), { maxLength: 150 }),
          sizes: fc.array(fc.integer({ min: 1, max: UNKNOWN_TEMPLATE_CHARS }), { minLength: 41, maxLength: 41 }),
          wantedIds: fc.array(fc.nat(45), { maxLength: 20 }),
          current: fc.nat(40),
          cap: fc.integer({ min: 0, max: 15 }),
        }),
        ({ specs, sizes, wantedIds, current, cap }) => {
          const pods = specs.map((s, i) => podOn(rev(s.revision), i, s.phase, s.midUpdate));
          // Revisions 41–45 are gone from the cache; 0–40 weigh sizes[i].
          const charsOf = (r: string): number | undefined => {
            const n = Number(r.slice('web-r'.length));
            return r === UPDATE ? 1 : n <= 40 ? sizes[n] : undefined;
          };
          const round = roundTemplates({
            currentRevision: rev(current),
            updateRevision: UPDATE,
            pods,
            charsOf,
            wanted: wantedIds.map(rev),
            cap,
          });
          expect(heldChars(round.hold, charsOf)).toBeLessThanOrEqual(ROUND_TEMPLATE_CHARS);
          expect(round.hold.filter((r) => r !== rev(current)).length).toBeLessThanOrEqual(cap);
          expect(new Set(round.hold).size).toBe(round.hold.length);
          const live = new Set(
            specs.filter((s) => s.phase !== 'Succeeded' && s.phase !== 'Failed').map((s) => rev(s.revision)),
          );
          for (const r of round.hold) expect(r === rev(current) || live.has(r)).toBe(true);
          for (const r of round.deferred) expect(live.has(r) && !round.hold.includes(r)).toBe(true);
          live.delete(rev(current));
          expect(round.inUse).toBe([...live].filter((r) => charsOf(r) !== undefined).length);
          if (round.inUse > cap) {
            // Past the cap: only the current revision, what was asked for and pods mid-update.
            const asked = new Set([rev(current), ...wantedIds.map(rev)]);
            const mid = new Set(specs.filter((s) => s.midUpdate).map((s) => rev(s.revision)));
            for (const r of round.hold) expect(asked.has(r) || mid.has(r)).toBe(true);
          } else if (heldChars([...live, rev(current)], charsOf) <= ROUND_TEMPLATE_CHARS) {
            expect(round.deferred.size).toBe(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
