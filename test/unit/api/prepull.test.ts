// The node's image pre-pull report (src/api/prepull.ts, docs/decisions/0073-prepull-report-bounds.md):
// any image the CRD allows round-trips from the agent's write to the controller's read and counts
// as pulled; one entry the reader cannot take never voids the others; the report stays within its
// byte and entry bounds whatever the writer is given.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { load } from 'js-yaml';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  ANNOTATION_PULLED_IMAGES,
  MAX_IMAGE_LENGTH,
  MAX_REPORTED_IMAGES,
  MAX_REPORT_BYTES,
  encodePulledImages,
  isReportableImage,
  parsePulledImages,
  type ImagePull,
  type PulledImagesValue,
} from '../../../src/api/prepull.js';
import { rfc3339Seconds } from '../../../src/api/time.js';
import { prePullVerdict } from '../../../src/inplace/pure/prepull.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const SINCE = rfc3339Seconds(T0);
const PULLED: ImagePull = { state: 'Pulled', since: SINCE };
const read = (value: string): PulledImagesValue => parsePulledImages({ [ANNOTATION_PULLED_IMAGES]: value });
const write = (entries: Iterable<readonly [string, ImagePull]>): string => encodePulledImages(new Map(entries));
const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
/** A report's text from entries given as raw JSON values, in this order. */
const rawReport = (entries: readonly (readonly [string, string])[]): string =>
  `{${entries.map(([image, value]) => `${JSON.stringify(image)}:${value}`).join(',')}}`;

/** A registry reference of exactly `length` characters: host, a deep path, and a digest. */
function imageOf(length: number): string {
  const host = 'registry.example.com:5000/';
  const digest = `@sha256:${'0123456789abcdef'.repeat(4)}`;
  const path = 'team/'.repeat(length).slice(0, length - host.length - digest.length - 3);
  return `${host}${path}app${digest}`;
}

/** Whether the controller drains at once, with nothing reported as not pre-pulled: the image counts as pulled. */
function countsAsPulled(image: string, report: PulledImagesValue): boolean {
  if (!report.ok) return false;
  const verdict = prePullVerdict([image], { report: report.value, revisionCreatedAt: T0, timeoutMs: 120_000 }, T0);
  return !verdict.wait && verdict.notPrePulled.length === 0;
}

describe('an image the CRD allows round-trips through the report', () => {
  it.each<[string, string]>([
    ['a short name', 'nginx:1.27'],
    ['512 characters (the old bound)', imageOf(512)],
    ['513 characters', imageOf(513)],
    ['1,024 characters (the CRD bound)', imageOf(1024)],
    ['1,024 code points of two UTF-16 units each', '😀'.repeat(1024)],
  ])('%s: written, read back, and recognised as pulled', (_name, image) => {
    const report = read(write([[image, PULLED]]));
    expect(report).toEqual({ ok: true, value: { [image]: PULLED }, dropped: 0, droppedReason: undefined });
    expect(countsAsPulled(image, report)).toBe(true);
  });

  it('keeps a 1,024-character image next to others, each in its own state', () => {
    const long = imageOf(1024);
    const pulls: [string, ImagePull][] = [
      [long, PULLED],
      ['a:v2', { state: 'Pulling', since: SINCE }],
      ['b:v2', { state: 'Failed', since: SINCE, message: 'not found' }],
    ];
    const report = read(write(pulls));
    expect(report.ok && { ...report.value }).toEqual(Object.fromEntries(pulls));
    expect(countsAsPulled(long, report)).toBe(true);
  });

  it('holds the same bound as the CRD puts on every container image of the template', () => {
    const crd = load(readFileSync(resolve(process.cwd(), 'crds/apps.tailor.dev_clonesets.yaml'), 'utf8'));
    const bounds: unknown[] = [];
    const walk = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      for (const [key, child] of Object.entries(node)) {
        if (key === 'containers' || key === 'initContainers') {
          bounds.push(
            (child as { items?: { properties?: { image?: { maxLength?: number } } } }).items?.properties?.image
              ?.maxLength,
          );
        }
        walk(child);
      }
    };
    walk(crd);
    expect(bounds).toEqual([MAX_IMAGE_LENGTH, MAX_IMAGE_LENGTH]);
  });

  it('leaves out a name past the bound, which no CloneSet can carry, and keeps the rest', () => {
    const text = write([
      [imageOf(1025), PULLED],
      ['😀'.repeat(1025), PULLED],
      ['', PULLED],
      ['a:v2', PULLED],
    ]);
    expect(read(text)).toEqual({ ok: true, value: { 'a:v2': PULLED }, dropped: 0, droppedReason: undefined });
  });
});

