import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import type { StoredEvent } from '@fleet/eventstore/port';
import { DelayedJobs, JobSlotsBusyError } from '@fleet/jobs/port';
import type { ReadModelStore } from '@fleet/readmodels/port';
import { NODES_PROJECTION } from '../nodes';
import { CommandContext, manualClock, systemClock } from '@fleet/kernel';
import { PlacementService } from './placement.service';
import { PoolAccess } from './pool-access';
import { QUEUE_TICK, SessionQueueSaga } from './session-queue.saga';
import { SAFETY_TICK_MS } from './session-queue.workflow';
import { sessionAggregate } from './session.decider';
import { sessionStreamId } from './session.events';
import { SESSIONS_PROJECTION } from './sessions.service';

const queueWith = (schedule: DelayedJobs['schedule']) =>
  new SessionQueueSaga(
    null as never,
    { schedule } as DelayedJobs,
    null as never,
    null as never,
    null as never,
    null as never,
    null as never,
    systemClock,
  );

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('the queue kick', () => {
  it('goes on when both tick slots are running: a pass is coming anyway (a start right after a SIGKILL)', async () => {
    const busy = queueWith(() =>
      Promise.reject(new JobSlotsBusyError('session-queue-tick', 'tick')),
    );
    await expect(busy.kick()).resolves.toBeUndefined();
  });

  it('fails on anything else', async () => {
    const down = queueWith(() => Promise.reject(new Error('Connection is closed.')));
    await expect(down.kick()).rejects.toThrow('Connection is closed.');
  });
});

describe('a pass kicked by an event', () => {
  const setup = () => {
    let handler: ((job: { position?: number }) => Promise<void>) | undefined;
    const jobs = {
      register: jest.fn((_queue: string, h: typeof handler) => (handler = h)),
      schedule: jest.fn(async () => undefined),
    };
    let caughtUp: (ok: boolean) => void = () => undefined;
    const runner = {
      settle: jest.fn(() => new Promise<boolean>((resolve) => (caughtUp = resolve))),
    };
    const readModels = { find: jest.fn(async () => ({ items: [], nextCursor: null })) };
    const queue = new SessionQueueSaga(
      readModels as unknown as ReadModelStore,
      jobs as unknown as DelayedJobs,
      null as never,
      null as never,
      null as never,
      runner as unknown as SubscriptionRunner,
      null as never,
      systemClock,
    );
    queue.register();
    return {
      queue,
      jobs,
      runner,
      readModels,
      run: handler!,
      caughtUp: (ok = true) => caughtUp(ok),
    };
  };
  const freed = {
    streamId: 'node-n1',
    type: 'NodeCapacityReleased.v1',
    position: 42,
  } as unknown as StoredEvent;

  it('carries the position of the event that freed capacity', async () => {
    const { queue, jobs } = setup();
    await queue.react(freed);
    expect(jobs.schedule).toHaveBeenCalledWith(QUEUE_TICK, 'tick', expect.any(Number), {
      position: 42,
    });
  });

  it('reads the queue only once the Nodes and Sessions read models show that event', async () => {
    const { run, runner, readModels, caughtUp } = setup();
    const pass = run({ position: 42 });
    await flush();
    expect(runner.settle).toHaveBeenCalledWith(42, [NODES_PROJECTION, SESSIONS_PROJECTION]);
    // Before they caught up, a just-freed node would be missed until the safety pass.
    expect(readModels.find).not.toHaveBeenCalled();
    caughtUp();
    await pass;
    expect(readModels.find).toHaveBeenCalledTimes(1);
  });

  it('still runs when they do not catch up in time', async () => {
    const { run, readModels, caughtUp } = setup();
    const pass = run({ position: 42 });
    await flush();
    caughtUp(false);
    await pass;
    expect(readModels.find).toHaveBeenCalledTimes(1);
  });
});

describe('a pass over the queue, carried out', () => {
  const AT = '2026-12-02T10:30:00.000Z';
  const doc = (sessionId: string, gpuCount: number, poolId: string | null = null) => ({
    _id: sessionId,
    sessionId,
    owner: 'alice',
    demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount },
    poolId,
    queuedBy: { eventId: `requested-${sessionId}`, correlationId: `request-${sessionId}` },
  });
  const setup = (fits: string[]) => {
    let handler: ((job: { position?: number }) => Promise<void>) | undefined;
    const jobs = {
      register: jest.fn((_queue: string, h: typeof handler) => (handler = h)),
      schedule: jest.fn(async () => undefined),
    };
    // In the queue's order: a 1-card session that fits nowhere, a 2-card one of the same kind,
    // one pinned to a deleted pool, and a 4-card one for another pool that fits.
    const queued = [doc('a', 1), doc('b', 2), doc('d', 1, 'gone'), doc('c', 4, 'p')];
    const readModels = { find: jest.fn(async () => ({ items: queued, nextCursor: null })) };
    const placement = {
      tryPlace: jest.fn(async (sessionId: string, _ctx: CommandContext) => ({
        status: fits.includes(sessionId) ? 'running' : 'queued',
      })),
    };
    const pipeline = { handle: jest.fn(async () => ({ state: {}, revision: 1 })) };
    const pools = { gone: jest.fn(async (poolId: string) => poolId === 'gone') };
    const queue = new SessionQueueSaga(
      readModels as unknown as ReadModelStore,
      jobs as unknown as DelayedJobs,
      placement as unknown as PlacementService,
      pipeline as unknown as CommandPipeline,
      pools as unknown as PoolAccess,
      { settle: async () => true } as unknown as SubscriptionRunner,
      null as never,
      manualClock(AT),
    );
    queue.register();
    return { run: handler!, jobs, placement, pipeline };
  };

  it('tries each session the misses do not rule out, and ends the one whose pool is gone', async () => {
    const { run, placement, pipeline } = setup(['c']);
    await run({ position: 0 });
    expect(placement.tryPlace.mock.calls.map(([id]) => id)).toEqual(['a', 'c']);
    const [, ctx] = placement.tryPlace.mock.calls[0];
    expect(ctx).toMatchObject({ causationId: 'requested-a', correlationId: 'request-a' });
    expect(ctx.now).toEqual(new Date(AT));
    expect(pipeline.handle).toHaveBeenCalledTimes(1);
    expect(pipeline.handle).toHaveBeenCalledWith(
      sessionAggregate,
      sessionStreamId('d'),
      { type: 'TerminateSession', data: { reason: 'admin_force', at: AT } },
      expect.objectContaining({ causationId: 'requested-d', correlationId: 'request-d' }),
    );
  });

  it('moves the safety pass on while sessions wait, skipped ones too', async () => {
    const { run, jobs } = setup(['c']);
    await run({ position: 0 });
    expect(jobs.schedule).toHaveBeenCalledWith(
      QUEUE_TICK,
      'tick-safety',
      Date.parse(AT) + SAFETY_TICK_MS,
      {},
    );
  });

  it('arms nothing once every session was placed or ended', async () => {
    const { run, jobs, placement } = setup(['a', 'b', 'c']);
    await run({ position: 0 });
    expect(placement.tryPlace.mock.calls.map(([id]) => id)).toEqual(['a', 'b', 'c']);
    expect(jobs.schedule).not.toHaveBeenCalled();
  });
});
