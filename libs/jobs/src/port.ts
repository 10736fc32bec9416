import { consoleFailureSink, FailureSink, ThrottledLog } from '@fleet/kernel/throttled-log';
import { settleWithin } from '@fleet/kernel/within';

/**
 * Delayed jobs are hints, the event log is truth: every job can be re-derived from
 * state, ids are deterministic, and every handler re-checks state before acting.
 */
export type JobHandler<P = unknown> = (payload: P, job: JobInfo) => Promise<void>;

export type JobInfo = {
  readonly queue: string;
  readonly jobId: string;
  /** 1 for the first try. */
  readonly attempt: number;
  readonly runAt: number;
};

/** One period of an `every`: `runAt` is when it was due (epoch ms), the same in every process. */
export type PeriodicHandler = (run: { readonly runAt: number }) => Promise<void>;

export type QueueOptions = {
  /** Tries before a job is given up as failed (default 10). */
  readonly attempts?: number;
  /** First retry delay in ms, doubled each try (default 200). */
  readonly backoffMs?: number;
  /** Jobs of this queue running at once in this process (default 10). */
  readonly concurrency?: number;
  /**
   * How many fetchers share `concurrency` (default 1). A BullMQ worker takes jobs one round
   * trip after another until it holds its `concurrency` of them, and only then starts handling
   * them; several workers fetch side by side, so a burst of due jobs starts sooner.
   */
  readonly fetchers?: number;
};

export type QueueCounts = {
  readonly waiting: number;
  readonly delayed: number;
  /** Handlers running now (their jobs are neither waiting nor delayed, yet not gone). */
  readonly running: number;
  readonly failed: number;
};

export interface DelayedJobs {
  /** Registers the handler of a queue; jobs start firing once `start` was called. */
  register<P>(queue: string, handler: JobHandler<P>, options?: QueueOptions): void;
  /** The queues registered so far, in the order they were (metrics report each one's backlog). */
  registeredQueues(): string[];
  /**
   * Schedules `jobId` to run at `runAt` (epoch ms; now or past = as soon as possible).
   * Replace semantics: a job already scheduled under this id, due or not, is moved, never
   * doubled. Runs of one id never overlap: scheduled while it runs, the new run is kept and
   * starts once that run ends (not before `runAt`), replacing that run's retries.
   */
  schedule<P>(queue: string, jobId: string, runAt: number, payload: P): Promise<void>;
  cancel(queue: string, jobId: string): Promise<void>;
  /** The scheduled run time of a pending job, or null (used by reconcilers and tests). */
  scheduledAt(queue: string, jobId: string): Promise<number | null>;
  counts(queue: string): Promise<QueueCounts>;
  /**
   * The ids of every job of the queue that is delayed, due or running, in one read (for
   * reconcilers: one call instead of a `scheduledAt` per id).
   */
  liveJobIds(queue: string): Promise<Set<string>>;
  /**
   * Runs `handler` every `everyMs` once started, the first time one period after start.
   * Processes sharing the backend run each period once in total (BullMQ: a job scheduler
   * named `name`); in memory it is a timer. A period that comes while this process still runs
   * the last one is skipped; a run that throws is reported like a job's failure, and the next
   * period runs anyway. `close` stops it.
   */
  every(name: string, everyMs: number, handler: PeriodicHandler): void;
  start(): Promise<void>;
  /** Stops taking jobs and periods, waits for running handlers, closes connections. */
  close(): Promise<void>;
  ping(): Promise<void>;
}

/**
 * `schedule` could not put its run in place: a due run of the id kept being taken ahead of it
 * (BullMQ: one waiting to start, that a concurrent schedule or a worker claimed again each
 * try). That run re-reads state, so a caller that only wants "a run soon" may go on.
 */
export class JobSlotsBusyError extends Error {
  constructor(
    readonly queue: string,
    readonly jobId: string,
  ) {
    super(`jobs: cannot reschedule ${queue}/${jobId}: a due run of it kept being taken first`);
    this.name = 'JobSlotsBusyError';
  }
}

/**
 * `schedule` for a caller that wants "a run soon" of a job whose every run re-reads state:
 * when its run could not be put in place (JobSlotsBusyError), a run is coming anyway, so it
 * resolves false instead of failing (a start's reconcile, a reactor). Anything else fails as
 * `schedule` does.
 */
export async function scheduleUnlessBusy<P>(
  jobs: DelayedJobs,
  queue: string,
  jobId: string,
  runAt: number,
  payload: P,
): Promise<boolean> {
  try {
    await jobs.schedule<P>(queue, jobId, runAt, payload);
    return true;
  } catch (error) {
    if (error instanceof JobSlotsBusyError) return false;
    throw error;
  }
}

/**
 * Arms the job of a command already recorded in the log, waiting for the queue at most
 * `waitMs`. With Redis out of reach BullMQ's client holds a command until Redis is back, so a
 * request that waited for it would hang for the whole outage; and a recorded command must not
 * answer 503 (which says nothing was done). The arming lands when Redis returns, and the
 * owner's periodic repair re-arms work whose job is gone, so the caller may answer now.
 * Resolves true when armed in time; a late or failed arming is reported to `onMiss`.
 */
export async function armWithin(
  arming: Promise<unknown>,
  waitMs: number,
  onMiss: (error: unknown) => void,
): Promise<boolean> {
  const outcome = await settleWithin(arming, waitMs);
  if (outcome.status === 'fulfilled') return true;
  if (outcome.status === 'rejected') {
    onMiss(outcome.reason);
    return false;
  }
  onMiss(new Error(`the job queue did not answer within ${waitMs} ms`));
  arming.catch(onMiss); // a failure after the wait is reported too
  return false;
}

/** Told of every try of a job whose handler threw (it is retried, or counted failed). */
export type HandlerErrorSink = (
  queue: string,
  jobId: string,
  error: unknown,
  attempt: number,
) => void;

/**
 * Handlers' failures as log lines, at most one per queue per 10 s (`ThrottledLog`): a webhook
 * or provisioner that refuses every call would otherwise fail silently, retry after retry, or
 * fill the log with one line per try.
 */
export const handlerFailureLog = (sink: FailureSink = consoleFailureSink): HandlerErrorSink => {
  const throttled = new ThrottledLog(sink);
  return (queue, jobId, error, attempt) =>
    throttled.log(
      `handler ${queue}`,
      `jobs: a ${queue} job failed (job ${jobId}, attempt ${attempt}); it is retried until its attempts run out`,
      error,
    );
};
