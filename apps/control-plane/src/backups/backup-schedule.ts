import { CronExpressionParser } from 'cron-parser';

/** What a schedule must be, in the words a client is told. */
export const SCHEDULE_RULE =
  'a five-field cron expression (minute hour day-of-month month day-of-week), in UTC';

/** Null when `text` is a five-field cron, else the problem with it. */
export const scheduleProblem = (text: string): string | null => {
  const fields = text.trim().split(/\s+/);
  if (fields.length !== 5 || text.trim() === '') {
    return `must be ${SCHEDULE_RULE}: found ${fields.filter(Boolean).length} fields`;
  }
  try {
    CronExpressionParser.parse(text, { strict: false, tz: 'UTC' });
    return null;
  } catch (error) {
    return `must be ${SCHEDULE_RULE}: ${(error as Error).message}`;
  }
};

const parse = (schedule: string, from: Date) =>
  CronExpressionParser.parse(schedule, { currentDate: from, tz: 'UTC' });

/** The next `count` runs strictly after `after`, as ISO times (shown in the cluster view). */
export const nextRuns = (schedule: string, after: Date, count: number): string[] =>
  parse(schedule, after)
    .take(count)
    .map((d) => d.toDate().toISOString());

/**
 * The slot to run now, or null: the latest scheduled time at or before `now` that is later
 * than `lastSlotAt` (or than `since`, the policy's start, when it never ran). However many
 * slots passed while the control plane was down, one run covers them.
 */
export const dueSlot = (
  schedule: string,
  since: string,
  lastSlotAt: string | null,
  now: Date,
): string | null => {
  const floor = Date.parse(lastSlotAt ?? since);
  // prev() from a moment just after now includes a slot exactly at now.
  const latest = parse(schedule, new Date(now.getTime() + 1))
    .prev()
    .toDate();
  return latest.getTime() > floor ? latest.toISOString() : null;
};
