import { CronExpressionParser } from 'cron-parser';

/**
 * The cron check shared by the create form's `velero.schedule` (clusters) and the backup
 * policy (backups): the clusters slice is below backups, so the rule lives here.
 */

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
