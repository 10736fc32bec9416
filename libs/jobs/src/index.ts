import { BullmqJobs } from './bullmq-jobs';
import { InProcessJobs } from './in-process-jobs';
import { DelayedJobs, handlerFailureLog } from './port';
import { FailureSink } from '@fleet/kernel/throttled-log';

export * from './port';
export * from './in-process-jobs';
export * from './bullmq-jobs';

/** BullMQ when Redis is configured, else in memory (jobs are re-derived by the reconciler at start). */
export function createDelayedJobs(config: {
  redisUrl?: string;
  prefix?: string;
  log?: FailureSink;
}): DelayedJobs {
  if (config.redisUrl) {
    // The adapter's lock defaults: a dead worker's jobs come back after seconds rather than
    // BullMQ's 30 s, and a live one keeps them through a 5 s pause of its event loop.
    return new BullmqJobs({ redisUrl: config.redisUrl, prefix: config.prefix, log: config.log });
  }
  return new InProcessJobs({ onError: handlerFailureLog(config.log) });
}
