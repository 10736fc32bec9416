import fc from 'fast-check';
import { isoOf, msOf } from './iso-time';

/** V8's own answers: what isoOf and msOf must give. */
const v8Iso = (ms: number): string => new Date(ms).toISOString();
const v8Ms = (text: string): number => Date.parse(text);

/** Every millisecond a Date can hold (±8.64e15), and the four-digit years more densely. */
const anyMs = fc.oneof(
  fc.integer({ min: -8.64e15, max: 8.64e15 }),
  fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }),
  fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
);

const two = (n: number): string => String(n).padStart(2, '0');

describe('isoOf', () => {
  it('writes what toISOString writes, for any millisecond', () => {
    fc.assert(
      fc.property(anyMs, (ms) => {
        expect(isoOf(ms)).toBe(v8Iso(ms));
      }),
      { numRuns: 20_000 },
    );
  });

  it('gets the edges right: the epoch, leap days, century years, the ends of 0000 and 9999', () => {
    for (const text of [
      '1970-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '2024-02-29T12:00:00.001Z',
      '2000-02-29T00:00:00.000Z',
      '2100-03-01T00:00:00.000Z',
      '1900-02-28T23:59:59.999Z',
      '0000-01-01T00:00:00.000Z',
      '0001-01-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
    ]) {
      expect(isoOf(Date.parse(text))).toBe(text);
    }
    // Past four-digit years toISOString writes six digits and a sign: so does isoOf.
    expect(isoOf(-62_167_219_200_001)).toBe('-000001-12-31T23:59:59.999Z');
    expect(isoOf(253_402_300_800_000)).toBe('+010000-01-01T00:00:00.000Z');
  });

  it('refuses what toISOString refuses, with the same error', () => {
    expect(() => isoOf(Number.NaN)).toThrow(RangeError);
    expect(() => isoOf(8.64e15 + 1)).toThrow(RangeError);
    // A fraction of a millisecond is truncated, as a Date truncates it.
    expect(isoOf(1.5)).toBe(v8Iso(1.5));
  });
});

describe('msOf', () => {
  it('reads what Date.parse reads, for any canonical timestamp', () => {
    fc.assert(
      fc.property(anyMs, (ms) => {
        const text = v8Iso(ms);
        expect(msOf(text)).toBe(v8Ms(text));
        expect(msOf(text)).toBe(ms);
      }),
      { numRuns: 20_000 },
    );
  });

  it('agrees with Date.parse on any field value in the canonical shape, in range or not', () => {
    // Days past a month's end and hour 24 are Date.parse's own rules (V8 rolls some over):
    // msOf must answer as it does, not refuse them, nor accept what it refuses.
    const shaped = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 0, max: 999 }),
      )
      .map(
        ([y, mo, d, h, mi, s, f]) =>
          `${String(y).padStart(4, '0')}-${two(mo)}-${two(d)}T${two(h)}:${two(mi)}:${two(s)}.${String(f).padStart(3, '0')}Z`,
      );
    fc.assert(
      fc.property(shaped, (text) => {
        expect(msOf(text)).toBe(v8Ms(text));
      }),
      { numRuns: 20_000 },
    );
    for (const text of [
      '2026-02-29T00:00:00.000Z',
      '2024-02-30T00:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-01-01T24:00:00.000Z',
      '2026-00-10T00:00:00.000Z',
      '2026-13-10T00:00:00.000Z',
      '2026-01-00T00:00:00.000Z',
      '2026-01-01T00:60:00.000Z',
      '2026-01-01T00:00:60.000Z',
    ]) {
      expect(msOf(text)).toBe(v8Ms(text));
    }
  });

  it('hands every other form to Date.parse: offsets, no milliseconds, signs, junk', () => {
    for (const text of [
      '2026-12-04T22:03:05Z',
      '2026-12-04T22:03:05.3Z',
      '2026-12-04T22:03:05.390+01:00',
      '2026-12-04',
      '+002026-12-04T22:03:05.390Z',
      '2026-12-04t22:03:05.390z',
      '2026-12-04T22:03:05.39xZ',
      '2O26-12-04T22:03:05.390Z',
      '2026-12-04 22:03:05.390Z',
      '',
      'not a time at all, but 24 c',
    ]) {
      expect(msOf(text)).toEqual(v8Ms(text));
    }
    fc.assert(
      fc.property(fc.string({ minLength: 20, maxLength: 28 }), (text) => {
        expect(msOf(text)).toEqual(v8Ms(text));
      }),
      { numRuns: 5_000 },
    );
  });
});
