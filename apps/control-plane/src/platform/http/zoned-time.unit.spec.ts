import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { IsOptional } from 'class-validator';
import { compareInstants, isCalendarDate, IsZonedTime } from './zoned-time';

class Window {
  @IsOptional()
  @IsZonedTime('from')
  from?: string;
}

/** The problems of `from` as the query DTO sees it, or [] when it is accepted. */
const problems = (from: string): string[] =>
  validateSync(plainToInstance(Window, { from })).flatMap((e) =>
    Object.values(e.constraints ?? {}),
  );

describe('a time in a query', () => {
  describe('in the years 0000-0099', () => {
    it.each([
      '0000-01-01T00:00:00Z',
      '0000-02-29T00:00:00Z', // year 0 is a leap year (divisible by 400)
      '0001-01-01',
      '0050-06-01',
      '0099-12-31T00:00:00Z',
      '0099-12-31T23:59:59.999999+00:00',
      '0100-01-01T00:00:00Z',
    ])('takes %s', (from) => {
      expect(problems(from)).toEqual([]);
    });

    it.each([
      ['0004-02-30T00:00:00Z'],
      ['0001-02-29T00:00:00Z'],
      ['0050-04-31'],
      ['0000-01-01T00:30:00+01:00'], // before year 0000
    ])('refuses %s', (from) => {
      expect(problems(from)).not.toEqual([]);
    });
  });

  it.each([
    ['2026-02-29T00:00:00Z', false],
    ['2024-02-29T00:00:00Z', true],
    ['2100-02-29T00:00:00Z', false],
    ['2000-02-29T00:00:00Z', true],
    ['2026-04-31', false],
    ['2026-12-31', true],
  ])('checks the calendar itself: %s is a day: %s', (from, day) => {
    expect(isCalendarDate(from)).toBe(day);
    expect(problems(from)).toEqual(day ? [] : ['from must be a valid ISO 8601 date string']);
  });

  it.each(['2026-01-00', '2026-13-01', '2026-12-32T00:00:00Z'])(
    'refuses %s, no day of any month, once',
    (from) => {
      expect(problems(from)).toContain('from must be a valid ISO 8601 date string');
      expect(new Set(problems(from)).size).toBe(problems(from).length);
    },
  );
});

describe('the order of two instants', () => {
  it.each([
    // Within one millisecond: the digits past it decide.
    ['2026-11-02T10:00:34.9181Z', '2026-11-02T10:00:34.9185Z', -1],
    ['2026-11-02T10:00:34.9185Z', '2026-11-02T10:00:34.9181Z', 1],
    ['2026-11-02T10:00:34.918Z', '2026-11-02T10:00:34.918000001Z', -1],
    ['2026-11-02T10:00:34.9180Z', '2026-11-02T10:00:34.918Z', 0],
    ['2026-11-02T10:00:34.91850000000000000001Z', '2026-11-02T10:00:34.9185Z', 1],
    // Offsets, dates alone and whole milliseconds as Date reads them.
    ['2026-11-02T19:00:00.0001+09:00', '2026-11-02T10:00:00Z', 1],
    ['2026-11-02', '2026-11-02T00:00:00.000Z', 0],
    ['2026-11-02T10:00:00.5Z', '2026-11-02T10:00:00.49999Z', 1],
    ['0050-06-01', '0000-01-01T00:00:00Z', 1],
  ])('%s against %s: %d', (a, b, order) => {
    expect(compareInstants(a, b)).toBe(order);
    expect(compareInstants(b, a)).toBe(-order || 0);
  });
});
