import { CommandPipeline } from '@fleet/cqrs';
import { StoredEvent, asLogPosition } from '@fleet/eventstore/port';
import { DelayedJobs } from '@fleet/jobs/port';
import { SYSTEM_ACTOR, systemClock } from '@fleet/kernel';
import { ReadModelStore } from '@fleet/readmodels/port';
import { nodeCodec } from '../nodes';
import { busesOver } from '../../../../test/support/buses';
import { PlacementService } from './placement.service';
import { SessionProcessReactor } from './session-process.reactor';
import { SessionQueueSaga } from './session-queue.saga';
import { SAFETY_TICK_MS } from './session-queue.workflow';
import { SessionState, sessionCodec } from './session.events';

const SESSION = 's-1';
const NODE = 'n-1';
const GPUS = ['gpu-0'];

const stored = (streamId: string, type: string, data: unknown): StoredEvent => ({
  position: asLogPosition(10),
  eventId: 'e-1',
  streamId,
  revision: 0,
  type,
  data,
  metadata: {
    correlationId: 'c',
    causationId: 'c',
    actor: SYSTEM_ACTOR,
    occurredAt: '2026-01-01T00:00:00.000Z',
    schemaVersion: 1,
  },
});

const requested = stored(
  `session-${SESSION}`,
  sessionCodec.storedType({
    type: 'SessionRequested',
    data: {
      sessionId: SESSION,
      owner: 'u',
      demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 },
      poolId: null,
      requestedAt: '2026-01-01T00:00:00.000Z',
    },
  }),
  {
    sessionId: SESSION,
    owner: 'u',
    demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 },
    poolId: null,
    requestedAt: '2026-01-01T00:00:00.000Z',
  },
);

const allocationData = {
  nodeId: NODE,
  sessionId: SESSION,
  owner: 'u',
  gpus: GPUS,
  cpu: 0,
  memoryGiB: 0,
  at: '2026-01-01T00:00:00.000Z',
};
const allocated = stored(
  `node-${NODE}`,
  nodeCodec.storedType({ type: 'NodeCapacityAllocated', data: allocationData }),
  allocationData,
);

const queued = {
  status: 'queued',
  sessionId: SESSION,
  owner: 'u',
} as unknown as SessionState;
const running = {
  status: 'running',
  sessionId: SESSION,
  owner: 'u',
  placement: { nodeId: NODE, gpus: GPUS },
} as unknown as SessionState;
const nodeHolding = {
  status: 'online',
  hostname: 'h-1',
  allocations: { [SESSION]: { sessionId: SESSION, owner: 'u', gpus: GPUS, cpu: 0, memoryGiB: 0 } },
};

const deferred = <T>() => {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

const flush = () => new Promise((r) => setImmediate(r));

describe('a placement in flight in this process', () => {
  describe('the placement reactor, seeing its cards allocated', () => {
    const setup = (pending: Promise<SessionState> | undefined) => {
      let session = queued;
      const pipeline = {
        load: jest.fn(async (aggregate: { name: string }) => ({
          state: aggregate.name === 'node' ? nodeHolding : session,
          revision: 1,
        })),
      };
      const placement = {
        pending: jest.fn(() => pending),
        start: jest.fn(async () => running),
        release: jest.fn(async () => undefined),
      };
      const reactor = new SessionProcessReactor(
        pipeline as unknown as CommandPipeline,
        placement as unknown as PlacementService,
        busesOver(pipeline as unknown as CommandPipeline).queries,
      );
      const now = (state: SessionState) => (session = state);
      return { reactor, placement, pipeline, now, started: () => now(running) };
    };

    it('waits for it to finish its step 2 instead of starting the session a second time', async () => {
      const placing = deferred<SessionState>();
      const { reactor, placement, pipeline, started } = setup(placing.promise);
      const reacted = reactor.react(allocated);
      await flush();
      expect(pipeline.load).not.toHaveBeenCalled();
      started();
      placing.resolve(running);
      await reacted;
      // Placed on these very cards: nothing to look at, nothing to do.
      expect(pipeline.load).not.toHaveBeenCalled();
      expect(placement.start).not.toHaveBeenCalled();
      expect(placement.release).not.toHaveBeenCalled();
    });

    it('looks at both streams when that request placed it on other cards', async () => {
      const placing = deferred<SessionState>();
      const { reactor, placement, pipeline, now } = setup(placing.promise);
      const reacted = reactor.react(allocated);
      const elsewhere = {
        ...running,
        placement: { nodeId: 'n-2', gpus: ['gpu-9'] },
      } as unknown as SessionState;
      now(elsewhere);
      placing.resolve(elsewhere);
      await reacted;
      expect(pipeline.load).toHaveBeenCalled();
      expect(placement.release).toHaveBeenCalledTimes(1); // runs on n-2: n-1's cards go back
    });

    it('finishes the placement itself when that request failed before step 2', async () => {
      const placing = deferred<SessionState>();
      const { reactor, placement } = setup(placing.promise);
      const reacted = reactor.react(allocated);
      placing.reject(new Error('the request died'));
      await reacted;
      expect(placement.start).toHaveBeenCalledTimes(1);
    });

    it('finishes the placement when nothing is in flight here (after a crash)', async () => {
      const { reactor, placement } = setup(undefined);
      await reactor.react(allocated);
      expect(placement.start).toHaveBeenCalledTimes(1);
    });
  });

  describe('the queue, seeing the session requested', () => {
    const setup = (pending: Promise<SessionState> | undefined) => {
      const jobs = {
        schedule: jest.fn(async (_q: string, _id: string, _at: number, _p: object) => undefined),
        scheduledAt: jest.fn(async () => null),
      };
      const placement = { pending: jest.fn(() => pending) };
      const queue = new SessionQueueSaga(
        {} as ReadModelStore,
        jobs as unknown as DelayedJobs,
        placement as unknown as PlacementService,
        null as never,
        null as never,
        null as never,
        null as never,
        systemClock,
      );
      return { queue, jobs };
    };

    it('schedules no pass now while its create request is placing it, only the safety pass once it is left queued', async () => {
      const placing = deferred<SessionState>();
      const { queue, jobs } = setup(placing.promise);
      await queue.react(requested);
      expect(jobs.schedule).not.toHaveBeenCalled();
      const before = Date.now();
      // Nothing fits: a pass now would find nothing either, but a node may become usable
      // without an event (one silent for half a window reporting again).
      placing.resolve(queued);
      await flush();
      expect(jobs.schedule).toHaveBeenCalledTimes(1);
      const [, jobId, runAt] = jobs.schedule.mock.calls[0];
      expect(jobId).toBe('tick-safety');
      expect(runAt).toBeGreaterThanOrEqual(before + SAFETY_TICK_MS);
    });

    it('schedules a pass when that placement fails', async () => {
      const placing = deferred<SessionState>();
      const { queue, jobs } = setup(placing.promise);
      await queue.react(requested);
      placing.reject(new Error('the request died'));
      await flush();
      expect(jobs.schedule).toHaveBeenCalledTimes(1);
    });

    it('schedules a pass when no placement of it is in flight here (after a crash)', async () => {
      const { queue, jobs } = setup(undefined);
      await queue.react(requested);
      expect(jobs.schedule).toHaveBeenCalledTimes(1);
    });
  });
});
