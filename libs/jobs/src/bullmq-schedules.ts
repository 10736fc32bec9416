import { IRedisClient, Job, JobsOptions, Queue } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { DEDUPLICATION, StoredJob, encodeId, keysOf } from './bullmq-scripts';
import { DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS } from './in-process-jobs';
import { JobSlotsBusyError, QueueOptions } from './port';

/** Adds dropped in a row (a due run taken ahead of ours each time) before `schedule` gives up. */
export const MAX_ADD_ROUNDS = 5;

/** A schedule waiting for the turn's flush; a later one of the same id in the turn replaces it. */
type Arming = {
  readonly queue: string;
  readonly jobId: string;
  readonly runAt: number;
  /** The payload as JSON, taken when `schedule` was called (a caller may change it after). */
  readonly payload: string;
  readonly waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
};

const settle = (arming: Arming, error: unknown): void => {
  for (const waiter of arming.waiters) {
    if (error) waiter.reject(error);
    else waiter.resolve();
  }
};

export type SchedulesContext = {
  queue(name: string): Queue;
  /** BullMQ's client with our scripts defined. */
  redis(): Promise<IRedisClient>;
  /** What a queue was registered with (nothing yet: the defaults). */
  options(queue: string): QueueOptions;
  /** Exhausted jobs kept for `counts().failed` and inspection. */
  readonly keepFailed: number;
};

/**
 * The schedules made in one turn of the event loop (a report's nodes, a reconcile's slice), sent
 * together on `setImmediate` in one pipeline: each add, then our check that it is in place. An
 * add that deduplication dropped (a run due and waiting for a worker) is moved and tried again.
 */
export class Schedules {
  /** Schedules of this turn, by queue and id, in call order. */
  private arming = new Map<string, Arming>();
  private flushArmed = false;
  private readonly flushing = new Set<Promise<void>>();
  /** Makes this process's BullMQ ids unique; a counter follows it. */
  private readonly token = randomBytes(4).toString('hex');
  private added = 0;
  private flushCount = 0;

  constructor(private readonly context: SchedulesContext) {}

  /** Pipelines that carried schedules so far: one per event-loop turn that scheduled, plus retries. */
  get flushes(): number {
    return this.flushCount;
  }

  /** `payload` as JSON, taken now (a caller may change it after). */
  add(queue: string, jobId: string, runAt: number, payload: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const key = `${queue}\u0000${jobId}`;
      const earlier = this.arming.get(key);
      // Re-inserted: the last schedule of an id is the one sent, in its own place.
      this.arming.delete(key);
      this.arming.set(key, {
        queue,
        jobId,
        runAt,
        payload,
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

  /** A schedule of this id not sent yet came before a cancel: it is done with. */
  forget(queue: string, jobId: string): void {
    const key = `${queue}\u0000${jobId}`;
    const unsent = this.arming.get(key);
    if (unsent) {
      this.arming.delete(key);
      for (const waiter of unsent.waiters) waiter.resolve();
    }
  }

  /** Once what was scheduled so far (in this turn too) has been sent. */
  async sent(): Promise<void> {
    while (this.flushArmed || this.flushing.size > 0) {
      if (this.flushArmed) await new Promise((resolve) => setImmediate(resolve));
      await Promise.allSettled([...this.flushing]);
    }
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
          this.context
            .queue(arming.queue)
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
    const client = await this.context.redis();
    this.flushCount++;
    const pipeline = client.pipeline();
    const sent: Array<{ arming: Arming; id: string }> = [];
    const now = Date.now();
    for (const arming of batch) {
      const q = this.context.queue(arming.queue);
      const id = `${this.token}${(this.added++).toString(36)}~${encodeId(arming.jobId)}`;
      const keys = keysOf(q, arming.jobId);
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
    const options = this.context.options(arming.queue);
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
      removeOnFail: { count: this.context.keepFailed },
    };
  }
}
