const DAY_MS = 86_400_000;

/** The day whose `YYYY-MM-DDT` was taken last, and that prefix. */
let day = NaN;
let dayPrefix = '';
/** The last time formatted, and its text: a busy second formats the same millisecond often. */
let lastMs = NaN;
let lastText = '';

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `new Date(ms).toISOString()`, the same text, without V8's date formatting on every call
 * (paid by every report for its receive time; docs/PERFORMANCE.md): the day's
 * `YYYY-MM-DDT` is taken from `toISOString` once a day and the time of day is added by
 * arithmetic. A time `toISOString` writes otherwise (a year before 0 or after 9999, a
 * fraction of a millisecond) or refuses (NaN, out of range: RangeError) goes to it as is.
 */
export const isoTime = (ms: number): string => {
  if (ms === lastMs) return lastText;
  // A fraction (or NaN, or an infinity: a RangeError there) is toISOString's to write.
  if (!Number.isInteger(ms)) return new Date(ms).toISOString();
  const start = Math.floor(ms / DAY_MS) * DAY_MS;
  if (start !== day) {
    const text = new Date(ms).toISOString();
    // Only a four-digit year has the fixed layout the arithmetic writes.
    if (text.length !== 24) return text;
    day = start;
    dayPrefix = text.slice(0, 11);
    lastMs = ms;
    lastText = text;
    return text;
  }
  const t = ms - start;
  const text = `${dayPrefix}${two(Math.floor(t / 3_600_000))}:${two(Math.floor(t / 60_000) % 60)}:${two(
    Math.floor(t / 1000) % 60,
  )}.${three(t % 1000)}Z`;
  lastMs = ms;
  lastText = text;
  return text;
};
