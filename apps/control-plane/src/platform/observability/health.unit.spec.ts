import { SubscriptionRunner, SubscriptionStatus } from '@fleet/cqrs';
import { EventStore, asLogPosition } from '@fleet/eventstore/port';
import { DelayedJobs } from '@fleet/jobs/port';
import { ReadModelStore } from '@fleet/readmodels/port';
import { Health } from './health';

const up = { ping: async () => undefined };
const down = (message: string) => ({
  ping: async () => {
    throw new Error(message);
  },
});

const subscription = (over: Partial<SubscriptionStatus> = {}): SubscriptionStatus => ({
  name: 'nodes',
  checkpoint: asLogPosition(10),
  head: asLogPosition(10),
  lag: 0,
  failing: false,
  consecutiveFailures: 0,
  lastError: null,
  handled: 10,
  ...over,
});

const health = (
  opts: {
    events?: { ping(): Promise<void> };
    readModels?: { ping(): Promise<void> };
    jobs?: { ping(): Promise<void> };
    subscriptions?: SubscriptionStatus[];
    ready?: boolean;
    maxLag?: number;
    leader?: boolean;
  } = {},
): Health =>
  new Health(
    (opts.events ?? up) as EventStore,
    (opts.readModels ?? up) as ReadModelStore,
    (opts.jobs ?? up) as DelayedJobs,
    { status: async () => opts.subscriptions ?? [subscription()] } as SubscriptionRunner,
    { ready: opts.ready ?? true },
    opts.maxLag ?? 100,
    { isLeader: () => opts.leader ?? true },
  );

describe('readiness', () => {
  it('is ready when every store answers and every subscription is current', async () => {
    await expect(health().readiness()).resolves.toEqual({
      status: 'ready',
      checks: {
        runtime: { ok: true },
        eventStore: { ok: true },
        readModels: { ok: true },
        delayedJobs: { ok: true },
        subscriptions: { ok: true },
      },
      leader: true,
    });
  });

  it('says whether this replica leads, and is ready when it does not', async () => {
    const r = await health({ leader: false }).readiness();
    expect(r).toMatchObject({ status: 'ready', leader: false });
  });

  it('is not ready before the runtime caught up at start', async () => {
    const r = await health({ ready: false }).readiness();
    expect(r.status).toBe('not_ready');
    expect(r.checks.runtime).toEqual({ ok: false, error: expect.stringMatching(/starting/) });
  });

  it.each([
    ['events', 'eventStore'],
    ['readModels', 'readModels'],
    ['jobs', 'delayedJobs'],
  ] as const)('is not ready when the %s store fails its ping', async (store, check) => {
    const r = await health({
      [store]: down('connect ECONNREFUSED 10.0.0.7:6379 (maxRetriesPerRequest is 3)'),
    }).readiness();
    expect(r.status).toBe('not_ready');
    // Served without a token: a fixed word, not the client's text (hosts, options, versions).
    expect(r.checks[check]).toEqual({ ok: false, error: 'not answering' });
  });

  it('counts a store that does not answer in time as down', async () => {
    jest.useFakeTimers();
    try {
      const pending = health({ events: { ping: () => new Promise(() => undefined) } }).readiness();
      await jest.advanceTimersByTimeAsync(2_000);
      const r = await pending;
      expect(r.checks.eventStore).toEqual({ ok: false, error: 'no answer within 2000 ms' });
    } finally {
      jest.useRealTimers();
    }
  });

  it('is not ready while a subscription is failing', async () => {
    const r = await health({
      subscriptions: [subscription(), subscription({ name: 'billing', failing: true })],
    }).readiness();
    expect(r.status).toBe('not_ready');
    expect(r.checks.subscriptions).toMatchObject({ ok: false, failing: ['billing'], lagging: [] });
  });

  it('is not ready while a projection lags more than the threshold, and ready at it', async () => {
    const lagging = await health({
      maxLag: 100,
      subscriptions: [subscription({ name: 'sessions', lag: 101 })],
    }).readiness();
    expect(lagging.checks.subscriptions).toMatchObject({ ok: false, lagging: ['sessions'] });
    const atThreshold = await health({
      maxLag: 100,
      subscriptions: [subscription({ name: 'sessions', lag: 100 })],
    }).readiness();
    expect(atThreshold.status).toBe('ready');
  });
});
