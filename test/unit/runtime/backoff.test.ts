import { describe, expect, test } from '@jest/globals';
import { Backoff, ItemExponentialRateLimiter } from '../../../src/runtime/backoff.js';

function delays(next: () => number, count: number): number[] {
  return Array.from({ length: count }, () => next());
}

describe('ItemExponentialRateLimiter', () => {
  test('delays for a key start at 5 ms and double with each failure', () => {
    const limiter = new ItemExponentialRateLimiter();

    expect(delays(() => limiter.when('a'), 6)).toEqual([5, 10, 20, 40, 80, 160]);
    expect(limiter.numRequeues('a')).toBe(6);
  });

  test('delays are capped at 1000 s, even after so many failures that 2^n overflows', () => {
    const limiter = new ItemExponentialRateLimiter();

    const first30 = delays(() => limiter.when('a'), 30);
    expect(first30[17]).toBe(5 * 2 ** 17); // 655.36 s, the last delay below the cap
    expect(first30[18]).toBe(1_000_000);
    expect(first30[29]).toBe(1_000_000);

    const muchLater = delays(() => limiter.when('a'), 2000);
    expect(muchLater.at(-1)).toBe(1_000_000);
  });

  test('each key backs off on its own', () => {
    const limiter = new ItemExponentialRateLimiter();
    limiter.when('a');
    limiter.when('a');

    expect(limiter.when('b')).toBe(5);
    expect(limiter.when('a')).toBe(20);
  });

  test('forget resets a key to the base delay', () => {
    const limiter = new ItemExponentialRateLimiter();
    delays(() => limiter.when('a'), 4);

    limiter.forget('a');

    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.when('a')).toBe(5);
  });

  test('base and ceiling are configurable', () => {
    const limiter = new ItemExponentialRateLimiter({ baseDelayMs: 100, maxDelayMs: 350 });

    expect(delays(() => limiter.when('a'), 4)).toEqual([100, 200, 350, 350]);
  });

  test('a negative or non-finite setting is rejected', () => {
    expect(() => new ItemExponentialRateLimiter({ baseDelayMs: -1 })).toThrow(RangeError);
    expect(() => new ItemExponentialRateLimiter({ maxDelayMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('Backoff', () => {
  const noJitter = (): number => 0.5;

  test('starts at 800 ms and doubles up to 30 s', () => {
    const backoff = new Backoff({ random: noJitter });

    expect(delays(() => backoff.next(), 8)).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  });

  test('spreads each delay over ±jitter of itself', () => {
    const lowest = new Backoff({ jitter: 0.25, random: () => 0 });
    const highest = new Backoff({ jitter: 0.25, random: () => 0.999999 });

    expect(delays(() => lowest.next(), 3)).toEqual([600, 1200, 2400]);
    expect(delays(() => highest.next(), 3)).toEqual([1000, 2000, 4000]);
  });

  test('jittered delays grow overall and never exceed the ceiling', () => {
    const backoff = new Backoff({ jitter: 0.1 });

    const observed = delays(() => backoff.next(), 12);

    expect(observed[0]).toBeGreaterThanOrEqual(720);
    expect(observed[0]).toBeLessThanOrEqual(880);
    expect(observed[3]).toBeGreaterThan(observed[0] ?? Number.POSITIVE_INFINITY);
    for (const delay of observed) {
      expect(delay).toBeLessThanOrEqual(30_000);
    }
    expect(observed.at(-1)).toBeGreaterThanOrEqual(27_000);
  });

  test('reset starts again from the initial delay', () => {
    const backoff = new Backoff({ random: noJitter });
    delays(() => backoff.next(), 5);

    backoff.reset();

    expect(delays(() => backoff.next(), 2)).toEqual([800, 1600]);
  });

  test('initial delay, ceiling and factor are configurable', () => {
    const backoff = new Backoff({ initialDelayMs: 100, maxDelayMs: 1000, factor: 3, random: noJitter });

    expect(delays(() => backoff.next(), 4)).toEqual([100, 300, 900, 1000]);
  });

  test('a jitter outside [0, 1] or a factor below 1 is rejected', () => {
    expect(() => new Backoff({ jitter: 1.5 })).toThrow(RangeError);
    expect(() => new Backoff({ factor: 0.5 })).toThrow(RangeError);
  });
});
