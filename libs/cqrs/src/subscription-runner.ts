import { settleWithin } from '@fleet/kernel/within';
import {
  EventStore,
  LOG_START,
  LogPosition,
  ReadAllOptions,
  StoredEvent,
  laterPosition,
} from '@fleet/eventstore/port';

/**
 * Lag is counted by reading the log, up to this many events (a lag of this means "at least"):
 * on KurrentDB counting is reading, so a probe of a replica far behind must stay cheap.
 */
export const LAG_COUNT_CAP = 10_000;

/**
 * A consumer of the global log: a projection or a reactor. It owns where its checkpoint
 * lives; the runner only calls `handle` in global order and `saveCheckpoint` after it.
 */
export interface Subscriber {
  readonly name: string;
  loadCheckpoint(): Promise<LogPosition>;
  /** Handles a page of events in order. Must be idempotent: delivery is at-least-once. */
  handle(events: readonly StoredEvent[]): Promise<void>;
  /** Stores the checkpoint once `handle` has succeeded (projections may store it with their writes). */
  saveCheckpoint(position: LogPosition): Promise<void>;
  /** Called once the runner stopped delivering (e.g. to write a checkpoint it held back). */
  stop?(): Promise<void>;
}

export type SubscriptionStatus = {
  readonly name: string;
  readonly checkpoint: LogPosition;
  readonly head: LogPosition;
  /** Events between the checkpoint and the head, counted up to the cap `status` was given. */
  readonly lag: number;
  readonly failing: boolean;
  readonly consecutiveFailures: number;
  readonly lastError: string | null;
  readonly handled: number;
};

export type RunnerOptions = {
  readonly pageSize?: number;
  /** Safety-net poll when no notification arrives. */
  readonly pollMs?: number;
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly onError?: (name: string, error: unknown, attempt: number) => void;
};

class Subscription {
  checkpoint: LogPosition = LOG_START;
  head: LogPosition = LOG_START;
  failing = false;
  consecutiveFailures = 0;
  lastError: string | null = null;
  handled = 0;
  private running = false;
  private stopped = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private readonly idleWaiters: Array<{ position: LogPosition; resolve: () => void }> = [];

  constructor(
    readonly subscriber: Subscriber,
    private readonly store: EventStore,
    private readonly options: Required<Omit<RunnerOptions, 'onError'>> &
      Pick<RunnerOptions, 'onError'>,
  ) {}

  async start(): Promise<void> {
    this.checkpoint = await this.subscriber.loadCheckpoint();
    this.running = true;
    this.loop = this.run();
  }

  notify(): void {
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.notify();
    await this.loop;
    await this.subscriber.stop?.();
  }

