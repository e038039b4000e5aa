// Table tests for the resource.Quantity parser: values, rounding of toMilli/toBytes, canonical
// formatting and the errors garbage must raise.
import { describe, expect, it } from '@jest/globals';
import {
  QuantityError,
  compareQuantities,
  formatQuantity,
  fromBytes,
  fromMilli,
  parseQuantity,
  toBytes,
  toMilli,
  type QuantityFormat,
} from '../../../src/api/quantity.js';

const GI = 1024n ** 3n;

interface Case {
  input: string;
  nanos: bigint;
  milli: bigint;
  bytes: bigint;
  format: QuantityFormat;
  canonical: string;
}

const cases: Case[] = [
  { input: '0', nanos: 0n, milli: 0n, bytes: 0n, format: 'DecimalSI', canonical: '0' },
  { input: '1', nanos: 1_000_000_000n, milli: 1000n, bytes: 1n, format: 'DecimalSI', canonical: '1' },
  { input: '0.1', nanos: 100_000_000n, milli: 100n, bytes: 1n, format: 'DecimalSI', canonical: '100m' },
  { input: '.5', nanos: 500_000_000n, milli: 500n, bytes: 1n, format: 'DecimalSI', canonical: '500m' },
  { input: '1.', nanos: 1_000_000_000n, milli: 1000n, bytes: 1n, format: 'DecimalSI', canonical: '1' },
  { input: '100m', nanos: 100_000_000n, milli: 100n, bytes: 1n, format: 'DecimalSI', canonical: '100m' },
  { input: '1500m', nanos: 1_500_000_000n, milli: 1500n, bytes: 2n, format: 'DecimalSI', canonical: '1500m' },
  { input: '1000m', nanos: 1_000_000_000n, milli: 1000n, bytes: 1n, format: 'DecimalSI', canonical: '1' },
  { input: '0.1m', nanos: 100_000n, milli: 1n, bytes: 1n, format: 'DecimalSI', canonical: '100u' },
  { input: '1n', nanos: 1n, milli: 1n, bytes: 1n, format: 'DecimalSI', canonical: '1n' },
  { input: '250u', nanos: 250_000n, milli: 1n, bytes: 1n, format: 'DecimalSI', canonical: '250u' },
  { input: '2k', nanos: 2_000_000_000_000n, milli: 2_000_000n, bytes: 2000n, format: 'DecimalSI', canonical: '2k' },
  {
    input: '128M',
    nanos: 128_000_000n * 1_000_000_000n,
    milli: 128_000_000_000n,
    bytes: 128_000_000n,
    format: 'DecimalSI',
    canonical: '128M',
  },
  { input: '1G', nanos: 10n ** 18n, milli: 10n ** 12n, bytes: 10n ** 9n, format: 'DecimalSI', canonical: '1G' },
  { input: '1E', nanos: 10n ** 27n, milli: 10n ** 21n, bytes: 10n ** 18n, format: 'DecimalSI', canonical: '1E' },
  {
    input: '1Ki',
    nanos: 1024n * 1_000_000_000n,
    milli: 1_024_000n,
    bytes: 1024n,
    format: 'BinarySI',
    canonical: '1Ki',
  },
  { input: '1Gi', nanos: GI * 1_000_000_000n, milli: GI * 1000n, bytes: GI, format: 'BinarySI', canonical: '1Gi' },
  {
    input: '1.5Gi',
    nanos: ((GI * 3n) / 2n) * 1_000_000_000n,
    milli: GI * 1500n,
    bytes: 1_610_612_736n,
    format: 'BinarySI',
    canonical: '1536Mi',
  },
  { input: '0.5Ki', nanos: 512n * 1_000_000_000n, milli: 512_000n, bytes: 512n, format: 'BinarySI', canonical: '512' },
  { input: '0.1Ki', nanos: 102_400_000_000n, milli: 102_400n, bytes: 103n, format: 'BinarySI', canonical: '102400m' },
  { input: '0.0001Ki', nanos: 102_400_000n, milli: 103n, bytes: 1n, format: 'DecimalSI', canonical: '102400u' },
  { input: '1e3', nanos: 10n ** 12n, milli: 1_000_000n, bytes: 1000n, format: 'DecimalExponent', canonical: '1e3' },
  { input: '1E3', nanos: 10n ** 12n, milli: 1_000_000n, bytes: 1000n, format: 'DecimalExponent', canonical: '1e3' },
  {
    input: '1.5e3',
    nanos: 1500n * 10n ** 9n,
    milli: 1_500_000n,
    bytes: 1500n,
    format: 'DecimalExponent',
    canonical: '1500',
  },
  { input: '1e-3', nanos: 1_000_000n, milli: 1n, bytes: 1n, format: 'DecimalExponent', canonical: '1e-3' },
  {
    input: '12e+2',
    nanos: 1200n * 10n ** 9n,
    milli: 1_200_000n,
    bytes: 1200n,
    format: 'DecimalExponent',
    canonical: '1200',
  },
  { input: '+1', nanos: 1_000_000_000n, milli: 1000n, bytes: 1n, format: 'DecimalSI', canonical: '1' },
  { input: '007', nanos: 7_000_000_000n, milli: 7000n, bytes: 7n, format: 'DecimalSI', canonical: '7' },
  { input: '0.0000000001', nanos: 1n, milli: 1n, bytes: 1n, format: 'DecimalSI', canonical: '1n' },
  { input: '1e-100', nanos: 1n, milli: 1n, bytes: 1n, format: 'DecimalExponent', canonical: '1e-9' },
  { input: '-1', nanos: -1_000_000_000n, milli: -1000n, bytes: -1n, format: 'DecimalSI', canonical: '-1' },
  { input: '-100m', nanos: -100_000_000n, milli: -100n, bytes: -1n, format: 'DecimalSI', canonical: '-100m' },
  { input: '-0', nanos: 0n, milli: 0n, bytes: 0n, format: 'DecimalSI', canonical: '0' },
  {
    input: '16Ei',
    nanos: ((1n << 63n) - 1n) * 1_000_000_000n,
    milli: ((1n << 63n) - 1n) * 1000n,
    bytes: (1n << 63n) - 1n,
    format: 'BinarySI',
    canonical: '9223372036854775807',
  },
];

