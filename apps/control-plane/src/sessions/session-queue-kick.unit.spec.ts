import { SubscriptionRunner } from '../../../../libs/cqrs/src';
import type { StoredEvent } from '../../../../libs/eventstore/src/port';
import { DelayedJobs, JobSlotsBusyError } from '../../../../libs/jobs/src/port';
import type { ReadModelStore } from '../../../../libs/readmodels/src/port';
import { NODES_PROJECTION } from '../nodes/nodes.commands';
import { QUEUE_TICK, SessionQueueService } from './session-queue.service';
import { SESSIONS_PROJECTION } from './sessions.service';

const queueWith = (schedule: DelayedJobs['schedule']) =>
  new SessionQueueService(
    null as never,
    { schedule } as DelayedJobs,
    null as never,
    null as never,
    null as never,
    null as never,
    null as never,
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
    const queue = new SessionQueueService(
      readModels as unknown as ReadModelStore,
      jobs as unknown as DelayedJobs,
      null as never,
      null as never,
      null as never,
      runner as unknown as SubscriptionRunner,
      null as never,
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
