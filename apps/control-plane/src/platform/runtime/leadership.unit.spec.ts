import { Logger } from '@nestjs/common';
import { CheckpointStore, CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { EventStore, StaleLeaderError, asLogPosition } from '@fleet/eventstore/port';
import { InProcessLeaderLease } from '@fleet/jobs/in-process-leader-lease';
import { LeaderLease, LeadershipChange } from '@fleet/jobs/leader-lease';
import { DelayedJobs } from '@fleet/jobs/port';
import { ReadModelStore } from '@fleet/readmodels/port';
import { Leadership } from './leadership.service';
import { LeaderTerm, Runtime } from './runtime.service';
import { SubscriptionsRegistry } from './subscriptions.registry';

/** A lease the spec hands out and takes back by hand. */
class ManualLease implements LeaderLease {
  leading: number | null = null;
  started = false;
  stopped = false;
  private readonly listeners: Array<(change: LeadershipChange) => void> = [];
  async start(): Promise<void> {
    this.started = true;
  }
  isLeader(): boolean {
    return this.leading !== null;
  }
  epoch(): number | null {
    return this.leading;
  }
  onChange(listener: (change: LeadershipChange) => void): void {
    this.listeners.push(listener);
  }
  floor = 0;
  raiseFloor(epoch: number): void {
    this.floor = Math.max(this.floor, epoch);
    if (this.leading !== null && this.leading <= epoch) this.leading = null;
  }
  async stop(): Promise<void> {
    this.stopped = true;
    this.leading = null;
  }
}

/** The log's leadership stream as the pipeline decides on it: terms recorded, older refused. */
class TermLog {
  newest = 0;
  recorded: number[] = [];
  readonly pipeline = {
    handle: async (_aggregate: unknown, stream: string, command: { data: { epoch: number } }) => {
      const { epoch } = command.data;
      if (epoch < this.newest) throw new StaleLeaderError(stream, epoch, this.newest);
      if (epoch > this.newest) this.recorded.push(epoch);
      this.newest = Math.max(this.newest, epoch);
      return {};
    },
  } as unknown as CommandPipeline;
}

const closes = { close: async () => undefined };
const runtimeOn = (lease: LeaderLease, log = new TermLog()): Runtime =>
  new Runtime(
    { headPosition: async () => asLogPosition(0), ...closes } as unknown as EventStore,
    closes as unknown as ReadModelStore,
    { start: async () => undefined, ...closes } as unknown as DelayedJobs,
    closes as unknown as CheckpointStore,
    {
      add: async () => undefined,
      remove: async () => undefined,
      start: async () => undefined,
      stop: async () => undefined,
      caughtUp: async () => undefined,
    } as unknown as SubscriptionRunner,
    { projections: [], reactors: [] } as unknown as SubscriptionsRegistry,
    new Leadership(lease, log.pipeline),
  );

describe('periodic work under the lease', () => {
  beforeAll(() => Logger.overrideLogger(false));
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs in this replica only while it leads, told the epoch of its term', async () => {
    const lease = new ManualLease();
    const runtime = runtimeOn(lease);
    const terms: LeaderTerm[] = [];
    runtime.every('repair', 1000, async (term) => void terms.push(term));
    await runtime.onApplicationBootstrap();
    expect(lease.started).toBe(true);

    await jest.advanceTimersByTimeAsync(3000);
    expect(terms).toEqual([]);

    lease.leading = 4;
    await jest.advanceTimersByTimeAsync(2000);
    expect(terms).toEqual([{ epoch: 4 }, { epoch: 4 }]);

    lease.leading = null;
    await jest.advanceTimersByTimeAsync(3000);
    expect(terms).toHaveLength(2);
    expect(runtime.periodicRunCounts().get('repair')).toBe(2);
  });

  it('records each term in the log before its first period runs', async () => {
    const lease = new ManualLease();
    const log = new TermLog();
    const runtime = runtimeOn(lease, log);
    runtime.every('repair', 1000, async () => undefined);
    await runtime.onApplicationBootstrap();
    lease.leading = 2;
    await jest.advanceTimersByTimeAsync(2000);
    lease.leading = 5;
    await jest.advanceTimersByTimeAsync(1000);
    expect(log.recorded).toEqual([2, 5]);
  });

  it('runs nothing in a term older than one the log recorded, and steps down above it', async () => {
    const lease = new ManualLease();
    const log = new TermLog();
    log.newest = 9; // another replica led in term 9; this one's Redis handed out 3
    const runtime = runtimeOn(lease, log);
    let runs = 0;
    runtime.every('repair', 1000, async () => void runs++);
    await runtime.onApplicationBootstrap();
    lease.leading = 3;
    await jest.advanceTimersByTimeAsync(3000);
    expect(runs).toBe(0);
    expect(lease.floor).toBe(9);
    expect(lease.leading).toBeNull();
  });

  it('stops periodic work, then resigns, on shutdown', async () => {
    const lease = new ManualLease();
    lease.leading = 1;
    const runtime = runtimeOn(lease);
    let runs = 0;
    runtime.every('repair', 1000, async () => void runs++);
    await runtime.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(1000);
    expect(runs).toBe(1);
    await runtime.onApplicationShutdown();
    expect(lease.stopped).toBe(true);
    await jest.advanceTimersByTimeAsync(3000);
    expect(runs).toBe(1);
  });

  it('runs every period without Redis: this process alone leads (the embedded default)', async () => {
    const runtime = runtimeOn(new InProcessLeaderLease());
    const terms: LeaderTerm[] = [];
    runtime.every('repair', 1000, async (term) => void terms.push(term));
    await runtime.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(3000);
    expect(terms).toEqual([{ epoch: 1 }, { epoch: 1 }, { epoch: 1 }]);
    await runtime.onApplicationShutdown();
  });
});