describe('one entry the reader cannot take never voids the report', () => {
  const good: [string, string][] = [
    ['a:v2', JSON.stringify(PULLED)],
    [imageOf(1024), JSON.stringify({ state: 'Pulling', since: SINCE })],
    ['c:v2', JSON.stringify({ state: 'Failed', since: SINCE, message: 'denied' })],
  ];
  const expected = Object.fromEntries(good.map(([image, value]) => [image, JSON.parse(value) as ImagePull]));
  const malformed: [string, string, string][] = [
    ['a name over 1,024 characters', imageOf(1025), JSON.stringify(PULLED)],
    ['a name over 1,024 code points', '😀'.repeat(1025), JSON.stringify(PULLED)],
    ['an empty name', '', JSON.stringify(PULLED)],
    ['an unknown state', 'x:v2', JSON.stringify({ state: 'Done', since: SINCE })],
    ['a time that is not RFC 3339', 'x:v2', JSON.stringify({ state: 'Pulled', since: 'yesterday' })],
    ['no time', 'x:v2', JSON.stringify({ state: 'Pulled' })],
    ['a message over 256 characters', 'x:v2', JSON.stringify({ ...PULLED, message: 'm'.repeat(257) })],
    ['null', 'x:v2', 'null'],
    ['a string', 'x:v2', '"Pulled"'],
    ['an array', 'x:v2', '[]'],
    ['a number under __proto__', '__proto__', '5'],
  ];

  it.each(malformed)('%s: dropped and counted, every other entry read', (_name, image, value) => {
    for (const at of [0, 1, good.length]) {
      const entries = [...good.slice(0, at), [image, value] as const, ...good.slice(at)];
      const report = read(rawReport(entries));
      if (!report.ok) throw new Error(`the report was voided: ${report.error}`);
      expect({ ...report.value }).toEqual(expected);
      expect(report.dropped).toBe(1);
      expect(report.droppedReason).toMatch(/^entry "/);
      expect(countsAsPulled('a:v2', report)).toBe(true);
    }
  });

  it('reads a well-formed entry under any name, __proto__ and constructor included, as an entry only', () => {
    const report = read(rawReport([['__proto__', JSON.stringify(PULLED)], ...good]));
    expect(report.ok && Object.keys(report.value).sort()).toEqual(['__proto__', ...Object.keys(expected)].sort());
    expect(report.ok && Object.getPrototypeOf(report.value)).toBeNull();
    // An image the report does not list is not found on Object.prototype either: it is waited for.
    const verdict = prePullVerdict(['constructor'], { report: { a: PULLED }, revisionCreatedAt: T0, timeoutMs: 1 }, T0);
    expect(verdict.wait).toBe(true);
  });

  it(`reads the first ${MAX_REPORTED_IMAGES} entries of a longer report and counts the rest`, () => {
    const entries = Array.from(
      { length: MAX_REPORTED_IMAGES + 2 },
      (_, i) => [`img${i}:v2`, JSON.stringify(PULLED)] as const,
    );
    const report = read(rawReport(entries));
    expect(report.ok && Object.keys(report.value).length).toBe(MAX_REPORTED_IMAGES);
    expect(report.ok && report.dropped).toBe(2);
  });

  it.each<[string, string]>([
    ['not JSON', '{"a:v2":'],
    ['an array', '[]'],
    ['null', 'null'],
    ['a string', '"a:v2"'],
  ])('a report that is %s as a whole is unreadable, as any annotation', (_name, text) => {
    expect(read(text)).toEqual({ ok: false, error: expect.stringContaining(ANNOTATION_PULLED_IMAGES) });
  });

  it('reads every good entry whatever malformed entry is mixed in, wherever (property)', () => {
    const pull = fc.record({
      state: fc.constantFrom<ImagePull['state']>('Pulling', 'Pulled', 'Failed'),
      since: fc.integer({ min: 0, max: 10 ** 9 }).map((s) => rfc3339Seconds(T0 + s * 1000)),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 40 }), pull), {
          maxLength: MAX_REPORTED_IMAGES,
          selector: ([image]) => image,
        }),
        fc.constantFrom(...malformed),
        fc.nat(),
        (pulls, [, badImage, badValue], where) => {
          const entries = pulls
            .filter(([image]) => image !== badImage)
            .map(([image, p]) => [image, JSON.stringify(p)] as const);
          const at = where % (entries.length + 1);
          const report = read(rawReport([...entries.slice(0, at), [badImage, badValue], ...entries.slice(at)]));
          if (!report.ok) return false;
          expect({ ...report.value }).toEqual(Object.fromEntries(entries.map(([image, v]) => [image, JSON.parse(v)])));
          return report.dropped === 1;
        },
      ),
    );
  });
});

