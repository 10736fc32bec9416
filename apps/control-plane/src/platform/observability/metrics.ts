import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { PipelineObserver, SubscriptionRunner } from '@fleet/cqrs';
import { DelayedJobs } from '@fleet/jobs/port';
import { settleWithin } from '@fleet/kernel';
import { Leadership } from '../runtime/leadership.service';
import { Runtime } from '../runtime/runtime.service';
import { DELAYED_JOBS } from '../runtime/tokens';
import { CountedHistogram } from './counted-histogram';
import { LabelIndex } from './label-index';

type Outcome = Parameters<PipelineObserver>[0];

/** A queue's backlog not read within this is left out of the scrape (Redis out of reach). */
export const QUEUE_COUNT_WAIT_MS = 500;

/** Seconds; commands and requests are mostly well under 100 ms, slow ones matter most. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A counter whose values are read, when scraped, off tallies kept elsewhere on the hot path. */
const countedAtScrape = <L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  tallies: () => Iterable<{ readonly labels: Readonly<Record<L, string>>; readonly count: number }>,
): void => {
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, count } of tallies()) this.inc(labels, count);
    },
  });
};

/**
 * The app's Prometheus metrics, in a registry of its own (never prom-client's global one, so
 * two apps in one process, as in tests, do not collide). Background state (subscription lag,
 * job backlogs) is read on scrape rather than pushed.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  /**
   * Every request is observed here once (prom-client's Histogram and Counter hash the label
   * set on each call); the request counter is read off its counts when scraped.
   */
  private readonly httpDuration = new CountedHistogram(
    'fleet_http_request_duration_seconds',
    'HTTP request latency, by method, route template and status',
    ['method', 'route', 'status'],
    LATENCY_BUCKETS,
    this.registry,
  );
  /**
   * Commands handled, tallied here by label set and handed to `fleet_commands_total` when
   * scraped (every command passes here; prom-client's Counter sorts and hashes labels per call).
   */
  private readonly commands = new LabelIndex<
    'command' | 'aggregate' | 'result',
    { labels: { command: string; aggregate: string; result: string }; count: number }
  >(['command', 'aggregate', 'result']);
  /** Takes the no-ops of a whole `decideNoops` pass in one call (see CountedHistogram). */
  private readonly commandDuration = new CountedHistogram(
    'fleet_command_duration_seconds',
    'Command latency (load, decide, append, retries), by command type and result',
    ['command', 'result'],
    LATENCY_BUCKETS,
    this.registry,
  );
  private readonly eventsAppended = new Counter({
    name: 'fleet_events_appended_total',
    help: 'Events appended by commands, by aggregate',
    labelNames: ['aggregate'] as const,
    registers: [this.registry],
  });

  constructor(
    @Inject(SubscriptionRunner) runner: SubscriptionRunner,
    @Inject(DELAYED_JOBS) jobs: DelayedJobs,
    @Inject(Leadership) leadership: Pick<Leadership, 'isLeader' | 'epoch'>,
    @Inject(Runtime) runtime: Pick<Runtime, 'periodicRunCounts'>,
  ) {
    collectDefaultMetrics({ register: this.registry });
    this.leaseMetrics(leadership, runtime);
    const commands = this.commands;
    countedAtScrape(
      this.registry,
      'fleet_commands_total',
      'Commands handled by the pipeline, by command type, aggregate and result',
      ['command', 'aggregate', 'result'],
      () => commands.values(),
    );
    const answered = this.httpDuration;
    countedAtScrape(
      this.registry,
      'fleet_http_requests_total',
      'HTTP requests answered, by method, route template and status',
      ['method', 'route', 'status'],
      () => answered.counts(),
    );
    new Gauge({
      name: 'fleet_subscription_lag_events',
      help: 'Events in the log a projection or reactor has not handled yet (counted up to 10,000)',
      labelNames: ['subscription'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const s of await runner.status()) this.set({ subscription: s.name }, s.lag);
      },
    });
    new Gauge({
      name: 'fleet_subscription_failing',
      help: '1 while a projection or reactor is retrying a failed page',
      labelNames: ['subscription'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const s of await runner.status())
          this.set({ subscription: s.name }, s.failing ? 1 : 0);
      },
    });
    new Gauge({
      name: 'fleet_delayed_jobs',
      help: 'Delayed jobs by queue and state (waiting, delayed, failed)',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        await Promise.all(
          jobs.registeredQueues().map(async (queue) => {
            // One unreachable queue must not fail or hold up the whole scrape (the Redis
            // client retries for seconds): its series just go missing.
            const read = await settleWithin(jobs.counts(queue), QUEUE_COUNT_WAIT_MS);
            if (read.status !== 'fulfilled') return;
            const counts = read.value;
            this.set({ queue, state: 'waiting' }, counts.waiting);
            this.set({ queue, state: 'delayed' }, counts.delayed);
            this.set({ queue, state: 'failed' }, counts.failed);
          }),
        );
      },
    });
  }

  /** Beside each replica's subscription lag: whether it leads, and what its loops ran. */
  private leaseMetrics(
    leadership: Pick<Leadership, 'isLeader' | 'epoch'>,
    runtime: Pick<Runtime, 'periodicRunCounts'>,
  ): void {
    new Gauge({
      name: 'fleet_leader',
      help: '1 while this replica holds the leader lease (and runs the periodic work), else 0',
      registers: [this.registry],
      collect() {
        this.set(leadership.isLeader() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'fleet_leader_epoch',
      help: 'The fencing epoch of the lease term this replica leads (0 when it does not lead)',
      registers: [this.registry],
      collect() {
        this.set(leadership.epoch() ?? 0);
      },
    });
    countedAtScrape(
      this.registry,
      'fleet_periodic_runs_total',
      'Periods of background work run by this replica (the leader), by name',
      ['name'],
      () => [...runtime.periodicRunCounts()].map(([name, count]) => ({ labels: { name }, count })),
    );
  }

  observeRequest(method: string, route: string, status: number, ms: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, ms / 1000);
  }

  observeCommand(outcome: Outcome): void {
    const count = outcome.count ?? 1;
    // The outcome carries the labels: looked up as it is, nothing built per command.
    const tally = this.commands.get(outcome);
    if (tally !== undefined) tally.count += count;
    else {
      const { command, aggregate, result } = outcome;
      const labels = { command, aggregate, result };
      this.commands.add(labels, { labels, count });
    }
    this.commandDuration.observe(outcome, outcome.ms / 1000, count);
    if (outcome.events > 0)
      this.eventsAppended.inc({ aggregate: outcome.aggregate }, outcome.events);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
