import { describe, expect, it } from '@jest/globals';
import { mergePatch, sameJSON } from '../../../src/api/json.js';

describe('mergePatch', () => {
  it.each([
    ['sets changed scalars', { a: 1 }, { a: 2 }, { a: 2 }],
    ['nulls a key that disappeared', { a: 1, b: 2 }, { a: 1 }, { a: 1, b: null }],
    ['nulls a nested key that disappeared', { r: { n: 1, pods: [1] } }, { r: { n: 0 } }, { r: { n: 0, pods: null } }],
    ['replaces arrays whole', { l: [1, 2] }, { l: [3] }, { l: [3] }],
    ['adds new keys', {}, { a: { b: 1 } }, { a: { b: 1 } }],
    ['starts from nothing', undefined, { a: 1 }, { a: 1 }],
  ])('%s', (_name, from, to, expected) => {
    expect(mergePatch(from, to)).toEqual(expected);
  });
});

describe('sameJSON', () => {
  it.each([
    [{ a: 1, b: 2 }, { b: 2, a: 1 }, true],
    [undefined, null, true],
    [{ hard: { pods: '2' } }, { hard: { pods: '3' } }, false],
    [[1, 2], [2, 1], false],
  ])('%j and %j are the same: %s', (a, b, expected) => {
    expect(sameJSON(a, b)).toBe(expected);
  });
});
