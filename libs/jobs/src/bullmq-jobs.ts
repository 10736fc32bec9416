import { IRedisClient, Job, JobType, Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { consoleFailureSink, FailureSink, ThrottledLog } from '@fleet/kernel/throttled-log';
import { settleWithin } from '@fleet/kernel/within';
import { PERIODIC_QUEUE, PeriodicRuns } from './bullmq-periodic';
import { MAX_ADD_ROUNDS, Schedules } from './bullmq-schedules';
import { SCRIPTS, StoredJob, keysOf, logicalId } from './bullmq-scripts';
import { DEFAULT_ATTEMPTS, DEFAULT_CONCURRENCY } from './in-process-jobs';
import {
  DelayedJobs,
  HandlerErrorSink,
  handlerFailureLog,
  JobHandler,
  PeriodicHandler,
  QueueCounts,
  QueueOptions,
} from './port';

export { PERIODIC_QUEUE } from './bullmq-periodic';

/** A worker's lock on a running job lasts this long unrenewed (BullMQ's default is 30 s). */
export const DEFAULT_LOCK_MS = 10_000;
/** Locks are renewed this often (BullMQ: half the lock's duration). */
export const DEFAULT_LOCK_RENEW_MS = 1000;
/** How often workers look for running jobs whose lock expired (BullMQ's default is 30 s). */
export const DEFAULT_STALLED_INTERVAL_MS = 2000;

export type BullmqJobsOptions = {
  readonly redisUrl: string;
  /** Redis key prefix; tests use a unique one per run so they never see each other's jobs. */
  readonly prefix?: string;
  /**
   * How long a worker's lock on a running job lasts unrenewed (default 10 s, renewed every
   * 1 s): an event loop stopped up to ~8.5 s (a 5 s pause with room to spare) keeps its jobs,
   * and a dead process's jobs run again 10-14 s after it died.
   */
  readonly lockDuration?: number;
  /** How often a live worker renews its locks (default 1 s); a pause longer than the lock less this loses them. */
  readonly lockRenewTime?: number;
  /** How often workers look for jobs whose lock expired, i.e. whose process died (default 2 s). */
  readonly stalledInterval?: number;
  /** Redeliveries after stalls before a job is failed (default 3: at-least-once matters more). */
  readonly maxStalledCount?: number;
  /** Exhausted jobs kept for `counts().failed` and inspection. */
  readonly keepFailed?: number;
  readonly onError?: (context: string, error: unknown) => void;
  /** Where connection and worker failures are logged (throttled); default stderr. */
  readonly log?: FailureSink;
  /** A handler that threw (retried, or counted failed); default: logged to `log`, throttled. */
  readonly onHandlerError?: HandlerErrorSink;
};

/** How long close waits for workers and queues still connecting (Redis may be down). */
const READY_WAIT_MS = 1000;

const LIVE_STATES: JobType[] = [
  'waiting',
  'prioritized',
  'paused',
  'delayed',
  'active',
  'waiting-children',
];

type Registered = { readonly workers: readonly Worker[]; readonly options: QueueOptions };

/**
 * Delayed jobs on BullMQ: one pending run per logical id (bullmq-scripts.ts), the turn's
 * schedules sent in one pipeline (bullmq-schedules.ts), `every` as job schedulers
 * (bullmq-periodic.ts), workers that hold a job's lock while its handler runs.
 */
export class BullmqJobs implements DelayedJobs {
  private readonly prefix: string;
  /** Commands fail fast when Redis is down; workers instead wait, as BullMQ requires. */
  private readonly connection: IORedis;
  private readonly workerConnection: IORedis;
  private readonly queues = new Map<string, Queue>();
  private readonly registered = new Map<string, Registered>();
  private readonly schedules: Schedules;
  private readonly periodic: PeriodicRuns;
  private started = false;
  private closing: Promise<void> | null = null;
  /** A Redis that is down fails every connection and worker on each retry: logged once per 10 s. */
  private readonly errors: ThrottledLog;
  private readonly handlerFailed: HandlerErrorSink;
  private client: Promise<IRedisClient> | null = null;

  constructor(private readonly options: BullmqJobsOptions) {
    this.prefix = options.prefix ?? 'fleet';
    this.errors = new ThrottledLog(options.log ?? consoleFailureSink);
    this.handlerFailed = options.onHandlerError ?? handlerFailureLog(options.log);
    this.connection = new IORedis(options.redisUrl, { maxRetriesPerRequest: 3 });
    this.workerConnection = new IORedis(options.redisUrl, { maxRetriesPerRequest: null });
    this.connection.on('error', (error) => this.reportError('redis', error));
    this.workerConnection.on('error', (error) => this.reportError('redis', error));
    // Connected (again): the next failure is news, logged at once.
    this.connection.on('ready', () => this.errors.clear());
    this.schedules = new Schedules({
      queue: (name) => this.queue(name),
      redis: () => this.redis(),
      options: (queue) => this.registered.get(queue)?.options ?? {},
      keepFailed: options.keepFailed ?? 1000,
    });
    this.periodic = new PeriodicRuns({
      worker: (queue, processor, concurrency) => this.worker(queue, processor, concurrency),
      run: (queue, worker) => this.run(queue, worker),
      queue: (name) => this.queue(name),
      redis: () => this.redis(),
      closing: () => this.closing !== null,
      connected: () => this.connection.status === 'ready',
      reportError: (context, error) => this.reportError(context, error),
      handlerFailed: this.handlerFailed,
    });
  }

  /** Pipelines that carried schedules so far: one per event-loop turn that scheduled, plus retries. */
  get flushes(): number {
    return this.schedules.flushes;
  }

  registeredQueues(): string[] {
    return [...this.registered.keys()];
  }

  register<P>(queue: string, handler: JobHandler<P>, options: QueueOptions = {}): void {
    if (this.registered.has(queue)) throw new Error(`jobs: queue ${queue} is already registered`);
    if (queue === PERIODIC_QUEUE) throw new Error(`jobs: queue ${queue} is reserved for every()`);
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    const fetchers = Math.max(1, Math.min(concurrency, options.fetchers ?? 1));
    const attempts = Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS);
    const workers = Array.from({ length: fetchers }, (_, i) =>
      this.worker(
        queue,
        async (job: Job<StoredJob>) => {
          const { jobId, runAt, payload } = job.data;
          const attempt = job.attemptsMade + 1;
          try {
            await (handler as JobHandler<unknown>)(payload, { queue, jobId, attempt, runAt });
          } catch (error) {
            this.handlerFailed(queue, jobId, error, attempt);
            // Scheduled again while it ran: that run replaces the retry (ending this one
            // enqueues it); retrying as well would run the id twice.
            if (attempt < attempts && (await this.nextRunKept(queue, jobId))) return;
            throw error;
          }
        },
        // The first fetchers take the remainder: the total is exactly `concurrency`.
        Math.floor(concurrency / fetchers) + (i < concurrency % fetchers ? 1 : 0),
      ),
    );
    this.registered.set(queue, { workers, options });
    if (this.started) for (const worker of workers) this.run(queue, worker);
  }

  schedule<P>(queue: string, jobId: string, runAt: number, payload: P): Promise<void> {
    let payloadJson: string;
    try {
      payloadJson = JSON.stringify(payload ?? null);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.schedules.add(queue, jobId, runAt, payloadJson);
  }

  async cancel(queue: string, jobId: string): Promise<void> {
    // A schedule of this id not sent yet came before this cancel: it is done with.
    this.schedules.forget(queue, jobId);
    const q = this.queue(queue);
    const client = await this.redis();
    const keys = keysOf(q, jobId);
    for (let round = 0; round < MAX_ADD_ROUNDS; round++) {
      const current = await this.connection.get(keys.de);
      if (current === null) return;
      // A running handler is not interrupted (remove refuses it); it re-checks state anyway.
      await q.remove(current);
      const settled = await client.runCommand('fleetJobsCancelled', [
        keys.de,
        keys.dn,
        current,
        keys.prefix,
      ]);
      if (settled === 1) return;
    }
  }

  async scheduledAt(queue: string, jobId: string): Promise<number | null> {
    const q = this.queue(queue);
    const client = await this.redis();
    const keys = keysOf(q, jobId);
    const data = (await client.runCommand('fleetJobsPending', [
      keys.de,
      q.keys.active,
      keys.dn,
      keys.prefix,
    ])) as string | null;
    return data ? (JSON.parse(data) as StoredJob).runAt : null;
  }

  async counts(queue: string): Promise<QueueCounts> {
    const c = await this.queue(queue).getJobCounts(
      'waiting',
      'prioritized',
      'paused',
      'delayed',
      'active',
      'failed',
    );
    return {
      waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.paused ?? 0),
      delayed: c.delayed ?? 0,
      running: c.active ?? 0,
      failed: c.failed ?? 0,
    };
  }

  async liveJobIds(queue: string): Promise<Set<string>> {
    // One script reading the state lists; ids are listed, never loaded.
    const ids = await this.queue(queue).getRanges(LIVE_STATES, 0, -1);
    const out = new Set<string>();
    for (const id of ids) {
      const jobId = logicalId(id);
      if (jobId !== null) out.add(jobId);
    }
    return out;
  }

  every(name: string, everyMs: number, handler: PeriodicHandler): void {
    this.periodic.every(name, everyMs, handler, this.started);
  }

  async start(): Promise<void> {
    if (this.closing) throw new Error('jobs: closed');
    this.started = true;
    for (const [queue, { workers }] of this.registered) {
      for (const worker of workers) this.run(queue, worker);
    }
    this.periodic.start();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown(false);
    return this.closing;
  }

  /**
   * Stops at once without waiting for running handlers, as a dying process would: their
   * jobs stay locked until the lock expires, then another worker takes them again.
   */
  kill(): Promise<void> {
    this.closing ??= this.shutdown(true);
    return this.closing;
  }

  async ping(): Promise<void> {
    await this.connection.ping();
  }

  /** Whether a run of the id was scheduled while it runs (kept by deduplication for after it). */
  private async nextRunKept(queue: string, jobId: string): Promise<boolean> {
    const keys = keysOf(this.queue(queue), jobId);
    return (await this.connection.exists(keys.dn).catch(() => 0)) === 1;
  }

  /** BullMQ's client over our connection, with our scripts defined beside BullMQ's. */
  private redis(): Promise<IRedisClient> {
    this.client ??= this.queue(PERIODIC_QUEUE).client.then(
      (client) => {
        for (const [name, script] of Object.entries(SCRIPTS)) client.defineCommand(name, script);
        return client;
      },
      (error: unknown) => {
        this.client = null;
        throw error;
      },
    );
    return this.client;
  }

  private worker<T>(
    queue: string,
    processor: (job: Job<T>) => Promise<void>,
    concurrency: number,
  ): Worker<T> {
    const worker = new Worker<T>(queue, processor, {
      connection: this.workerConnection,
      prefix: this.prefix,
      autorun: false,
      concurrency,
      lockDuration: this.options.lockDuration ?? DEFAULT_LOCK_MS,
      lockRenewTime: this.options.lockRenewTime ?? DEFAULT_LOCK_RENEW_MS,
      stalledInterval: this.options.stalledInterval ?? DEFAULT_STALLED_INTERVAL_MS,
      maxStalledCount: this.options.maxStalledCount ?? 3,
    });
    worker.on('error', (error) => this.reportError(`worker ${queue}`, error));
    return worker;
  }

  private async shutdown(force: boolean): Promise<void> {
    const periodicWorker = await this.periodic.stop();
    const workers = [...this.registered.values()].flatMap(({ workers }) => workers);
    if (periodicWorker) workers.push(periodicWorker);
    // BullMQ drops its error listeners on close: one closed while it still connects (made just
    // before, at start) would throw its "Connection is closed" once we quit the connection.
    if (!force) {
      const connecting = [...workers, ...this.queues.values()].map((c) => c.waitUntilReady());
      await settleWithin(Promise.allSettled(connecting), READY_WAIT_MS);
    }
    // Workers first: a handler finishing during close may still schedule on an open queue.
    await Promise.allSettled(workers.map((w) => w.close(force)));
    // What handlers scheduled in their last turn goes out before the connection does.
    await this.schedules.sent();
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    for (const connection of [this.workerConnection, this.connection]) {
      if (force) connection.disconnect();
      else await connection.quit().catch(() => connection.disconnect());
    }
  }

  private run(queue: string, worker: Worker): void {
    if (worker.isRunning()) return;
    worker.run().catch((error: unknown) => this.reportError(`worker ${queue}`, error));
  }

  private queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, { connection: this.connection, prefix: this.prefix });
      q.on('error', (error) => this.reportError(`queue ${name}`, error));
      this.queues.set(name, q);
    }
    return q;
  }

  private reportError(context: string, error: unknown): void {
    if (this.options.onError) return this.options.onError(context, error);
    this.errors.failure(`jobs: ${context} failed`, error);
  }
}
