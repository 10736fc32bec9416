import { BullmqJobs } from './bullmq-jobs';
import { InProcessJobs } from './in-process-jobs';
import { DelayedJobs } from './port';

export * from './port';
export * from './in-process-jobs';
export * from './bullmq-jobs';

/** BullMQ when Redis is configured, else in memory (jobs are re-derived by the reconciler at start). */
export function createDelayedJobs(config: { redisUrl?: string; prefix?: string }): DelayedJobs {
  if (config.redisUrl) return new BullmqJobs({ redisUrl: config.redisUrl, prefix: config.prefix });
  return new InProcessJobs();
}
