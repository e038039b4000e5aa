import { describe, expect, it } from '@jest/globals';
import { parseDuration } from '../../../src/api/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['1m30s', 90_000],
    ['1.5s', 1500],
    ['10', 10_000],
    ['0', 0],
    [' 2m ', 120_000],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '5 m', '5d', '-1s', '1h30', 'm5'])('refuses %j with what a duration looks like', (text) => {
    expect(() => parseDuration(text)).toThrow(/is not a duration: use e.g. 500ms, 30s, 5m or 1h30m/);
  });
});
