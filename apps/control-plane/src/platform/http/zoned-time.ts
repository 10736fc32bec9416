import { applyDecorators } from '@nestjs/common';
import { IsISO8601, IsString, Matches, ValidateBy, ValidationOptions } from 'class-validator';

/**
 * A date, or a date-time with its UTC offset, `Z` or `±hh:mm`: a bare local time would depend on
 * the server's zone, and the basic offsets (`+0900`, `+09`) are refused like other basic forms.
 */
const ZONED = /^\d{4}-\d{2}-\d{2}(T.*(Z|[+-]\d{2}:\d{2}))?$/;

/** Whether `text` names an instant this server can read (ISO-8601 allows forms `Date` cannot). */
export const isReadableTime = (text: unknown): boolean =>
  typeof text === 'string' && !Number.isNaN(Date.parse(text));

/**
 * The first whole millisecond at or after `text` (a time `isReadableTime` accepted), as an ISO
 * string. `Date` drops digits past the millisecond; stored times have none, so a bound of
 * `…09.5435Z` compares with them exactly as `…09.544Z` does (`stored ≥ bound`, `stored < bound`).
 */
export const ceilToMillisecond = (text: string): string => {
  const ms = Date.parse(text);
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  return new Date(/[1-9]/.test(fraction.slice(3)) ? ms + 1 : ms).toISOString();
};

/** The digits of `text`'s fraction of a second past the millisecond (`Date` drops them). */
const belowMillisecond = (text: string): string => (/\.(\d+)/.exec(text)?.[1] ?? '').slice(3);

/**
 * The order of two instants `isReadableTime` accepted, exactly: negative when `a` is before
 * `b`, 0 when they are the same instant, positive after. Whole milliseconds first (offsets
 * applied by `Date`), then the digits past them, however many: `…34.9181Z` is before
 * `…34.9185Z` though both round to the same millisecond either way.
 */
export const compareInstants = (a: string, b: string): number => {
  const ms = Date.parse(a) - Date.parse(b);
  if (ms !== 0) return Math.sign(ms);
  const [x, y] = [belowMillisecond(a), belowMillisecond(b)];
  const width = Math.max(x.length, y.length);
  const [fx, fy] = [x.padEnd(width, '0'), y.padEnd(width, '0')];
  return fx < fy ? -1 : fx > fy ? 1 : 0;
};

/** The instant `text` names, rounded down to its millisecond (`Date` drops further digits). */
export const floorToMillisecond = (text: string): string =>
  new Date(Date.parse(text)).toISOString();

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether the date `text` starts with (`yyyy-mm-dd`) is a day of the proleptic Gregorian
 * calendar: `Date` rolls 2026-02-30 over to March 2 rather than refusing it. Written here, not
 * IsISO8601's `strict`, which rebuilds the date with `new Date("50-06-01")`, a year `Date` reads
 * as 1950 or 2050 (and in the server's zone), so it refused every date of the years 0000-0099.
 */
export const isCalendarDate = (text: unknown): boolean => {
  if (typeof text !== 'string') return true; // told by IsString
  const date = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (date === null) return true; // told by the form checks
  const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
  // A month or day out of any range is IsISO8601's to tell (its pattern allows 01-12, 01-31).
  if (month < 1 || month > 12 || day < 1 || day > 31) return true;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= DAYS_IN_MONTH[month - 1] + (month === 2 && leap ? 1 : 0);
};

const EARLIEST = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Whether the instant, rounded up to its millisecond, is one of years 0000-9999 in UTC: stored
 * times are compared as ISO strings, and past them `toISOString` writes `+010000-…`, which sorts
 * before every real time (a `from` in year 10000 matched everything).
 */
export const isWithinYears = (text: unknown): boolean => {
  if (!isReadableTime(text)) return true; // told by the readability check
  const ms = Date.parse(ceilToMillisecond(text as string));
  return ms >= EARLIEST && ms <= LATEST;
};

/**
 * A time in a query: ISO-8601 on a real calendar day, with its UTC offset, and one `Date` can
 * read. ISO-8601 also allows week dates (2026-W49-1), ordinal dates (2026-337), basic forms
 * (20261201T1000Z) and decimal commas, which `Date.parse` cannot read: those are refused here,
 * with the field named, rather than failing later in the handler.
 */
export const IsZonedTime = (field: string, options?: ValidationOptions): PropertyDecorator =>
  applyDecorators(
    IsString(options),
    IsISO8601({ strictSeparator: true }, options),
    ValidateBy(
      { name: 'isCalendarDate', validator: { validate: isCalendarDate } },
      { ...options, message: `${field} must be a valid ISO 8601 date string` },
    ),
    Matches(ZONED, { ...options, message: `${field} must carry a UTC offset (Z or ±hh:mm)` }),
    ValidateBy(
      { name: 'isReadableTime', validator: { validate: isReadableTime } },
      {
        ...options,
        message: `${field} must be a calendar date-time such as 2026-12-02T10:00:00Z (week dates, ordinal dates, basic forms and decimal commas are not accepted)`,
      },
    ),
    ValidateBy(
      { name: 'isWithinYears', validator: { validate: isWithinYears } },
      {
        ...options,
        message: `${field} must fall in the years 0000 to 9999 (UTC)`,
      },
    ),
  );
