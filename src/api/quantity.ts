// Kubernetes resource.Quantity, our own parser (none on npm is maintained). Owns the grammar,
// exact arithmetic and canonical formatting; it must not know what cpu or memory mean beyond the
// rounding rules of MilliValue()/Value(), and does no I/O.
import { LRUCache } from 'lru-cache';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/**
 * A bigint of nano-units (1 = 1e-9 of the unit) plus the format the value was written in.
 * Kubernetes rounds every parsed value up (away from zero) to nano precision, so nano units hold
 * any quantity exactly, including binary fractions ("0.5Ki", "1.5Gi") and "1n".
 */
export interface Quantity {
  /** The value in nano-units: "100m" -> 100_000_000n, "1Ki" -> 1_024_000_000_000n. */
  readonly nanos: bigint;
  /** How the value was written; formatQuantity keeps it. */
  readonly format: QuantityFormat;
}

export interface ParseQuantityOptions {
  /** Reject negative values (cpu, memory). Kubernetes accepts them in general; default true. */
  readonly allowNegative?: boolean;
}

export class QuantityError extends Error {
  override readonly name = 'QuantityError';
}

const NANOS_PER_UNIT = 1_000_000_000n;
const NANOS_PER_MILLI = 1_000_000n;
/** Kubernetes' maxAllowed: 2^63-1 units. */
const MAX_UNITS = (1n << 63n) - 1n;
const MAX_NANOS = MAX_UNITS * NANOS_PER_UNIT;

const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const DECIMAL_BY_EXPONENT: ReadonlyMap<number, string> = new Map(
  Object.entries(DECIMAL_SUFFIXES).map(([suffix, exp]): [number, string] => [exp, suffix]),
);
const BINARY_BY_EXPONENT: ReadonlyMap<number, string> = new Map([
  [0, ''],
  ...Object.entries(BINARY_SUFFIXES).map(([suffix, exp]): [number, string] => [exp, suffix]),
]);

const SHAPE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/s;
const EXPONENT = /^[eE]([+-]?[0-9]+)$/;
const INT32_MAX = 2 ** 31 - 1;

const pow10 = (n: number): bigint => 10n ** BigInt(n);
const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b; // a >= 0, b > 0
const digitCount = (n: bigint): number => (n === 0n ? 1 : n.toString().length);

interface Suffix {
  readonly format: QuantityFormat;
  readonly base10: number;
  readonly base2: number;
}

function interpretSuffix(suffix: string, input: string): Suffix {
  const decimal = DECIMAL_SUFFIXES[suffix];
  if (decimal !== undefined) return { format: 'DecimalSI', base10: decimal, base2: 0 };
  const binary = BINARY_SUFFIXES[suffix];
  if (binary !== undefined) return { format: 'BinarySI', base10: 0, base2: binary };
  const exp = EXPONENT.exec(suffix)?.[1];
  if (exp !== undefined) {
    const value = Number(exp);
    if (!Number.isSafeInteger(value) || Math.abs(value) > INT32_MAX) {
      throw new QuantityError(`quantity ${JSON.stringify(input)}: exponent ${exp} is out of range`);
    }
    return { format: 'DecimalExponent', base10: value, base2: 0 };
  }
  throw new QuantityError(
    `quantity ${JSON.stringify(input)}: unknown suffix ${JSON.stringify(suffix)}; use one of ` +
      'n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent like e3',
  );
}

/** |value| in nanos, rounded up to a whole nano like Kubernetes; undefined when > MAX_NANOS. */
function magnitudeInNanos(digits: bigint, fractionDigits: number, suffix: Suffix): bigint | undefined {
  if (digits === 0n) return 0n;
  const scaled = digits << BigInt(suffix.base2);
  const shift = 9 + suffix.base10 - fractionDigits; // value = scaled * 10^shift nanos
  if (shift >= 0) {
    // MAX_NANOS has 28 digits: anything with more cannot fit, so skip building a huge bigint.
    if (digitCount(scaled) + shift > 29) return undefined;
    return scaled * pow10(shift);
  }
  // Fewer digits than the shift means 0 < value < 1 nano: rounds up to 1n.
  if (-shift > digitCount(scaled)) return 1n;
  return ceilDiv(scaled, pow10(-shift));
}

/**
 * Parsed quantities by their text. Every reconcile compares every pod's cpu and memory, written
 * in a handful of distinct texts ("10m", "16Mi"): parsing each once took a sixth of a 1,000-pod
 * round. Bounded, so odd texts cannot grow it; values are frozen and shared.
 */
const parsed = new LRUCache<string, Quantity>({
  max: 4096,
  maxSize: 256 * 1024,
  sizeCalculation: (_value, key) => Math.max(1, key.length),
});

/**
 * Parse a Kubernetes quantity ("100m", "1.5Gi", "1e3"). Throws QuantityError on garbage.
 * Grammar (as resource.ParseQuantity):
 *   quantity ::= [+-] number suffix
 *   number   ::= digits | digits "." digits? | "." digits
 *   suffix   ::= "" | n | u | m | k | M | G | T | P | E          (DecimalSI)
 *              | Ki | Mi | Gi | Ti | Pi | Ei                    (BinarySI)
 *              | (e|E) [+-] digits                              (DecimalExponent, "1e3")
 * Differences from Kubernetes, all on input Kubernetes itself treats oddly: a number needs at
 * least one digit ("", "-", "." are errors, Kubernetes reads the last two as 0), and a decimal
 * value beyond 2^63-1 units is an error instead of an arbitrarily large inf.Dec (binary values are
 * capped at 2^63-1 like Kubernetes does).
 */
