// IntOrString arithmetic for partition/maxUnavailable/maxSurge, after Kubernetes'
// intstr.GetScaledValueFromIntOrPercent. Owns parsing and scaling only; it must not pick
// defaults (src/api/defaults.ts does) or know what the value means to a rollout.
// Stricter than Kubernetes where Kubernetes would yield nonsense: negative values, fractions and
// non-percent strings are errors, matching what the CRD's CEL rules admit.
import type { IntOrString } from './types.js';

export class IntOrPercentError extends Error {
  override readonly name = 'IntOrPercentError';
}

export interface IntOrPercent {
  /** The integer, or the percentage without its `%`. */
  readonly value: number;
  readonly isPercent: boolean;
}

const PERCENT = /^(0|[1-9][0-9]*)%$/;

/** Parse 5 or "20%". Throws IntOrPercentError for anything else ("5", "abc", -1, 1.5, "1.5%"). */
export function parseIntOrPercent(input: IntOrString, field = 'value'): IntOrPercent {
  if (typeof input === 'number') {
    if (!Number.isSafeInteger(input)) {
      throw new IntOrPercentError(`${field}: ${input} is not an integer`);
    }
    if (input < 0) {
      throw new IntOrPercentError(`${field}: ${input} is negative; use an integer >= 0 or a percentage like "20%"`);
    }
    return { value: input, isPercent: false };
  }
  if (typeof input === 'string') {
    const match = PERCENT.exec(input);
    if (match === null || match[1] === undefined) {
      const hint = /^[0-9]+$/.test(input) ? ` (write the number ${input} without quotes, or "${input}%")` : '';
      throw new IntOrPercentError(
        `${field}: ${JSON.stringify(input)} is not an integer or a percentage like "20%"${hint}`,
      );
    }
    const value = Number(match[1]);
    if (!Number.isSafeInteger(value)) {
      throw new IntOrPercentError(`${field}: ${JSON.stringify(input)} is too large`);
    }
    return { value, isPercent: true };
  }
  throw new IntOrPercentError(`${field}: expected an integer or a percentage string, got ${typeof input}`);
}

/** True when parseIntOrPercent would accept the value. */
export function isIntOrPercent(input: unknown): input is IntOrString {
  if (typeof input !== 'number' && typeof input !== 'string') return false;
  try {
    parseIntOrPercent(input);
    return true;
  } catch {
    return false;
  }
}

/**
 * Kubernetes' GetScaledValueFromIntOrPercent: an integer is returned as is; a percentage is
 * applied to `total` and rounded up (roundUp) or down. Integer arithmetic, so 10% of 30 is 3,
 * never 3.0000000000000004 rounded up to 4.
 */
export function getScaledValueFromIntOrPercent(
  input: IntOrString,
  total: number,
  roundUp: boolean,
  field = 'value',
): number {
  if (!Number.isSafeInteger(total) || total < 0) {
    throw new IntOrPercentError(`${field}: total ${total} must be an integer >= 0`);
  }
  const parsed = parseIntOrPercent(input, field);
  if (!parsed.isPercent) return parsed.value;
  const product = BigInt(parsed.value) * BigInt(total);
  const scaled = roundUp ? (product + 99n) / 100n : product / 100n;
  return Number(scaled);
}
