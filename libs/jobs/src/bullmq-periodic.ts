import { IRedisClient, Job, Queue, Worker } from 'bullmq';
import { HandlerErrorSink, PeriodicHandler } from './port';

/** The queue of `every`'s job schedulers (one scheduler per name); not a delayed-job queue. */
export const PERIODIC_QUEUE = 'periodic';

type Periodic = {
  readonly everyMs: number;
  readonly handler: PeriodicHandler;
  running: boolean;
  /** Re-creates the scheduler when Redis lost it (restarted empty, flushed). */
  watchdog: NodeJS.Timeout | null;
};

export type PeriodicContext = {
  worker<T>(
    queue: string,
    processor: (job: Job<T>) => Promise<void>,
    concurrency: number,
  ): Worker<T>;
  /** Starts a worker (once). */
  run(queue: string, worker: Worker): void;
  queue(name: string): Queue;
  /** BullMQ's client with our scripts defined. */
  redis(): Promise<IRedisClient>;
  closing(): boolean;
  /** Whether the command connection is up (a failed check is then worth a line). */
  connected(): boolean;
  reportError(context: string, error: unknown): void;
  readonly handlerFailed: HandlerErrorSink;
};

/**
 * `every`'s runs: one BullMQ job scheduler per name, its runs taken by one worker of the
 * `periodic` queue, so a period runs once across processes. Each process checks its schedulers
 * once a period and re-creates one Redis lost (restarted empty, flushed).
 */
export class PeriodicRuns {
  private readonly periodic = new Map<string, Periodic>();
  private periodicWorker: Worker | null = null;
  /** Scheduler checks under way: close waits for them before it closes the queue they use. */
  private readonly upkeep = new Set<Promise<void>>();

  constructor(private readonly context: PeriodicContext) {}

  every(name: string, everyMs: number, handler: PeriodicHandler, started: boolean): void {
    if (this.periodic.has(name)) throw new Error(`jobs: ${name} already runs periodically`);
    if (!(everyMs >= 1)) throw new Error(`jobs: ${name} needs a period of 1 ms or more`);
    const task: Periodic = { everyMs, handler, running: false, watchdog: null };
    this.periodic.set(name, task);
    if (started) this.startPeriodic(name, task);
  }

  start(): void {
    for (const [name, task] of this.periodic) this.startPeriodic(name, task);
  }

  /** Stops the checks (waiting for those under way); the worker, if any, is the caller's to close. */
  async stop(): Promise<Worker | null> {
    for (const task of this.periodic.values()) {
      if (task.watchdog) clearInterval(task.watchdog);
      task.watchdog = null;
    }
    await Promise.allSettled([...this.upkeep]);
    return this.periodicWorker;
  }

  private startPeriodic(name: string, task: Periodic): void {
    if (task.watchdog || this.context.closing()) return;
    const worker = this.periodicWorkerFor();
    worker.concurrency = Math.max(1, this.periodic.size);
    const keep = (): void => {
      const kept = this.keepScheduler(name, task);
      this.upkeep.add(kept);
      void kept.finally(() => this.upkeep.delete(kept));
    };
    keep();
    // One read a period in each process: the runs themselves are the scheduler's, once.
    task.watchdog = setInterval(keep, task.everyMs);
    task.watchdog.unref();
  }

  private periodicWorkerFor(): Worker {
    if (this.periodicWorker) return this.periodicWorker;
    const worker = this.context.worker(
      PERIODIC_QUEUE,
      async (job: Job) => {
        const task = this.periodic.get(job.name);
        // Still running here (a period shorter than a run): this period is skipped.
        if (!task || task.running) return;
        task.running = true;
        try {
          await task.handler({ runAt: job.timestamp + (job.delay ?? 0) });
        } catch (error) {
          this.context.handlerFailed(PERIODIC_QUEUE, job.name, error, 1);
        } finally {
          task.running = false;
        }
      },
      Math.max(1, this.periodic.size),
    );
    this.periodicWorker = worker;
    this.context.run(PERIODIC_QUEUE, worker);
    return worker;
  }

  /** Creates the scheduler, or updates its period, unless it is in place with its next job. */
  private async keepScheduler(name: string, task: Periodic): Promise<void> {
    if (this.context.closing()) return;
    try {
      const q = this.context.queue(PERIODIC_QUEUE);
      const client = await this.context.redis();
      const every = (await client.runCommand('fleetJobsSchedulerEvery', [
        q.keys.repeat,
        name,
        q.keys[''],
      ])) as string | null;
      if (every !== null && Number(every) === task.everyMs) return;
      await q.upsertJobScheduler(
        name,
        { every: task.everyMs, startDate: Date.now() + task.everyMs },
        { name, data: {}, opts: { attempts: 1, removeOnComplete: true, removeOnFail: true } },
      );
    } catch (error) {
      // Redis out of reach is the connection's own line (once per 10 s); the next check retries.
      if (!this.context.connected()) return;
      this.context.reportError(`scheduler ${name}`, error);
    }
  }
}
