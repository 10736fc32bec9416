import { Job, Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { consoleFailureSink, FailureSink, ThrottledLog } from '../../kernel/src/throttled-log';
import { DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS, DEFAULT_CONCURRENCY } from './in-process-jobs';
import {
  DelayedJobs,
  HandlerErrorSink,
  handlerFailureLog,
  JobHandler,
  JobSlotsBusyError,
  QueueCounts,
  QueueOptions,
} from './port';

export type BullmqJobsOptions = {
  readonly redisUrl: string;
  /** Redis key prefix; tests use a unique one per run so they never see each other's jobs. */
  readonly prefix?: string;
  /** How long a worker's lock on a running job lasts unrenewed (BullMQ default 30 s). */
  readonly lockDuration?: number;
  /** How often workers look for jobs whose lock expired, i.e. whose process died (default 30 s). */
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

/** What a BullMQ job carries: the logical id and runAt survive slots and retries exactly. */
type StoredJob = { readonly jobId: string; readonly runAt: number; readonly payload: unknown };

/**
 * Replace-while-active. BullMQ ignores `add` under an id that still exists, and cannot remove
 * a running (locked) job. So each logical job has two BullMQ ids, slot `a` and slot `b`:
 * `schedule` removes whatever is pending in both and adds to a slot that is not running.
 * A handler that reschedules its own job (a ticker) thus lands in the other slot, and the
 * new job is a real persisted job from the start, so a crash loses nothing. The price: if
 * the new time comes before the running handler ends, the two runs overlap, which handlers
 * tolerate since they re-check state. Only when both slots are running does `schedule` throw.
 */
const SLOTS = ['a', 'b'] as const;
/** encodeURIComponent removes ':' (refused by BullMQ); the slot prefix keeps ids non-integer. */
const slotId = (slot: string, jobId: string): string => `${slot}~${encodeURIComponent(jobId)}`;
const logicalId = (id: string): string | null => {
  const tilde = id.indexOf('~');
  return tilde === 1 ? decodeURIComponent(id.slice(2)) : null;
};

const PENDING_STATES = new Set(['waiting', 'delayed', 'prioritized', 'paused', 'waiting-children']);

type Registered = { readonly workers: readonly Worker[]; readonly options: QueueOptions };

export class BullmqJobs implements DelayedJobs {
  private readonly prefix: string;
  /** Commands fail fast when Redis is down; workers instead wait, as BullMQ requires. */
  private readonly connection: IORedis;
  private readonly workerConnection: IORedis;
  private readonly queues = new Map<string, Queue>();
  private readonly registered = new Map<string, Registered>();
  private started = false;
  private closing: Promise<void> | null = null;
  /** A Redis that is down fails every connection and worker on each retry: logged once per 10 s. */
  private readonly errors: ThrottledLog;
  private readonly handlerFailed: HandlerErrorSink;

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
  }

  registeredQueues(): string[] {
    return [...this.registered.keys()];
  }

  register<P>(queue: string, handler: JobHandler<P>, options: QueueOptions = {}): void {
    if (this.registered.has(queue)) throw new Error(`jobs: queue ${queue} is already registered`);
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    const fetchers = Math.max(1, Math.min(concurrency, options.fetchers ?? 1));
    const workers = Array.from({ length: fetchers }, (_, i) => {
      const worker = new Worker<StoredJob>(
        queue,
        async (job: Job<StoredJob>) => {
          const { jobId, runAt, payload } = job.data;
          const attempt = job.attemptsMade + 1;
          try {
            await (handler as JobHandler<unknown>)(payload, { queue, jobId, attempt, runAt });
          } catch (error) {
            this.handlerFailed(queue, jobId, error, attempt);
            throw error;
          }
        },
        {
          connection: this.workerConnection,
          prefix: this.prefix,
          autorun: false,
          // The first fetchers take the remainder: the total is exactly `concurrency`.
          concurrency: Math.floor(concurrency / fetchers) + (i < concurrency % fetchers ? 1 : 0),
          // BullMQ spreads these over its defaults, so an undefined must not be passed.
          ...(this.options.lockDuration !== undefined && {
            lockDuration: this.options.lockDuration,
          }),
          ...(this.options.stalledInterval !== undefined && {
            stalledInterval: this.options.stalledInterval,
          }),
          maxStalledCount: this.options.maxStalledCount ?? 3,
        },
      );
      worker.on('error', (error) => this.reportError(`worker ${queue}`, error));
      return worker;
    });
    this.registered.set(queue, { workers, options });
    if (this.started) for (const worker of workers) this.run(queue, worker);
  }

  async schedule<P>(queue: string, jobId: string, runAt: number, payload: P): Promise<void> {
    const q = this.queue(queue);
    // Both slots in one round trip. 1 when removed or absent (completed jobs are removed at
    // once), 0 when running.
    const removed = await Promise.all(SLOTS.map((slot) => q.remove(slotId(slot, jobId))));
    const freeSlot = SLOTS.find((_, i) => removed[i] === 1);
    const free = freeSlot === undefined ? null : slotId(freeSlot, jobId);
    if (free === null) {
      throw new JobSlotsBusyError(queue, jobId);
    }
    const options = this.registered.get(queue)?.options ?? {};
    const now = Date.now();
    const data: StoredJob = { jobId, runAt, payload: payload ?? null };
    await q.add(queue, data, {
      jobId: free,
      // With our own timestamp, BullMQ's timestamp + delay is exactly runAt.
      timestamp: now,
      delay: Math.max(0, runAt - now),
      attempts: Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS),
      backoff: { type: 'exponential', delay: Math.max(0, options.backoffMs ?? DEFAULT_BACKOFF_MS) },
      // A finished job must go, or BullMQ would ignore the next add under its id; failed ones
      // stay for counts and inspection, and `schedule` removes them before adding.
      removeOnComplete: true,
      removeOnFail: { count: this.options.keepFailed ?? 1000 },
    });
  }

  async cancel(queue: string, jobId: string): Promise<void> {
    const q = this.queue(queue);
    // A running handler is not interrupted; it re-checks state anyway.
    await Promise.all(SLOTS.map((slot) => q.remove(slotId(slot, jobId))));
  }

  async scheduledAt(queue: string, jobId: string): Promise<number | null> {
    const q = this.queue(queue);
    let at: number | null = null;
    for (const slot of SLOTS) {
      const job = (await q.getJob(slotId(slot, jobId))) as Job<StoredJob> | undefined;
      if (!job || !PENDING_STATES.has(await job.getState())) continue;
      at = Math.max(at ?? -Infinity, job.data.runAt);
    }
    return at;
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
    const ids = await this.queue(queue).getRanges(
      ['waiting', 'prioritized', 'paused', 'delayed', 'active', 'waiting-children'],
      0,
      -1,
    );
    const out = new Set<string>();
    for (const id of ids) {
      const jobId = logicalId(id);
      if (jobId !== null) out.add(jobId);
    }
    return out;
  }

  async start(): Promise<void> {
    if (this.closing) throw new Error('jobs: closed');
    this.started = true;
    for (const [queue, { workers }] of this.registered) {
      for (const worker of workers) this.run(queue, worker);
    }
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

  private async shutdown(force: boolean): Promise<void> {
    // Workers first: a handler finishing during close may still schedule on an open queue.
    await Promise.allSettled(
      [...this.registered.values()].flatMap(({ workers }) => workers.map((w) => w.close(force))),
    );
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
