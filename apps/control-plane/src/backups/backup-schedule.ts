import { CronExpressionParser } from 'cron-parser';

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
