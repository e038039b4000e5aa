import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { Registry } from 'prom-client';
import {
  ResourceVersionExpectations,
  ScaleExpectations,
  compareResourceVersions,
  isResourceVersionAtLeast,
} from '../../../src/runtime/expectations.js';
import { RuntimeMetrics } from '../../../src/runtime/metrics.js';
import { metricValue } from './metric-values.js';

const MINUTE = 60_000;
const KEY = 'default/web';

async function expiredCount(registry: Registry, kind: string): Promise<number | undefined> {
  return metricValue(registry, 'tailor_expectations_expired_total', { kind });
}

describe('ScaleExpectations', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('a key with no expectations is satisfied', () => {
    expect(new ScaleExpectations().satisfied(KEY)).toBe(true);
  });

  test('creations are satisfied once every expected pod has been observed', () => {
    const expectations = new ScaleExpectations();
    expectations.expectCreations(KEY, ['web-a', 'web-b']);

    expectations.observeCreation(KEY, 'web-a');
    expect(expectations.satisfied(KEY)).toBe(false);

    expectations.observeCreation(KEY, 'web-b');
    expect(expectations.satisfied(KEY)).toBe(true);
    expect(expectations.pending(KEY)).toBeUndefined();
  });

  test('deletions are satisfied once every expected pod has been observed gone', () => {
    const expectations = new ScaleExpectations();
    expectations.expectDeletions(KEY, ['web-a']);
    expectations.expectCreations(KEY, ['web-c']);

    expectations.observeDeletion(KEY, 'web-a');
    expect(expectations.satisfied(KEY)).toBe(false);

    expectations.observeCreation(KEY, 'web-c');
    expect(expectations.satisfied(KEY)).toBe(true);
  });

  test('observing a pod nobody expected, or under another key, changes nothing', () => {
    const expectations = new ScaleExpectations();
    expectations.expectCreations(KEY, ['web-a']);

    expectations.observeCreation(KEY, 'web-z');
    expectations.observeCreation('default/other', 'web-a');
    expectations.observeDeletion(KEY, 'web-a');

    expect(expectations.pending(KEY)?.creations).toEqual(['web-a']);
    expect(expectations.satisfied('default/other')).toBe(true);
  });

  test('an empty expectation leaves the key satisfied', () => {
    const expectations = new ScaleExpectations();

    expectations.expectCreations(KEY, []);

    expect(expectations.satisfied(KEY)).toBe(true);
  });

  test('pending lists what is still missing and how long until it expires', async () => {
    const expectations = new ScaleExpectations();
    expectations.expectCreations(KEY, ['web-a', 'web-b']);
    expectations.expectDeletions(KEY, ['web-old']);
    expectations.observeCreation(KEY, 'web-a');

    await jest.advanceTimersByTimeAsync(MINUTE);

    expect(expectations.pending(KEY)).toEqual({
      creations: ['web-b'],
      deletions: ['web-old'],
      expiresInMs: 4 * MINUTE,
    });
  });

  test('an expectation never observed expires after 5 minutes: satisfied, dropped and counted once', async () => {
    const registry = new Registry();
    const metrics = new RuntimeMetrics(registry);
    const expectations = new ScaleExpectations({ onExpired: metrics.recordExpectationsExpired });
    expectations.expectCreations(KEY, ['web-lost-event']);

    await jest.advanceTimersByTimeAsync(5 * MINUTE);
    expect(expectations.satisfied(KEY)).toBe(false);

    await jest.advanceTimersByTimeAsync(1);
    expect(expectations.satisfied(KEY)).toBe(true);
    expect(expectations.satisfied(KEY)).toBe(true);
    expect(expectations.pending(KEY)).toBeUndefined();
    expect(await expiredCount(registry, 'scale')).toBe(1);
  });

  test('later expectations do not extend the deadline of a record still pending', async () => {
    const expired: string[] = [];
    const expectations = new ScaleExpectations({ onExpired: (_kind, key) => expired.push(key) });
    expectations.expectCreations(KEY, ['web-a']);

    await jest.advanceTimersByTimeAsync(4 * MINUTE);
    expectations.expectCreations(KEY, ['web-b']);
    await jest.advanceTimersByTimeAsync(MINUTE + 1);

    expect(expectations.satisfied(KEY)).toBe(true);
    expect(expired).toEqual([KEY]);
  });

  test('a record satisfied in time is not counted as expired', async () => {
    const expired: string[] = [];
    const expectations = new ScaleExpectations({ onExpired: (_kind, key) => expired.push(key) });
    expectations.expectCreations(KEY, ['web-a']);
    expectations.observeCreation(KEY, 'web-a');

    await jest.advanceTimersByTimeAsync(10 * MINUTE);

    expect(expectations.satisfied(KEY)).toBe(true);
    expect(expired).toEqual([]);
  });

  test('the TTL and the clock are injectable', () => {
    let nowMs = 0;
    const expectations = new ScaleExpectations({ ttlMs: 1000, now: () => nowMs });
    expectations.expectDeletions(KEY, ['web-a']);

    nowMs = 1000;
    expect(expectations.satisfied(KEY)).toBe(false);
    nowMs = 1001;
    expect(expectations.satisfied(KEY)).toBe(true);
  });

  test('delete forgets a key without counting it as expired', () => {
    const expired: string[] = [];
    const expectations = new ScaleExpectations({ onExpired: (_kind, key) => expired.push(key) });
    expectations.expectCreations(KEY, ['web-a']);

    expectations.delete(KEY);

    expect(expectations.satisfied(KEY)).toBe(true);
    expect(expired).toEqual([]);
  });

  test('expectations leave no timers behind', () => {
    const expectations = new ScaleExpectations();
    expectations.expectCreations(KEY, ['web-a']);
    expectations.satisfied(KEY);

    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('ResourceVersionExpectations', () => {
  const UID = '0d5c8f2e-7f3a-4f3e-9a57-1b8f9a6c2d11';

  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('a pod is unsatisfied until the cache shows the expected resourceVersion or a newer one', () => {
    const expectations = new ResourceVersionExpectations();
    expectations.expectResourceVersion(UID, '1005');

    expectations.observe(UID, '1004');
    expect(expectations.satisfied(UID)).toBe(false);

    expectations.observe(UID, '1006');
    expect(expectations.satisfied(UID)).toBe(true);
  });

  test('seeing exactly the expected resourceVersion satisfies it', () => {
    const expectations = new ResourceVersionExpectations();
    expectations.expectResourceVersion(UID, '42');

    expectations.observe(UID, '42');

    expect(expectations.satisfied(UID)).toBe(true);
  });

  test('resourceVersions compare as numbers, not as text', () => {
    const expectations = new ResourceVersionExpectations();
    expectations.expectResourceVersion(UID, '10');

    expectations.observe(UID, '9');

    expect(expectations.satisfied(UID)).toBe(false);
  });

  test('resourceVersions beyond 2^53 compare exactly', () => {
    const expectations = new ResourceVersionExpectations();
    expectations.expectResourceVersion(UID, '9007199254740993');

    expectations.observe(UID, '9007199254740992');
    expect(expectations.satisfied(UID)).toBe(false);

    expectations.observe(UID, '9007199254740993');
    expect(expectations.satisfied(UID)).toBe(true);
  });

  test('a non-numeric resourceVersion counts as observed when it differs', () => {
    const expectations = new ResourceVersionExpectations();
    expectations.expectResourceVersion(UID, 'opaque-a');

    expectations.observe(UID, 'opaque-b');

    expect(expectations.satisfied(UID)).toBe(true);
  });

  test('an older expectation does not replace a newer one', () => {
    const expectations = new ResourceVersionExpectations();
    expectations.expectResourceVersion(UID, '200');
    expectations.expectResourceVersion(UID, '150');

    expectations.observe(UID, '150');

    expect(expectations.satisfied(UID)).toBe(false);
  });

  test('a newer expectation replaces an older one', () => {
    const expectations = new ResourceVersionExpectations();
    expectations.expectResourceVersion(UID, '150');
    expectations.expectResourceVersion(UID, '200');

    expectations.observe(UID, '150');

    expect(expectations.satisfied(UID)).toBe(false);
  });

  test('an unobserved resourceVersion expires after 5 minutes and is counted with kind resourceVersion', async () => {
    const registry = new Registry();
    const metrics = new RuntimeMetrics(registry);
    const expectations = new ResourceVersionExpectations({ onExpired: metrics.recordExpectationsExpired });
    expectations.expectResourceVersion(UID, '7');

    await jest.advanceTimersByTimeAsync(5 * MINUTE + 1);

    expect(expectations.satisfied(UID)).toBe(true);
    expect(await expiredCount(registry, 'resourceVersion')).toBe(1);
    expect(await expiredCount(registry, 'scale')).toBeUndefined();
  });

  test('delete forgets a pod', () => {
    const expectations = new ResourceVersionExpectations();
    expectations.expectResourceVersion(UID, '7');

    expectations.delete(UID);

    expect(expectations.satisfied(UID)).toBe(true);
  });
});

describe('compareResourceVersions', () => {
  test.each([
    ['1', '1', 0],
    ['2', '10', -1],
    ['10', '2', 1],
    ['0010', '10', 0],
    ['18446744073709551617', '18446744073709551616', 1],
    ['abc', 'abc', 0],
    ['abc', '12', undefined],
    ['', '1', undefined],
  ])('compareResourceVersions(%p, %p) is %p', (a, b, expected) => {
    expect(compareResourceVersions(a, b)).toBe(expected);
  });

  test.each([
    ['5', '5', true],
    ['6', '5', true],
    ['4', '5', false],
    ['x', 'y', true],
  ])('isResourceVersionAtLeast(seen %p, expected %p) is %p', (seen, expected, result) => {
    expect(isResourceVersionAtLeast(seen, expected)).toBe(result);
  });
});
