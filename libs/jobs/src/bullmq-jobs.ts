import { IRedisClient, Job, JobsOptions, JobType, Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { consoleFailureSink, FailureSink, ThrottledLog } from '../../kernel/src/throttled-log';
import { settleWithin } from '../../kernel/src/within';
import { DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS, DEFAULT_CONCURRENCY } from './in-process-jobs';
import {
  DelayedJobs,
  HandlerErrorSink,
  handlerFailureLog,
  JobHandler,
  JobSlotsBusyError,
  PeriodicHandler,
  QueueCounts,
  QueueOptions,
} from './port';

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

/** What a BullMQ job carries: the logical id and runAt survive retries exactly. */
type StoredJob = { readonly jobId: string; readonly runAt: number; readonly payload: unknown };

/**
 * One pending run per logical id, kept by BullMQ's own deduplication (keyed by the id) with
 * `replace` (a delayed job is swapped for the new one in the same script) and
 * `keepLastIfActive` (scheduled while a run goes on, the new one is stored and enqueued by the
 * script that ends that run, the last one winning). So no schedule is lost between a remove and
 * an add, and runs of one id never overlap. Every add gets a new BullMQ id (`<token>~<id>`);
 * one exception remains, a run that is due and waiting for a worker: deduplication keeps it
 * and drops the add, which `flush` sees and answers by removing that run and adding again.
 * A run enqueued when another ends counts its delay from that end: it starts no earlier than
 * its runAt, later by at most what remained of the run it waited for.
 */
const DEDUPLICATION = { replace: true, keepLastIfActive: true } as const;
/** How long close waits for workers and queues still connecting (Redis may be down). */
const READY_WAIT_MS = 1000;
/** Adds dropped in a row (a due run taken ahead of ours each time) before `schedule` gives up. */
const MAX_ADD_ROUNDS = 5;
/** encodeURIComponent removes ':' (refused by BullMQ); the token before '~' keeps ids unique. */
const encodeId = (jobId: string): string => encodeURIComponent(jobId);
const logicalId = (id: string): string | null => {
  const tilde = id.indexOf('~');
  return tilde > 0 ? decodeURIComponent(id.slice(tilde + 1)) : null;
};

/** The queue of `every`'s job schedulers (one scheduler per name); not a delayed-job queue. */
export const PERIODIC_QUEUE = 'periodic';

/**
 * Our scripts, beside BullMQ's on the same connection. They read BullMQ's keys: the
 * deduplication key (`de:<id>`, the BullMQ id of the id's current run), the next run kept
 * while it runs (`dn:<id>`, a hash whose `jid` is that run's BullMQ id), the job hash.
 */
const SCRIPTS = {
  /**
   * Right after an add in the same pipeline: 1 when the add is in place (current, kept as
   * the next run, or already enqueued from there), else 0. A deduplication key naming a job
   * that no longer exists would drop every add: it is deleted then.
   * KEYS: de, dn, our job; ARGV: our id, queue key prefix.
   */
  fleetJobsLanded: {
    numberOfKeys: 3,
    lua: `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] or redis.call('HGET', KEYS[2], 'jid') == ARGV[1]
  or redis.call('EXISTS', KEYS[3]) == 1 then return 1 end
if current and redis.call('EXISTS', ARGV[2] .. current) == 0 then redis.call('DEL', KEYS[1]) end
return 0`,
  },
  /**
   * The data of the id's pending run: its current job unless that runs, else the next run
   * kept for after it. KEYS: de, active, dn; ARGV: queue key prefix.
   */
  fleetJobsPending: {
    numberOfKeys: 3,
    lua: `
local current = redis.call('GET', KEYS[1])
if not current then return false end
if redis.call('LPOS', KEYS[2], current) then return redis.call('HGET', KEYS[3], 'data') end
return redis.call('HGET', ARGV[1] .. current, 'data')`,
  },
  /**
   * After `cancel` removed (or could not remove: it runs) the job `ARGV[1]`: 0 when another
   * run took its place meanwhile (look again), else 1, having dropped the next run kept for
   * after a running one, or a deduplication key naming no job. KEYS: de, dn; ARGV: id, prefix.
   */
  fleetJobsCancelled: {
    numberOfKeys: 2,
    lua: `
local current = redis.call('GET', KEYS[1])
if not current then return 1 end
if current ~= ARGV[1] then return 0 end
if redis.call('EXISTS', ARGV[2] .. current) == 0 then redis.call('DEL', KEYS[1]) return 1 end
redis.call('DEL', KEYS[2])
return 1`,
  },
  /**
   * The period of a job scheduler whose next job exists, else nil (missing, or its next job
   * lost: a Redis restarted empty or flushed). KEYS: repeat; ARGV: scheduler id, prefix.
   */
  fleetJobsSchedulerEvery: {
    numberOfKeys: 1,
    lua: `
local nextAt = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not nextAt then return false end
if redis.call('EXISTS', ARGV[2] .. 'repeat:' .. ARGV[1] .. ':' .. nextAt) == 0 then return false end
return redis.call('HGET', KEYS[1] .. ':' .. ARGV[1], 'every')`,
  },
} as const;

const LIVE_STATES: JobType[] = [
  'waiting',
  'prioritized',
  'paused',
  'delayed',
  'active',
  'waiting-children',
];

type Registered = { readonly workers: readonly Worker[]; readonly options: QueueOptions };

/** A schedule waiting for the turn's flush; a later one of the same id in the turn replaces it. */
type Arming = {
  readonly queue: string;
  readonly jobId: string;
  readonly runAt: number;
  /** The payload as JSON, taken when `schedule` was called (a caller may change it after). */
  readonly payload: string;
  readonly waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
};

type Periodic = {
  readonly everyMs: number;
  readonly handler: PeriodicHandler;
  running: boolean;
  /** Re-creates the scheduler when Redis lost it (restarted empty, flushed). */
  watchdog: NodeJS.Timeout | null;
};

export class BullmqJobs implements DelayedJobs {
  private readonly prefix: string;
  /** Commands fail fast when Redis is down; workers instead wait, as BullMQ requires. */
  private readonly connection: IORedis;
  private readonly workerConnection: IORedis;
  private readonly queues = new Map<string, Queue>();
  private readonly registered = new Map<string, Registered>();
  private readonly periodic = new Map<string, Periodic>();
  private periodicWorker: Worker | null = null;
  private started = false;
  private closing: Promise<void> | null = null;
  /** A Redis that is down fails every connection and worker on each retry: logged once per 10 s. */
  private readonly errors: ThrottledLog;
  private readonly handlerFailed: HandlerErrorSink;
  /** Schedules of this turn, by queue and id, in call order. */
  private arming = new Map<string, Arming>();
  private flushArmed = false;
  private readonly flushing = new Set<Promise<void>>();
  /** Scheduler checks under way: close waits for them before it closes the queue they use. */
  private readonly upkeep = new Set<Promise<void>>();
  /** Makes this process's BullMQ ids unique; a counter follows it. */
  private readonly token = randomBytes(4).toString('hex');
  private added = 0;
  private client: Promise<IRedisClient> | null = null;
  private flushCount = 0;

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

  /** Pipelines that carried schedules so far: one per event-loop turn that scheduled, plus retries. */
  get flushes(): number {
    return this.flushCount;
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
    return new Promise<void>((resolve, reject) => {
      const key = `${queue}\u0000${jobId}`;
      const earlier = this.arming.get(key);
      // Re-inserted: the last schedule of an id is the one sent, in its own place.
      this.arming.delete(key);
      this.arming.set(key, {
        queue,
        jobId,
        runAt,
        payload: payloadJson,
        waiters: [...(earlier?.waiters ?? []), { resolve, reject }],
      });
      if (!this.flushArmed) {
        this.flushArmed = true;
        // setImmediate: the schedules made in this turn (a report's nodes, a reconcile's
        // slice) go in one pipeline.
        setImmediate(() => {
          const flushed = this.flush();
          this.flushing.add(flushed);
          void flushed.finally(() => this.flushing.delete(flushed));
        });
      }
    });
  }

  async cancel(queue: string, jobId: string): Promise<void> {
    // A schedule of this id not sent yet came before this cancel: it is done with.
    const key = `${queue}\u0000${jobId}`;
    const unsent = this.arming.get(key);
    if (unsent) {
      this.arming.delete(key);
      for (const waiter of unsent.waiters) waiter.resolve();
    }
    const q = this.queue(queue);
    const client = await this.redis();
    const keys = this.keysOf(q, jobId);
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
    const keys = this.keysOf(q, jobId);
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
    if (this.periodic.has(name)) throw new Error(`jobs: ${name} already runs periodically`);
    if (!(everyMs >= 1)) throw new Error(`jobs: ${name} needs a period of 1 ms or more`);
    const task: Periodic = { everyMs, handler, running: false, watchdog: null };
    this.periodic.set(name, task);
    if (this.started) this.startPeriodic(name, task);
  }

  async start(): Promise<void> {
    if (this.closing) throw new Error('jobs: closed');
    this.started = true;
    for (const [queue, { workers }] of this.registered) {
      for (const worker of workers) this.run(queue, worker);
    }
    for (const [name, task] of this.periodic) this.startPeriodic(name, task);
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

  /** Sends this turn's schedules; an add that deduplication dropped is tried again. */
  private async flush(): Promise<void> {
    this.flushArmed = false;
    let batch = [...this.arming.values()];
    this.arming = new Map();
    for (let round = 1; batch.length > 0; round++) {
      let dropped: Array<{ arming: Arming; blocking: string }>;
      try {
        dropped = await this.send(batch);
      } catch (error) {
        for (const arming of batch) settle(arming, error);
        return;
      }
      if (round === MAX_ADD_ROUNDS) {
        for (const { arming } of dropped)
          settle(arming, new JobSlotsBusyError(arming.queue, arming.jobId));
        return;
      }
      // Each was dropped for a run due and not started: moved, as a schedule moves a job.
      // Already started, it is not removed, and the next add is kept for after it.
      await Promise.all(
        dropped.map(({ arming, blocking }) =>
          this.queue(arming.queue)
            .remove(blocking)
            .catch(() => 0),
        ),
      );
      batch = dropped.map(({ arming }) => arming);
    }
  }

  /**
   * One pipeline: each add, then our check that it is in place. Settles those in place or
   * failed; returns those deduplication dropped, with the run that kept them out.
   */
  private async send(batch: Arming[]): Promise<Array<{ arming: Arming; blocking: string }>> {
    const client = await this.redis();
    this.flushCount++;
    const pipeline = client.pipeline();
    const sent: Array<{ arming: Arming; id: string }> = [];
    const now = Date.now();
    for (const arming of batch) {
      const q = this.queue(arming.queue);
      const id = `${this.token}${(this.added++).toString(36)}~${encodeId(arming.jobId)}`;
      const keys = this.keysOf(q, arming.jobId);
      const data: StoredJob = {
        jobId: arming.jobId,
        runAt: arming.runAt,
        payload: JSON.parse(arming.payload) as unknown,
      };
      try {
        const job = new Job<StoredJob>(q, arming.queue, data, this.jobOptions(arming, id, now), id);
        void job.addJob(pipeline).catch(() => undefined);
      } catch (error) {
        settle(arming, error);
        continue;
      }
      pipeline.runCommand('fleetJobsLanded', [keys.de, keys.dn, q.toKey(id), id, keys.prefix]);
      sent.push({ arming, id });
    }
    if (sent.length === 0) return [];
    const results = await pipeline.exec();
    if (!results) throw new Error('jobs: the schedule pipeline was discarded');
    const dropped: Array<{ arming: Arming; blocking: string }> = [];
    sent.forEach(({ arming, id }, i) => {
      const [addError, added] = results[2 * i];
      const [checkError, landed] = results[2 * i + 1];
      if (addError) return settle(arming, addError);
      if (typeof added === 'number' && added < 0)
        return settle(
          arming,
          new Error(`jobs: adding ${arming.queue}/${arming.jobId} failed (${added})`),
        );
      if (added === id || (!checkError && landed === 1)) return settle(arming, null);
      if (checkError) return settle(arming, checkError);
      dropped.push({ arming, blocking: String(added) });
    });
    return dropped;
  }

  private jobOptions(arming: Arming, id: string, now: number): JobsOptions {
    const options = this.registered.get(arming.queue)?.options ?? {};
    return {
      jobId: id,
      // With our own timestamp, BullMQ's timestamp + delay is exactly runAt.
      timestamp: now,
      delay: Math.max(0, arming.runAt - now),
      attempts: Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS),
      backoff: { type: 'exponential', delay: Math.max(0, options.backoffMs ?? DEFAULT_BACKOFF_MS) },
      deduplication: { id: encodeId(arming.jobId), ...DEDUPLICATION },
      // Ended runs go (the deduplication key goes with them); failed ones stay for counts
      // and inspection.
      removeOnComplete: true,
      removeOnFail: { count: this.options.keepFailed ?? 1000 },
    };
  }

  /** Whether a run of the id was scheduled while it runs (kept by deduplication for after it). */
  private async nextRunKept(queue: string, jobId: string): Promise<boolean> {
    const keys = this.keysOf(this.queue(queue), jobId);
    return (await this.connection.exists(keys.dn).catch(() => 0)) === 1;
  }

  private keysOf(q: Queue, jobId: string): { de: string; dn: string; prefix: string } {
    const id = encodeId(jobId);
    return { de: `${q.keys.de}:${id}`, dn: `${q.keys['']}dn:${id}`, prefix: q.keys[''] };
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

  private startPeriodic(name: string, task: Periodic): void {
    if (task.watchdog || this.closing) return;
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
    const worker = this.worker(
      PERIODIC_QUEUE,
      async (job: Job) => {
        const task = this.periodic.get(job.name);
        // Still running here (a period shorter than a run): this period is skipped.
        if (!task || task.running) return;
        task.running = true;
        try {
          await task.handler({ runAt: job.timestamp + (job.delay ?? 0) });
        } catch (error) {
          this.handlerFailed(PERIODIC_QUEUE, job.name, error, 1);
        } finally {
          task.running = false;
        }
      },
      Math.max(1, this.periodic.size),
    );
    this.periodicWorker = worker;
    this.run(PERIODIC_QUEUE, worker);
    return worker;
  }

  /** Creates the scheduler, or updates its period, unless it is in place with its next job. */
  private async keepScheduler(name: string, task: Periodic): Promise<void> {
    if (this.closing) return;
    try {
      const q = this.queue(PERIODIC_QUEUE);
      const client = await this.redis();
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
      if (this.connection.status !== 'ready') return;
      this.reportError(`scheduler ${name}`, error);
    }
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
    for (const task of this.periodic.values()) {
      if (task.watchdog) clearInterval(task.watchdog);
      task.watchdog = null;
    }
    await Promise.allSettled([...this.upkeep]);
    const workers = [...this.registered.values()].flatMap(({ workers }) => workers);
    if (this.periodicWorker) workers.push(this.periodicWorker);
    // BullMQ drops its error listeners on close: one closed while it still connects (made just
    // before, at start) would throw its "Connection is closed" once we quit the connection.
    if (!force) {
      const connecting = [...workers, ...this.queues.values()].map((c) => c.waitUntilReady());
      await settleWithin(Promise.allSettled(connecting), READY_WAIT_MS);
    }
    // Workers first: a handler finishing during close may still schedule on an open queue.
    await Promise.allSettled(workers.map((w) => w.close(force)));
    // What handlers scheduled in their last turn goes out before the connection does.
    while (this.flushArmed || this.flushing.size > 0) {
      if (this.flushArmed) await new Promise((resolve) => setImmediate(resolve));
      await Promise.allSettled([...this.flushing]);
    }
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

const settle = (arming: Arming, error: unknown): void => {
  for (const waiter of arming.waiters) {
    if (error) waiter.reject(error);
    else waiter.resolve();
  }
};
