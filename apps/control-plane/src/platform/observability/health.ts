import { Inject, Injectable, Logger } from '@nestjs/common';
import { ThrottledLog, settleWithin } from '@fleet/kernel';
import { SubscriptionRunner } from '@fleet/cqrs';
import { EventStore } from '@fleet/eventstore/port';
import { DelayedJobs } from '@fleet/jobs/port';
import { ReadModelStore } from '@fleet/readmodels/port';
import { Leadership } from '../runtime/leadership.service';
import { Runtime } from '../runtime/runtime.service';
import { DELAYED_JOBS, EVENT_STORE, READ_MODELS } from '../runtime/tokens';

/** Projections further behind the log than this make the instance not ready (reads would be stale). */
export const READY_MAX_LAG = Symbol('READY_MAX_LAG');
export const DEFAULT_READY_MAX_LAG = 10_000;

/** A store that does not answer its ping within this is counted as down. */
export const PING_TIMEOUT_MS = 2_000;

export type Check = { ok: boolean; error?: string };
export type Readiness = {
  status: 'ready' | 'not_ready';
  checks: {
    runtime: Check;
    eventStore: Check;
    readModels: Check;
    delayedJobs: Check;
    subscriptions: Check & { lagging?: string[]; failing?: string[] };
  };
  /** Whether this replica holds the lease (runs the periodic work); no check: a follower is ready. */
  leader: boolean;
};

const logger = new Logger('health');
/** A load balancer asks every few seconds: one line per failure and window is enough. */
const failures = new ThrottledLog((message, error) =>
  logger.warn(`${message}: ${error instanceof Error ? error.message : String(error)}`),
);

/**
 * `/health/ready` answers anyone: a failing store is named with a fixed word, never with its
 * client's error text (which names hosts, options and versions); the text goes to the log.
 */
const withTimeout = async (name: string, work: () => Promise<void>, ms: number): Promise<Check> => {
  const ping = await settleWithin(work(), ms);
  if (ping.status === 'fulfilled') return { ok: true };
  const late = ping.status === 'late';
  const error = late ? new Error(`no answer within ${ms} ms`) : ping.reason;
  failures.log(name, `${name} failed its readiness ping`, error);
  return { ok: false, error: late ? `no answer within ${ms} ms` : 'not answering' };
};

/** What a load balancer asks before sending traffic: every store answers, read models are current. */
@Injectable()
export class Health {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(Runtime) private readonly runtime: Pick<Runtime, 'ready'>,
    @Inject(READY_MAX_LAG) private readonly maxLag: number,
    @Inject(Leadership) private readonly leadership: Pick<Leadership, 'isLeader'>,
  ) {}

  async readiness(): Promise<Readiness> {
    const [eventStore, readModels, delayedJobs, subscriptions] = await Promise.all([
      withTimeout('event store', () => this.events.ping(), PING_TIMEOUT_MS),
      withTimeout('read models', () => this.readModels.ping(), PING_TIMEOUT_MS),
      withTimeout('delayed jobs', () => this.jobs.ping(), PING_TIMEOUT_MS),
      this.subscriptions(),
    ]);
    const runtime: Check = this.runtime.ready
      ? { ok: true }
      : { ok: false, error: 'starting: read models are catching up with the log' };
    const checks = { runtime, eventStore, readModels, delayedJobs, subscriptions };
    const ready = Object.values(checks).every((c) => c.ok);
    return { status: ready ? 'ready' : 'not_ready', checks, leader: this.leadership.isLeader() };
  }

  private async subscriptions(): Promise<Readiness['checks']['subscriptions']> {
    try {
      // Counted one past the limit: enough to tell, and no more read.
      const status = await this.runner.status(this.maxLag + 1);
      const failing = status.filter((s) => s.failing).map((s) => s.name);
      const lagging = status.filter((s) => s.lag > this.maxLag).map((s) => s.name);
      if (failing.length === 0 && lagging.length === 0) return { ok: true };
      const problems = [
        ...(failing.length ? [`failing: ${failing.join(', ')}`] : []),
        ...(lagging.length
          ? [`more than ${this.maxLag} events behind: ${lagging.join(', ')}`]
          : []),
      ];
      return { ok: false, error: problems.join('; '), failing, lagging };
    } catch (error) {
      failures.log('subscriptions', 'subscription status failed', error);
      return { ok: false, error: 'status not available' };
    }
  }
}