  /** Resolves once the checkpoint has reached `position`. */
  reached(position: LogPosition): Promise<void> {
    if (this.checkpoint >= position) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push({ position, resolve }));
  }

  get isRunning(): boolean {
    return this.running && !this.stopped;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let page: StoredEvent[];
      try {
        page = await this.store.readAll({ after: this.checkpoint, limit: this.options.pageSize });
      } catch (error) {
        await this.failed(error);
        continue;
      }
      if (page.length === 0) {
        this.head = laterPosition(this.head, this.checkpoint);
        await this.sleep(this.options.pollMs);
        continue;
      }
      try {
        await this.subscriber.handle(page);
        const last = page[page.length - 1].position;
        await this.subscriber.saveCheckpoint(last);
        this.checkpoint = last;
        this.head = laterPosition(this.head, last);
        this.handled += page.length;
        this.failing = false;
        this.consecutiveFailures = 0;
        this.lastError = null;
        this.release();
      } catch (error) {
        // The page is retried from the same checkpoint: never skipped, never stopped for good.
        await this.failed(error);
      }
    }
  }

  private async failed(error: unknown): Promise<void> {
    this.failing = true;
    this.consecutiveFailures += 1;
    this.lastError = error instanceof Error ? error.message : String(error);
    this.options.onError?.(this.subscriber.name, error, this.consecutiveFailures);
    const backoff = Math.min(
      this.options.maxBackoffMs,
      this.options.initialBackoffMs * 2 ** (this.consecutiveFailures - 1),
    );
    await this.sleep(backoff);
  }

  private release(): void {
    for (let i = this.idleWaiters.length - 1; i >= 0; i--) {
      if (this.idleWaiters[i].position <= this.checkpoint) {
        this.idleWaiters[i].resolve();
        this.idleWaiters.splice(i, 1);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref?.();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }
}

/**
 * Drives every subscriber from its own checkpoint: catch-up by reading the log, woken by the
 * store's notifications, with a poll as a safety net. A failing handler is retried with
 * backoff and shown in `status()`; the runner never gives up on a subscriber silently.
 */
export class SubscriptionRunner {
  private readonly subscriptions = new Map<string, Subscription>();
  private unwatch: (() => void) | null = null;
  private readonly options: Required<Omit<RunnerOptions, 'onError'>> &
    Pick<RunnerOptions, 'onError'>;

  constructor(
    private readonly store: EventStore,
    options: RunnerOptions = {},
  ) {
    this.options = {
      pageSize: options.pageSize ?? 2000,
      pollMs: options.pollMs ?? 1000,
      initialBackoffMs: options.initialBackoffMs ?? 100,
      maxBackoffMs: options.maxBackoffMs ?? 30_000,
      onError: options.onError,
    };
  }

  /**
   * Reads the log through the store the subscribers read (in the app a SharedReadsEventStore:
   * recent events come from its window, fetched and parsed once for every reader).
   */
  readAll(options: ReadAllOptions): Promise<StoredEvent[]> {
    return this.store.readAll(options);
  }

  /** Adds a subscriber; once the runner has started, it starts at once. */
  async add(subscriber: Subscriber): Promise<void> {
    if (this.subscriptions.has(subscriber.name)) {
      throw new Error(`subscriber ${subscriber.name} is registered twice`);
    }
    const subscription = new Subscription(subscriber, this.store, this.options);
    this.subscriptions.set(subscriber.name, subscription);
    if (this.unwatch) await subscription.start();
  }

  /**
   * Stops the named subscribers (each after the page it is handling) and forgets them; the
   * others run on. Their checkpoints hold what they have not handled: they resume from there
   * when added again (at the next start).
   */
  async remove(names: readonly string[]): Promise<void> {
    const removed = names.flatMap((name) => {
      const s = this.subscriptions.get(name);
      if (!s) return [];
      this.subscriptions.delete(name);
      return [s];
    });
    await Promise.all(removed.map((s) => s.stop()));
  }

  async start(): Promise<void> {
    this.unwatch = this.store.watch(() => {
      for (const s of this.subscriptions.values()) s.notify();
    });
    for (const s of this.subscriptions.values()) if (!s.isRunning) await s.start();
  }

  /** Resolves when every subscriber (or the named ones) has handled the log up to `position`. */
  async caughtUp(position?: LogPosition, names?: readonly string[]): Promise<void> {
    const target = position ?? (await this.store.headPosition());
    const subs = [...this.subscriptions.values()].filter(
      (s) => !names || names.includes(s.subscriber.name),
    );
    await Promise.all(subs.map((s) => s.reached(target)));
  }

  /**
   * Read-your-writes for a command's response: waits (bounded) until the named subscribers
   * have handled `position`. Resolves false on timeout; the write itself is durable either way.
   */
  async settle(
    position: LogPosition,
    names: readonly string[],
    timeoutMs = 5000,
  ): Promise<boolean> {
    if (position <= LOG_START || this.reachedNow(position, names)) return true;
    const outcome = await settleWithin(this.caughtUp(position, names), timeoutMs);
    if (outcome.status === 'rejected') throw outcome.reason;
    return outcome.status === 'fulfilled';
  }

  /** Whether the named subscribers have handled `position` already (no promise: the usual case). */
  reachedNow(position: LogPosition, names: readonly string[]): boolean {
    for (const name of names) {
      const s = this.subscriptions.get(name);
      if (s !== undefined && s.checkpoint < position) return false;
    }
    return true;
  }

  async status(lagCap = LAG_COUNT_CAP): Promise<SubscriptionStatus[]> {
    const head = await this.store.headPosition();
    const subs = [...this.subscriptions.values()];
    // Counted by reading, once per distinct checkpoint behind the head (usually none).
    const lags = new Map<LogPosition, Promise<number>>();
    for (const s of subs) {
      if (s.checkpoint < head && !lags.has(s.checkpoint))
        lags.set(s.checkpoint, this.store.countAfter(s.checkpoint, lagCap));
    }
    const lagOf = async (checkpoint: LogPosition): Promise<number> =>
      (await lags.get(checkpoint)) ?? 0;
    const counted = await Promise.all(subs.map((s) => lagOf(s.checkpoint)));
    return subs.map((s, i) => ({
      name: s.subscriber.name,
      checkpoint: s.checkpoint,
      head,
      lag: counted[i],
      failing: s.failing,
      consecutiveFailures: s.consecutiveFailures,
      lastError: s.lastError,
      handled: s.handled,
    }));
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    this.unwatch = null;
    await Promise.all([...this.subscriptions.values()].map((s) => s.stop()));
  }
}