describe('the report stays within its bounds whatever the inputs', () => {
  /** Characters that cost the most, or trip the checks: escapes, astral code points, lone surrogates. */
  const unit = fc.oneof(
    fc.constantFrom('a', '/', ':', '@', '"', '\\', '\u0001', 'é', '😀'),
    fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u)),
  );
  const image = fc.oneof(
    fc.string({ unit, minLength: 0, maxLength: 40 }),
    fc.string({ unit, minLength: 1000, maxLength: 1050 }),
    fc.string({ unit, minLength: 2030, maxLength: 2060 }),
    fc.integer({ min: 1, max: 1100 }).map((n) => 'x'.repeat(n)),
  );
  const pull: fc.Arbitrary<ImagePull> = fc.record(
    {
      state: fc.constantFrom<ImagePull['state']>('Pulling', 'Pulled', 'Failed'),
      since: fc.oneof(
        fc.integer({ min: 0, max: 10 ** 9 }).map((s) => rfc3339Seconds(T0 + s * 1000)),
        fc.constant('not a time'),
      ),
      message: fc.string({ unit, maxLength: 600 }),
    },
    { requiredKeys: ['state', 'since'] },
  );
  /** The entry the writer would write for `name`, to measure it. */
  const entryBytes = (name: string, p: ImagePull): number =>
    bytes(
      `${JSON.stringify(name)}:${JSON.stringify(p.message === undefined ? p : { ...p, message: p.message.slice(0, 256) })}`,
    ) + 1;

  it('holds MAX_REPORT_BYTES and MAX_REPORTED_IMAGES, reads back whole, and leaves out nothing that fits (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(image, pull, { maxKeys: 300, noNullPrototype: true }), (input) => {
        const text = encodePulledImages(new Map(Object.entries(input)));
        expect(bytes(text)).toBeLessThanOrEqual(MAX_REPORT_BYTES);
        const report = read(text);
        if (!report.ok) throw new Error(report.error);
        // The writer writes nothing its reader refuses.
        expect(report.dropped).toBe(0);
        const written = Object.keys(report.value);
        expect(written.length).toBeLessThanOrEqual(MAX_REPORTED_IMAGES);
        for (const name of written) {
          const p = input[name] as ImagePull;
          expect(report.value[name]).toEqual({
            ...p,
            ...(p.message === undefined ? {} : { message: p.message.slice(0, 256) }),
          });
        }
        // What is left out could not be read, or no longer fitted.
        for (const [name, p] of Object.entries(input)) {
          if (written.includes(name) || !isReportableImage(name) || p.since === 'not a time') continue;
          const full = written.length === MAX_REPORTED_IMAGES || bytes(text) + entryBytes(name, p) > MAX_REPORT_BYTES;
          expect(full).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('fills up to the byte bound with 1,024-character images, in name order, and says nothing false', () => {
    const pulls = Array.from(
      { length: MAX_REPORTED_IMAGES },
      (_, i) => [`${String(i).padStart(3, '0')}${imageOf(1021)}`, PULLED] as const,
    );
    const text = write(pulls);
    expect(bytes(text)).toBeLessThanOrEqual(MAX_REPORT_BYTES);
    const report = read(text);
    const written = report.ok ? Object.keys(report.value) : [];
    expect(written.length).toBeGreaterThan(50);
    expect(written).toEqual(pulls.slice(0, written.length).map(([name]) => name));
    expect(countsAsPulled(pulls[0]?.[0] ?? '', report)).toBe(true);
    // An image left out is one the agent has not listed: the controller waits the ack grace, then drains.
    const left = pulls[MAX_REPORTED_IMAGES - 1]?.[0] ?? '';
    expect(
      report.ok && prePullVerdict([left], { report: report.value, revisionCreatedAt: T0, timeoutMs: 1 }, T0).wait,
    ).toBe(true);
  });
});
