import {
  DelayedJobs,
  HandlerErrorSink,
  JobHandler,
  PeriodicHandler,
  QueueCounts,
  QueueOptions,
} from './port';

export const DEFAULT_ATTEMPTS = 10;
export const DEFAULT_BACKOFF_MS = 200;
export const DEFAULT_CONCURRENCY = 10;

/** setTimeout overflows (fires at once) above 2^31-1 ms, about 24.8 days. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Exhausted jobs remembered for `counts().failed`; bounded so a long-lived process does not grow. */
const MAX_FAILED_KEPT = 1000;

export type InProcessJobsOptions = {
  /** A handler that threw; the job is retried or counted as failed either way. */
  readonly onError?: HandlerErrorSink;
};

type Entry = {
  readonly queue: string;
  readonly jobId: string;
  readonly runAt: number;
  /** The payload as JSON, so a handler gets what BullMQ would give it, never a shared object. */
  readonly payload: string;
  readonly attempt: number;
  /** When this try may start (runAt, or a backoff later). */
  readonly dueAt: number;
  timer: NodeJS.Timeout | null;
};

type Registered = {
  readonly handler: JobHandler<unknown>;
  readonly attempts: number;
  readonly backoffMs: number;
  readonly concurrency: number;
};

type QueueState = {
  registered: Registered | null;
  /** Scheduled, retrying, or due and waiting for a slot; never running. */
  readonly pending: Map<string, Entry>;
  /** Due entries in firing order; an entry no longer in `pending` is skipped. */
  readonly ready: Entry[];
  running: number;
  /** Ids of running handlers, with how many of each (one at a time: see `held`). */
  readonly runningIds: Map<string, number>;
  /** Due entries whose id was running when their turn came: they start when that run ends. */
  readonly held: Map<string, Entry>;
  readonly failed: Set<string>;
};

type Periodic = {
  readonly everyMs: number;
  readonly handler: PeriodicHandler;
  running: boolean;
  timer: NodeJS.Timeout | null;
};

/**
 * DelayedJobs in memory, for tests and single-process runs: nothing survives a restart,
 * which the reconciler makes up for (jobs are hints, the event log is truth). Due jobs start
 * at once up to `concurrency`; `fetchers` has nothing to do here. `every` is a timer.
 */
export class InProcessJobs implements DelayedJobs {
  private readonly queues = new Map<string, QueueState>();
  private readonly runningHandlers = new Set<Promise<void>>();
  private readonly periodic = new Map<string, Periodic>();
  private started = false;
  private closed = false;

  constructor(private readonly options: InProcessJobsOptions = {}) {}

  registeredQueues(): string[] {
    return [...this.queues].filter(([, state]) => state.registered).map(([queue]) => queue);
  }

