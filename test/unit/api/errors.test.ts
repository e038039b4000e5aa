import { describe, expect, test } from '@jest/globals';
import { errorMessage } from '../../../src/api/errors.js';

describe('errorMessage', () => {
  test('an Error gives its message, anything else its String()', () => {
    expect(errorMessage(new Error('refused'))).toBe('refused');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(42)).toBe('42');
  });
});
