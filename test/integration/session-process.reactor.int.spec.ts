import { randomUUID } from 'node:crypto';
import { CommandPipeline } from '@fleet/cqrs';
import { SqliteEventStore } from '@fleet/eventstore/sqlite-event-store';
import { StoredEvent } from '@fleet/eventstore/port';
import { CommandContext, systemContext } from '@fleet/kernel';
import { nodeAggregate, nodeRefOf } from '../../apps/control-plane/src/nodes/node.aggregate';
import { NodeCommand, NodeReport } from '../../apps/control-plane/src/nodes';
import { busesOver } from '../support/buses';
import { PlacementService } from '../../apps/control-plane/src/sessions/placement.service';
import { SessionProcessReactor } from '../../apps/control-plane/src/sessions/session-process.reactor';
import {
  SessionCommand,
  sessionAggregate,
} from '../../apps/control-plane/src/sessions/session.decider';
import { sessionStreamId } from '../../apps/control-plane/src/sessions/session.events';

const REGISTERED = '2026-12-05T19:00:00.000Z';
const PLACED = '2026-12-05T19:10:00.000Z';
const OFFLINE = '2026-12-05T19:20:00.000Z';
const BACK = '2026-12-05T19:30:00.000Z';

/** A system command's context at `at` (these streams' times are the test's, not the clock's). */
const ctx = (at: string): CommandContext => systemContext(randomUUID(), { now: new Date(at) });

const { nodeId, streamId: nodeStream } = nodeRefOf('c1', 'gpu-reactor-01');
const nodeReport = (kubeletReady: boolean, at: string): NodeCommand => {
  const report: NodeReport = {
    clusterId: 'c1',
    hostname: 'gpu-reactor-01',
    role: 'gpu',
    labels: { 'fleet/mode': 'shared' },
    capacity: { cpu: 32, memoryGiB: 256, diskGiB: 1000 },
    gpus: [{ uuid: 'GPU-1', model: 'L40S', memoryGiB: 48 }],
    kubeletReady,
    unschedulable: null,
    observedAt: at,
  };
  return { type: 'ReportNode', data: { nodeId, report, receivedAt: at, newestObservedAt: null } };
};
const placeOnNode = (at: string): SessionCommand => ({
  type: 'PlaceSession',
  data: {
    placement: {
      nodeId,
      hostname: 'gpu-reactor-01',
      gpus: ['GPU-1'],
      cpu: 0,
      memoryGiB: 0,
      units: 1,
      gpuModel: 'L40S',
      unitPricePerHour: 3600,
      currency: 'KRW',
    },
    at,
  },
});

/**
 * The node-offline reaction, on real streams: it ends the session that ran on the node's cards
 * and releases them, and releases nothing for a session that runs there again on cards of its
 * own (paused, kept, resumed on the node once it was back) when the offline is handled late.
 */
describe('session process reactor: a node gone offline', () => {
  let store: SqliteEventStore;
  let pipeline: CommandPipeline;
  let released: Array<[string, string]>;
  let reactor: SessionProcessReactor;

  beforeEach(async () => {
    store = new SqliteEventStore({ file: ':memory:' });
    pipeline = new CommandPipeline(store);
    released = [];
    const placement = {
      pending: () => undefined,
      release: async (node: string, session: string) => void released.push([node, session]),
      start: async () => {
        throw new Error('no placement is finished by an offline');
      },
    } as unknown as PlacementService;
    reactor = new SessionProcessReactor(pipeline, placement, busesOver(pipeline).queries);

    await pipeline.handle(nodeAggregate, nodeStream, nodeReport(true, REGISTERED), ctx(REGISTERED));
    const session = sessionStreamId('s1');
    await pipeline.handle(
      sessionAggregate,
      session,
      {
        type: 'RequestSession',
        data: {
          sessionId: 's1',
          owner: 'alice',
          demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 },
          poolId: null,
          at: REGISTERED,
        },
      },
      ctx(REGISTERED),
    );
    const allocated = await pipeline.handle(
      nodeAggregate,
      nodeStream,
      {
        type: 'AllocateOnNode',
        data: {
          sessionId: 's1',
          owner: 'alice',
          demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 },
          at: PLACED,
        },
      },
      ctx(PLACED),
    );
    expect(allocated.events.map((e) => e.type)).toEqual(['NodeCapacityAllocated']);
    await pipeline.handle(sessionAggregate, session, placeOnNode(PLACED), ctx(PLACED));
  });
  afterEach(() => store.close());

  /** Takes the node offline (kubelet NotReady) and returns the stored offline event. */
  const goOffline = async (): Promise<StoredEvent> => {
    const offline = await pipeline.handle(
      nodeAggregate,
      nodeStream,
      nodeReport(false, OFFLINE),
      ctx(OFFLINE),
    );
    expect(offline.events.map((e) => e.type)).toEqual(['NodeWentOffline']);
    const stream = await store.readStream(nodeStream);
    return stream[stream.length - 1];
  };
  const session = async () => (await pipeline.load(sessionAggregate, sessionStreamId('s1'))).state;

  it('ends the session running on its cards and releases them', async () => {
    await reactor.react(await goOffline());

    const ended = await session();
    expect(ended.status).toBe('terminated');
    expect(released).toEqual([[nodeId, 's1']]);
  });

  it('releases nothing, handled late, for a session running there again on cards of its own', async () => {
    const offline = await goOffline();
    // Paused (kept on the offline), the node back, the session resumed on it: a new segment.
    const s = sessionStreamId('s1');
    await pipeline.handle(
      sessionAggregate,
      s,
      { type: 'PauseSession', data: { reason: 'user', drainId: null, at: OFFLINE } },
      ctx(OFFLINE),
    );
    await pipeline.handle(
      sessionAggregate,
      s,
      { type: 'ResumeSession', data: { displaced: false, drainId: null, at: BACK } },
      ctx(BACK),
    );
    await pipeline.handle(sessionAggregate, s, placeOnNode(BACK), ctx(BACK));
    expect((await session()).status).toBe('running');

    await reactor.react(offline);

    const after = await session();
    expect(after.status).toBe('running');
    expect(released).toEqual([]);
  });
});