  register<P>(queue: string, handler: JobHandler<P>, options: QueueOptions = {}): void {
    const state = this.queue(queue);
    if (state.registered) throw new Error(`jobs: queue ${queue} is already registered`);
    state.registered = {
      handler: handler as JobHandler<unknown>,
      attempts: Math.max(1, options.attempts ?? DEFAULT_ATTEMPTS),
      backoffMs: Math.max(0, options.backoffMs ?? DEFAULT_BACKOFF_MS),
      concurrency: Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY),
    };
    this.drain(state);
  }

  async schedule<P>(queue: string, jobId: string, runAt: number, payload: P): Promise<void> {
    // After close every timer is gone anyway; a handler finishing during close may still reschedule.
    if (this.closed) return;
    const state = this.queue(queue);
    this.unschedule(state, jobId);
    state.failed.delete(jobId);
    const entry: Entry = {
      queue,
      jobId,
      runAt,
      payload: JSON.stringify(payload ?? null),
      attempt: 1,
      dueAt: runAt,
      timer: null,
    };
    state.pending.set(jobId, entry);
    this.arm(state, entry);
  }

  async cancel(queue: string, jobId: string): Promise<void> {
    const state = this.queues.get(queue);
    if (state) this.unschedule(state, jobId);
  }

  async scheduledAt(queue: string, jobId: string): Promise<number | null> {
    return this.queues.get(queue)?.pending.get(jobId)?.runAt ?? null;
  }

  async counts(queue: string): Promise<QueueCounts> {
    const state = this.queues.get(queue);
    if (!state) return { waiting: 0, delayed: 0, running: 0, failed: 0 };
    let delayed = 0;
    for (const entry of state.pending.values()) if (entry.timer) delayed++;
    return {
      waiting: state.pending.size - delayed,
      delayed,
      running: state.running,
      failed: state.failed.size,
    };
  }

  async liveJobIds(queue: string): Promise<Set<string>> {
    const state = this.queues.get(queue);
    if (!state) return new Set();
    return new Set([...state.pending.keys(), ...state.runningIds.keys()]);
  }

  every(name: string, everyMs: number, handler: PeriodicHandler): void {
    if (this.periodic.has(name)) throw new Error(`jobs: ${name} already runs periodically`);
    if (!(everyMs >= 1)) throw new Error(`jobs: ${name} needs a period of 1 ms or more`);
    const task: Periodic = { everyMs, handler, running: false, timer: null };
    this.periodic.set(name, task);
    if (this.started && !this.closed) this.startPeriodic(name, task);
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error('jobs: closed');
    this.started = true;
    for (const state of this.queues.values()) this.drain(state);
    for (const [name, task] of this.periodic) this.startPeriodic(name, task);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.periodic.values()) if (task.timer) clearInterval(task.timer);
    for (const state of this.queues.values()) {
      for (const entry of state.pending.values()) if (entry.timer) clearTimeout(entry.timer);
      state.pending.clear();
      state.ready.length = 0;
      state.held.clear();
    }
    while (this.runningHandlers.size > 0) await Promise.allSettled([...this.runningHandlers]);
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('jobs: closed');
  }

  private queue(name: string): QueueState {
    let state = this.queues.get(name);
    if (!state) {
      state = {
        registered: null,
        pending: new Map(),
        ready: [],
        running: 0,
        runningIds: new Map(),
        held: new Map(),
        failed: new Set(),
      };
      this.queues.set(name, state);
    }
    return state;
  }

  private unschedule(state: QueueState, jobId: string): void {
    const entry = state.pending.get(jobId);
    if (!entry) return;
    if (entry.timer) clearTimeout(entry.timer);
    state.pending.delete(jobId);
  }

  private arm(state: QueueState, entry: Entry): void {
    const delay = entry.dueAt - Date.now();
    if (delay <= 0) {
      entry.timer = null;
      state.ready.push(entry);
      this.drain(state);
      return;
    }
    // Long delays re-arm in steps; a timer may also fire a little early against the wall
    // clock, in which case arming again waits out the rest.
    entry.timer = setTimeout(() => this.arm(state, entry), Math.min(delay, MAX_TIMER_MS));
    entry.timer.unref();
  }

  private drain(state: QueueState): void {
    const registered = state.registered;
    if (!this.started || this.closed || !registered) return;
    while (state.running < registered.concurrency && state.ready.length > 0) {
      const entry = state.ready.shift()!;
      // Rescheduled or cancelled while waiting for a slot.
      if (state.pending.get(entry.jobId) !== entry) continue;
      // Runs of one id never overlap: this one waits for the running one to end.
      if (state.runningIds.has(entry.jobId)) {
        state.held.set(entry.jobId, entry);
        continue;
      }
      state.pending.delete(entry.jobId);
      this.run(state, registered, entry);
    }
  }

  private run(state: QueueState, registered: Registered, entry: Entry): void {
    state.running++;
    state.runningIds.set(entry.jobId, (state.runningIds.get(entry.jobId) ?? 0) + 1);
    const running = this.invoke(state, registered, entry).finally(() => {
      state.running--;
      const left = (state.runningIds.get(entry.jobId) ?? 1) - 1;
      if (left > 0) state.runningIds.set(entry.jobId, left);
      else {
        state.runningIds.delete(entry.jobId);
        const held = state.held.get(entry.jobId);
        state.held.delete(entry.jobId);
        if (held) state.ready.push(held);
      }
      this.runningHandlers.delete(running);
      this.drain(state);
    });
    this.runningHandlers.add(running);
  }

  private async invoke(state: QueueState, registered: Registered, entry: Entry): Promise<void> {
    try {
      await registered.handler(JSON.parse(entry.payload), {
        queue: entry.queue,
        jobId: entry.jobId,
        attempt: entry.attempt,
        runAt: entry.runAt,
      });
    } catch (error) {
      this.options.onError?.(entry.queue, entry.jobId, error, entry.attempt);
      if (entry.attempt >= registered.attempts) {
        this.recordFailure(state, entry.jobId);
        return;
      }
      // Scheduled again while running: the new schedule replaces this retry.
      if (this.closed || state.pending.has(entry.jobId)) return;
      const retry: Entry = {
        ...entry,
        attempt: entry.attempt + 1,
        dueAt: Date.now() + registered.backoffMs * 2 ** (entry.attempt - 1),
        timer: null,
      };
      state.pending.set(entry.jobId, retry);
      this.arm(state, retry);
    }
  }

  private startPeriodic(name: string, task: Periodic): void {
    if (task.timer) return;
    task.timer = setInterval(() => {
      // Still running (a period shorter than a run): this period is skipped.
      if (task.running || this.closed) return;
      task.running = true;
      const running = task
        .handler({ runAt: Date.now() })
        .catch((error: unknown) => this.options.onError?.('periodic', name, error, 1))
        .finally(() => {
          task.running = false;
          this.runningHandlers.delete(running);
        });
      this.runningHandlers.add(running);
    }, task.everyMs);
    task.timer.unref();
  }

  private recordFailure(state: QueueState, jobId: string): void {
    state.failed.delete(jobId);
    state.failed.add(jobId);
    if (state.failed.size > MAX_FAILED_KEPT) {
      state.failed.delete(state.failed.values().next().value!);
    }
  }
}
