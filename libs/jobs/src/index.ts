import { BullmqJobs } from './bullmq-jobs';
import { InProcessJobs } from './in-process-jobs';
import { DelayedJobs, handlerFailureLog } from './port';
import { FailureSink } from '../../kernel/src/throttled-log';

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
    // Our handlers are short (they re-read state and issue a command or two), so a dead
    // worker's jobs come back after seconds rather than BullMQ's default 30 s; a live worker
    // renews its locks at half the duration, so a slow handler keeps its job.
    return new BullmqJobs({
      redisUrl: config.redisUrl,
      prefix: config.prefix,
      lockDuration: 5000,
      stalledInterval: 2000,
      log: config.log,
    });
  }
  return new InProcessJobs({ onError: handlerFailureLog(config.log) });
}
