// What the API server asked a client to wait: the Status body's retryAfterSeconds, else the
// Retry-After header, honoured for 429s and 5xx only and cut at MAX_SERVER_RETRY_AFTER_MS.
import { describe, expect, test } from '@jest/globals';
import {
  KubeApiError,
  MAX_SERVER_RETRY_AFTER_MS,
  serverRetryAfterMs,
  withRetryAfterHeader,
  type KubeStatus,
} from '../../../../src/runtime/pure/api-error.js';

const refused = (code: number, status?: KubeStatus): KubeApiError => new KubeApiError('GET', '/x', code, status);

describe('serverRetryAfterMs', () => {
  test.each<[string, unknown, number | undefined]>([
    ['429 naming 1 s', refused(429, { details: { retryAfterSeconds: 1 } }), 1_000],
    ['503 naming 5 s', refused(503, { details: { retryAfterSeconds: 5 } }), 5_000],
    ['429 naming an hour, cut', refused(429, { details: { retryAfterSeconds: 3_600 } }), MAX_SERVER_RETRY_AFTER_MS],
    ['429 naming no wait', refused(429, { reason: 'TooManyRequests' }), undefined],
    ['429 naming 0 s', refused(429, { details: { retryAfterSeconds: 0 } }), undefined],
    ['409 naming a wait', refused(409, { details: { retryAfterSeconds: 1 } }), undefined],
    ['no response', new KubeApiError('GET', '/x', 0, undefined, { cause: new Error('ECONNREFUSED') }), undefined],
    ['not an API error', new Error('boom'), undefined],
  ])('%s', (_, error, expected) => {
    expect(serverRetryAfterMs(error)).toBe(expected);
  });
});

describe('withRetryAfterHeader', () => {
  test.each<[string, KubeStatus | undefined, string | string[] | undefined, number | undefined]>([
    ['the header when the body names none', { reason: 'TooManyRequests' }, '2', 2],
    ['the body over the header', { details: { retryAfterSeconds: 1 } }, '7', 1],
    ['a header without a body', undefined, '3', 3],
    ['an HTTP date is not a number of seconds', {}, 'Wed, 21 Oct 2026 07:28:00 GMT', undefined],
    ['no header', {}, undefined, undefined],
    ['the first of repeated headers', {}, ['4', '9'], 4],
  ])('%s', (_, status, header, expected) => {
    expect(withRetryAfterHeader(status, header)?.details?.retryAfterSeconds).toBe(expected);
  });

  test('keeps the rest of the Status', () => {
    const status: KubeStatus = { reason: 'TooManyRequests', details: { causes: [{ message: 'slow down' }] } };
    expect(withRetryAfterHeader(status, '1')).toEqual({
      reason: 'TooManyRequests',
      details: { causes: [{ message: 'slow down' }], retryAfterSeconds: 1 },
    });
  });
});
