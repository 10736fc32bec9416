import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import {
  CheckpointStore,
  SubscriptionRunner,
  projectionSubscriber,
  reactorSubscriber,
  reactorSubscriberName,
} from '@fleet/cqrs';
import { EventStore } from '@fleet/eventstore/port';
import { InProcessJobs } from '@fleet/jobs/in-process-jobs';
import { DelayedJobs } from '@fleet/jobs/port';
import { ReadModelStore } from '@fleet/readmodels/port';
import { Leadership } from './leadership.service';
import { SubscriptionsRegistry } from './subscriptions.registry';
import { CHECKPOINTS, DELAYED_JOBS, EVENT_STORE, READ_MODELS, RUNTIME_MODE } from './tokens';

/**
 * `serve` (the default) runs projections, reactors and jobs; `maintenance` opens and closes
 * the stores but starts nothing, so a command such as the rebuild owns the read models alone.
 */
export type RuntimeMode = 'serve' | 'maintenance';

/** What a periodic hook is told of the leader's term it runs in (its fencing epoch). */
export type LeaderTerm = { readonly epoch: number };

/**
 * Starts what runs in the background, in order: projections and reactors from their
 * checkpoints (the app is ready once projections caught up with the log as it was at start),
 * then delayed jobs, the leader election and periodic work. Stops them in reverse and closes
 * the stores on shutdown. In maintenance mode (provided as RUNTIME_MODE) it starts nothing and
 * only closes the stores.
 */
@Injectable()
export class Runtime implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('runtime');
  readonly mode: RuntimeMode;
  private startedAt: number | null = null;
  private caughtUpAtStart = false;
  private readonly startHooks: Array<() => Promise<void>> = [];
  private readonly repeated: Array<{
    name: string;
    everyMs: number;
    hook: (term: LeaderTerm) => Promise<void>;
  }> = [];
  /** Periodic work runs off this process's timers; the lease decides which process runs it. */
  private readonly periodic = new InProcessJobs();
  private readonly periodicRuns = new Map<string, number>();

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(CHECKPOINTS) private readonly checkpoints: CheckpointStore,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Leadership) private readonly leadership: Leadership,
    @Optional() @Inject(RUNTIME_MODE) mode?: RuntimeMode,
  ) {
    this.mode = mode ?? 'serve';
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.mode === 'maintenance') return;
    for (const projection of this.registry.projections) {
      await this.runner.add(projectionSubscriber(projection, this.readModels));
    }
    const head = await this.events.headPosition();
    const started = Date.now();
    await this.runner.start();
    await this.runner.caughtUp(head);
    this.caughtUpAtStart = true;
    this.logger.log(`read models caught up with ${head} events in ${Date.now() - started} ms`);
    // Reactors decide from read models too: they start once those reflect the log at start.
    for (const reactor of this.registry.reactors) {
      await this.runner.add(reactorSubscriber(reactor, this.checkpoints));
    }
    await this.jobs.start();
    for (const hook of this.startHooks) await hook();
    // The first try is awaited: a replica alone with its Redis leads from its start.
    await this.leadership.start();
    for (const { name, everyMs, hook } of this.repeated) {
      this.periodic.every(name, everyMs, () => this.runIfLeader(name, hook));
    }
    await this.periodic.start();
    this.startedAt = Date.now();
  }

  /**
   * The one place periodic work is held to the leader: every replica keeps the timers, and
   * a period finds out here whether this one runs it.
   */
  private async runIfLeader(
    name: string,
    hook: (term: LeaderTerm) => Promise<void>,
  ): Promise<void> {
    const epoch = this.leadership.epoch();
    if (epoch === null) return;
    // Fencing: the term is in the log before its work appends (leadership.service.ts).
    if (!(await this.leadership.termRecorded(epoch))) return;
    this.periodicRuns.set(name, (this.periodicRuns.get(name) ?? 0) + 1);
    await hook({ epoch }).catch((e: unknown) =>
      this.logger.warn(`periodic ${name} failed: ${String(e)}`),
    );
  }

  /** Runs once everything has started (reconcilers that need read models and jobs). */
  afterStart(hook: () => Promise<void>): void {
    this.startHooks.push(hook);
  }

  /**
   * Runs `hook` every `everyMs` while serving, first one period after start (reconcilers,
   * repairs re-arming jobs a Redis lost, the autoscaler), in the leader only: of the processes
   * sharing Redis, the one holding the lease (without Redis, this process). A run still going
   * when the next is due makes it skip; a failing run is logged and the next one tries again.
   * Stopped before the jobs at shutdown.
   */
  every(name: string, everyMs: number, hook: (term: LeaderTerm) => Promise<void>): void {
    if (this.repeated.some((r) => r.name === name))
      throw new Error(`runtime: ${name} repeats already`);
    this.repeated.push({ name, everyMs, hook });
  }

  get ready(): boolean {
    return this.caughtUpAtStart && this.startedAt !== null;
  }

  /** Periods run here so far, by name (metrics). */
  periodicRunCounts(): ReadonlyMap<string, number> {
    return this.periodicRuns;
  }

  async onApplicationShutdown(): Promise<void> {
    // Periodic work ends here first, then the lease goes: the next leader starts at once.
    await this.periodic.close();
    if (this.mode === 'serve') {
      await this.leadership.resign().catch((e) => this.logger.warn(`resigning: ${String(e)}`));
    }
    // Reactors schedule and cancel jobs: they stop before the jobs client closes, instead of
    // sending commands on a connection being quit. What they have not handled stays behind
    // their checkpoints for the next start; projections run on for commands still finishing.
    await this.runner.remove(this.registry.reactors.map(reactorSubscriberName));
    await this.jobs.close().catch((e) => this.logger.warn(`closing jobs: ${String(e)}`));
    await this.runner.stop();
    await this.checkpoints.close();
    await this.readModels.close();
    await this.events.close();
  }
}