describe('parseQuantity', () => {
  it.each(cases)('parses $input to $nanos nano-units in $format', ({ input, nanos, format }) => {
    expect(parseQuantity(input)).toEqual({ nanos, format });
  });

  it.each(cases)('rounds $input up to $milli milli-units like MilliValue()', ({ input, milli }) => {
    expect(toMilli(parseQuantity(input))).toBe(milli);
  });

  it.each(cases)('rounds $input up to $bytes whole units like Value()', ({ input, bytes }) => {
    expect(toBytes(parseQuantity(input))).toBe(bytes);
  });

  it.each(cases)('formats $input canonically as $canonical', ({ input, canonical }) => {
    expect(formatQuantity(parseQuantity(input))).toBe(canonical);
  });

  it.each([
    ['', 'is not a number'],
    ['abc', 'is not a number'],
    ['Gi', 'is not a number'],
    ['-', 'is not a number'],
    ['.', 'is not a number'],
    ['1K', 'unknown suffix "K"'],
    ['1ki', 'unknown suffix "ki"'],
    ['1e', 'unknown suffix "e"'],
    ['1e3.5', 'unknown suffix "e3.5"'],
    ['1.5.5', 'unknown suffix ".5"'],
    ['1 Gi', 'unknown suffix " Gi"'],
    [' 1', 'is not a number'],
    ['1Gi ', 'unknown suffix "Gi "'],
    ['0x10', 'unknown suffix "x10"'],
    ['1e99999999999', 'exponent 99999999999 is out of range'],
    ['1e30', 'out of range'],
    ['10E', 'out of range'],
  ])('rejects %j with a message containing %j', (input, message) => {
    expect(() => parseQuantity(input)).toThrow(QuantityError);
    expect(() => parseQuantity(input)).toThrow(message);
  });

  it('rejects a negative value when negatives are not allowed', () => {
    expect(() => parseQuantity('-1', { allowNegative: false })).toThrow('must not be negative');
    expect(() => parseQuantity('-100m', { allowNegative: false })).toThrow(QuantityError);
  });

  it('accepts zero written with a minus sign when negatives are not allowed', () => {
    expect(parseQuantity('-0', { allowNegative: false }).nanos).toBe(0n);
    // Parsed texts are shared between calls: the sign check still applies to each call.
    expect(parseQuantity('-2').nanos).toBe(-2_000_000_000n);
    expect(() => parseQuantity('-2', { allowNegative: false })).toThrow('must not be negative');
    expect(parseQuantity('-2')).toBe(parseQuantity('-2'));
    expect(Object.isFrozen(parseQuantity('-2'))).toBe(true);
  });

  it('rejects a value that is not a string', () => {
    expect(() => parseQuantity(5 as unknown as string)).toThrow('must be a string');
  });
});

describe('quantity helpers', () => {
  it('builds a cpu quantity from milli-units that formats as Kubernetes would', () => {
    expect(formatQuantity(fromMilli(1500))).toBe('1500m');
    expect(formatQuantity(fromMilli(2000n))).toBe('2');
  });

  it('builds a memory quantity from bytes that formats in binary units when exact', () => {
    expect(formatQuantity(fromBytes(256n * 1024n * 1024n))).toBe('256Mi');
    expect(formatQuantity(fromBytes(1000))).toBe('1k');
  });

  it('compares quantities by value whatever their format', () => {
    expect(compareQuantities(parseQuantity('1Ki'), parseQuantity('1024'))).toBe(0);
    expect(compareQuantities(parseQuantity('1k'), parseQuantity('1Ki'))).toBe(-1);
    expect(compareQuantities(parseQuantity('1.5'), parseQuantity('1500m'))).toBe(0);
    expect(compareQuantities(parseQuantity('2'), parseQuantity('1999m'))).toBe(1);
  });

  it('round-trips every canonical form through the parser', () => {
    for (const { input } of cases) {
      const q = parseQuantity(input);
      expect(parseQuantity(formatQuantity(q)).nanos).toBe(q.nanos);
    }
  });
});