export function parseQuantity(input: string, options: ParseQuantityOptions = {}): Quantity {
  if (typeof input !== 'string') {
    throw new QuantityError(`quantity must be a string, got ${typeof input}`);
  }
  let quantity = parsed.get(input);
  if (quantity === undefined) {
    quantity = Object.freeze(parseText(input));
    parsed.set(input, quantity);
  }
  if (options.allowNegative === false && quantity.nanos < 0n) {
    throw new QuantityError(`quantity ${JSON.stringify(input)} must not be negative`);
  }
  return quantity;
}

function parseText(input: string): Quantity {
  const shape = SHAPE.exec(input);
  const [, sign = '', whole = '', fraction = '', suffixText = ''] = shape ?? [];
  if (shape === null || whole.length + fraction.length === 0) {
    throw new QuantityError(
      `quantity ${JSON.stringify(input)} is not a number with an optional suffix, like "100m", "1.5Gi" or "1e3"`,
    );
  }
  const suffix = interpretSuffix(suffixText, input);
  const negative = sign === '-';
  const magnitude = magnitudeInNanos(BigInt(whole + fraction || '0'), fraction.length, suffix);
  let nanos: bigint;
  if (magnitude === undefined || magnitude > MAX_NANOS) {
    if (suffix.format !== 'BinarySI') {
      throw new QuantityError(`quantity ${JSON.stringify(input)} is out of range (more than 2^63-1)`);
    }
    nanos = MAX_NANOS;
  } else {
    nanos = magnitude;
  }
  if (negative && nanos !== 0n) nanos = -nanos;
  // Like Kubernetes: a binary value strictly between 0 and 1 is shown in decimal ("0.5Ki" is 512,
  // but "0.0001Ki" is 102400u).
  const abs = nanos < 0n ? -nanos : nanos;
  const format = suffix.format === 'BinarySI' && abs > 0n && abs < NANOS_PER_UNIT ? 'DecimalSI' : suffix.format;
  return { nanos, format };
}

/** Divide rounding away from zero, like Kubernetes' int64Amount scaling. */
function divideAwayFromZero(value: bigint, divisor: bigint): bigint {
  return value >= 0n ? ceilDiv(value, divisor) : -ceilDiv(-value, divisor);
}

/** Milli-units rounded up (away from zero), like Quantity.MilliValue(): cpu "0.1m" -> 1n. */
export function toMilli(q: Quantity): bigint {
  return divideAwayFromZero(q.nanos, NANOS_PER_MILLI);
}

/** Whole units rounded up (away from zero), like Quantity.Value(): memory "0.5" -> 1n. */
export function toBytes(q: Quantity): bigint {
  return divideAwayFromZero(q.nanos, NANOS_PER_UNIT);
}

/** A DecimalSI quantity of `milli` milli-units (cpu). */
export function fromMilli(milli: bigint | number): Quantity {
  return { nanos: BigInt(milli) * NANOS_PER_MILLI, format: 'DecimalSI' };
}

/** A BinarySI quantity of `bytes` units (memory). */
export function fromBytes(bytes: bigint | number): Quantity {
  return { nanos: BigInt(bytes) * NANOS_PER_UNIT, format: 'BinarySI' };
}

/** -1, 0 or 1 as a is less than, equal to or greater than b (formats are ignored). */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

/** Strip factors of `factor` from |n| > 0, returning what is left and how many were removed. */
function removeFactors(n: bigint, factor: bigint): [bigint, number] {
  let rest = n;
  let times = 0;
  while (rest % factor === 0n) {
    rest /= factor;
    times += 1;
  }
  return [rest, times];
}

/**
 * Kubernetes' canonical form (Quantity.String()): "1500m", "1536Mi", "1k" or "1e3", "0".
 * BinarySI falls back to DecimalSI below 1024 or for fractions, as Kubernetes does.
 */
export function formatQuantity(q: Quantity): string {
  if (q.nanos === 0n) return '0';
  const negative = q.nanos < 0n;
  const abs = negative ? -q.nanos : q.nanos;
  const sign = negative ? '-' : '';
  if (q.format === 'BinarySI' && abs >= 1024n * NANOS_PER_UNIT && abs % NANOS_PER_UNIT === 0n) {
    const [mantissa, times] = removeFactors(abs / NANOS_PER_UNIT, 1024n);
    const exponent = Math.min(times, 6);
    const value = mantissa * 1024n ** BigInt(times - exponent);
    return `${sign}${value}${BINARY_BY_EXPONENT.get(exponent * 10) ?? ''}`;
  }
  const [digits, times] = removeFactors(abs, 10n);
  let mantissa = digits;
  let exponent = times - 9;
  const remainder = ((exponent % 3) + 3) % 3; // make the exponent a multiple of 3
  mantissa *= pow10(remainder);
  exponent -= remainder;
  if (q.format === 'DecimalExponent') {
    return `${sign}${mantissa}${exponent === 0 ? '' : `e${exponent}`}`;
  }
  // DecimalSI (and BinarySI shown as decimal): the largest suffix is E (10^18).
  if (exponent > 18) {
    mantissa *= pow10(exponent - 18);
    exponent = 18;
  }
  return `${sign}${mantissa}${DECIMAL_BY_EXPONENT.get(exponent) ?? ''}`;
}
