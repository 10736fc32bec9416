import { isoTime } from './iso-time';

const DAY = 86_400_000;
const expected = (ms: number) => new Date(ms).toISOString();

describe('isoTime', () => {
  it('writes what toISOString writes, across days, months, leap days and years', () => {
    const starts = [
      0,
      Date.UTC(2026, 11, 5, 23, 59, 59, 999),
      Date.UTC(2024, 1, 28, 23, 59, 59, 999),
      Date.UTC(2024, 1, 29, 0, 0, 0, 0),
      Date.UTC(2025, 11, 31, 23, 59, 59, 998),
      Date.UTC(9999, 11, 31, 23, 59, 59, 990),
      Date.UTC(1969, 11, 31, 23, 59, 59, 990),
      Date.UTC(1, 0, 1),
    ];
    for (const start of starts) {
      // Every millisecond around the start, in order (the day is kept) and back (it is not).
      for (let ms = start - 20; ms <= start + 20; ms++) expect(isoTime(ms)).toBe(expected(ms));
      for (let ms = start + 20; ms >= start - 20; ms--) expect(isoTime(ms)).toBe(expected(ms));
    }
  });

  it('writes what toISOString writes for random times, the same one twice included', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 20_000; i++) {
      // Mostly within a few days of one another (as a server formats them), now and then far away.
      const ms =
        i % 50 === 0
          ? Math.floor((random() - 0.5) * 2 * 8.64e15)
          : Date.UTC(2026, 11, 5) + Math.floor(random() * 3 * DAY);
      expect(isoTime(ms)).toBe(expected(ms));
      expect(isoTime(ms)).toBe(expected(ms));
    }
  });

  it('leaves to toISOString the times it writes another way: years past 9999 or before 0, fractions', () => {
    for (const ms of [
      Date.UTC(10000, 0, 1),
      Date.UTC(10000, 0, 1) + 1,
      Date.UTC(-1, 0, 1) + 5,
      8.64e15,
      -8.64e15,
      Date.UTC(2026, 0, 1) + 0.5,
      1.25,
      -1.5,
    ]) {
      expect(isoTime(ms)).toBe(expected(ms));
    }
  });

  it('refuses what toISOString refuses, and goes on writing afterwards', () => {
    for (const ms of [NaN, Infinity, -Infinity, 8.64e15 + 1]) {
      expect(() => isoTime(ms)).toThrow(RangeError);
    }
    const ms = Date.UTC(2026, 11, 6, 0, 30);
    expect(isoTime(ms)).toBe('2026-12-06T00:30:00.000Z');
  });
});
