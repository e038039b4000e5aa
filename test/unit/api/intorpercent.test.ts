// Table tests for IntOrString parsing and Kubernetes' GetScaledValueFromIntOrPercent rounding.
import { describe, expect, it } from '@jest/globals';
import {
  IntOrPercentError,
  getScaledValueFromIntOrPercent,
  isIntOrPercent,
  parseIntOrPercent,
} from '../../../src/api/intorpercent.js';
import type { IntOrString } from '../../../src/api/types.js';

describe('parseIntOrPercent', () => {
  it.each<[IntOrString, number, boolean]>([
    [0, 0, false],
    [5, 5, false],
    ['0%', 0, true],
    ['20%', 20, true],
    ['100%', 100, true],
    ['150%', 150, true],
  ])('reads %j as %d (percent: %s)', (input, value, isPercent) => {
    expect(parseIntOrPercent(input)).toEqual({ value, isPercent });
  });

  it.each<[IntOrString, string]>([
    [-1, 'is negative'],
    [1.5, 'is not an integer'],
    [Number.NaN, 'is not an integer'],
    ['abc', '"abc" is not an integer or a percentage'],
    ['5', 'write the number 5 without quotes, or "5%"'],
    ['-5%', 'is not an integer or a percentage'],
    ['1.5%', 'is not an integer or a percentage'],
    ['05%', 'is not an integer or a percentage'],
    ['%', 'is not an integer or a percentage'],
    ['', 'is not an integer or a percentage'],
  ])('rejects %j with a message containing %j', (input, message) => {
    expect(() => parseIntOrPercent(input)).toThrow(IntOrPercentError);
    expect(() => parseIntOrPercent(input)).toThrow(message);
  });

  it('names the field in its error', () => {
    expect(() => parseIntOrPercent('abc', 'updateStrategy.maxSurge')).toThrow(/^updateStrategy\.maxSurge: /);
  });

  it('rejects a value that is neither a number nor a string', () => {
    expect(() => parseIntOrPercent(true as unknown as IntOrString)).toThrow('got boolean');
  });
});

describe('isIntOrPercent', () => {
  it.each<[unknown, boolean]>([
    [3, true],
    ['30%', true],
    ['30', false],
    [-3, false],
    [undefined, false],
    [null, false],
  ])('says %j is valid: %s', (input, valid) => {
    expect(isIntOrPercent(input)).toBe(valid);
  });
});

describe('getScaledValueFromIntOrPercent', () => {
  it.each<[IntOrString, number, boolean, number]>([
    [3, 10, true, 3],
    [3, 10, false, 3],
    [30, 10, true, 30],
    ['20%', 10, true, 2],
    ['20%', 10, false, 2],
    ['25%', 10, true, 3],
    ['25%', 10, false, 2],
    ['1%', 1, true, 1],
    ['1%', 1, false, 0],
    ['99%', 1, false, 0],
    ['100%', 7, false, 7],
    ['0%', 100, true, 0],
    ['10%', 30, true, 3],
    ['10%', 0, true, 0],
    ['33%', 3, true, 1],
    ['50%', 5, true, 3],
    ['50%', 5, false, 2],
    ['150%', 4, true, 6],
  ])('scales %j of %d (round up: %s) to %d', (input, total, roundUp, expected) => {
    expect(getScaledValueFromIntOrPercent(input, total, roundUp)).toBe(expected);
  });

  it.each([-1, 1.5, Number.NaN])('rejects a total of %d', (total) => {
    expect(() => getScaledValueFromIntOrPercent('10%', total, true)).toThrow('must be an integer >= 0');
  });

  it('rejects a malformed value instead of treating it as 0', () => {
    expect(() => getScaledValueFromIntOrPercent('abc', 10, true, 'partition')).toThrow(
      'partition: "abc" is not an integer or a percentage',
    );
  });
});
