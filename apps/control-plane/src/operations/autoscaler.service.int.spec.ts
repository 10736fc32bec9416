import { EmbeddedReadModelStore } from '@fleet/readmodels';
import { NODE_POOLS, PoolDoc } from '../pools';
import type { QueryBus } from '@nestjs/cqrs';
import { SESSIONS, SessionDoc } from '../sessions';
import { GetClusterState } from '../clusters';
import { AutoscalerService } from './autoscaler.service';
import { OperationsService } from './operations.service';

const pool = (poolId: string, cpu: number): PoolDoc & { _id: string } => ({
  _id: poolId,
  _rev: 0,
  poolId,
  clusterId: 'c1',
  name: poolId,
  kind: 'cpu',
  gpuType: null,
  mode: 'shared',
  spec: { cpu, memoryGiB: 64, diskGiB: 200, gpusPerNode: 0 },
  autoscaling: { min: 0, max: 3, queueWaitSec: 0, idleCooldownSec: 600 },
  access: { tenants: [] },
  status: 'active',
  operation: null,
  createdAt: '2026-12-03T00:00:00.000Z',
  deletedAt: null,
});

/** A query bus: each cluster in `status` (running unless said), the pool's members otherwise. */
const bus = (members: () => unknown[], status: Record<string, string> = {}) =>
  ({
    execute: async (query: unknown) =>
      query instanceof GetClusterState
        ? { state: { status: status[query.clusterId] ?? 'running' } }
        : members(),
  }) as unknown as QueryBus;

const queued = (i: number, poolId: string, cpu: number): SessionDoc => ({
  _id: `s-${String(i).padStart(5, '0')}`,
  _rev: 0,
  sessionId: `s-${String(i).padStart(5, '0')}`,
  owner: 'alice',
  kind: 'cpu',
  demand: { kind: 'cpu', cpu, memoryGiB: 1 },
  poolId,
  status: 'queued',
  nodeId: null,
  gpus: [],
  terminationReason: null,
  createdAt: '2026-12-03T00:00:00.000Z',
  queueRank: 1,
  queuedAt: '2026-12-03T00:00:00.000Z',
  drainId: null,
});

describe('AutoscalerService over a long queue', () => {
  it('sees every queued session, not the first page: a pool whose sessions come after 1,000 others grows', async () => {
    const readModels = new EmbeddedReadModelStore();
    // 1,200 sessions asking for more than the small pool's nodes have, listed first; then one
    // that fits the small pool only.
    await readModels.commit(
      'test',
      [
        { op: 'upsert', collection: NODE_POOLS, doc: pool('big', 64) },
        { op: 'upsert', collection: NODE_POOLS, doc: pool('small', 4) },
        ...Array.from({ length: 1200 }, (_, i) => ({
          op: 'upsert' as const,
          collection: SESSIONS,
          doc: queued(i, 'big', 32),
        })),
        { op: 'upsert', collection: SESSIONS, doc: queued(99_999, 'small', 2) },
      ],
      1,
    );
    const scale = jest.fn().mockResolvedValue({ operationId: 'op' });
    const autoscaler = new AutoscalerService(
      readModels,
      bus(() => []),
      { scale } as unknown as OperationsService,
    );
    await autoscaler.tick(Date.parse('2026-12-03T01:00:00.000Z'));
    const grown = scale.mock.calls.map(([poolId, size]) => [poolId, size]);
    expect(grown).toContainEqual(['small', 1]);
    expect(grown).toContainEqual(['big', 3]);
  });
});

describe('AutoscalerService watching idle nodes', () => {
  const HOUR = Date.parse('2026-12-03T01:00:00.000Z');
  const setUp = async () => {
    const readModels = new EmbeddedReadModelStore();
    await readModels.commit(
      'test',
      [{ op: 'upsert', collection: NODE_POOLS, doc: pool('p', 8) }],
      1,
    );
    let node = { nodeId: 'n1', status: 'ready', _rev: 3 };
    const scale = jest.fn().mockResolvedValue({ operationId: 'op' });
    const autoscaler = new AutoscalerService(
      readModels,
      bus(() => [node]),
      { scale } as unknown as OperationsService,
    );
    return {
      autoscaler,
      scale,
      /** The node's stream moved on (a session placed and ended, unseen between two ticks). */
      eventsOnNode: () => (node = { ...node, _rev: node._rev + 2 }),
    };
  };
  // The pool's cool-down is 600 s.
  const after = (sec: number) => HOUR + sec * 1000;

  it('scales a node in once it was seen ready at one revision for the cool-down', async () => {
    const { autoscaler, scale } = await setUp();
    await autoscaler.tick(after(0));
    await autoscaler.tick(after(599));
    expect(scale).not.toHaveBeenCalled();
    await autoscaler.tick(after(600));
    expect(scale.mock.calls.map(([poolId, size]) => [poolId, size])).toEqual([['p', 0]]);
  });

  it('starts the cool-down again when the node was busy and idle again between two ticks it saw (another process ran the ticks between)', async () => {
    const { autoscaler, scale, eventsOnNode } = await setUp();
    await autoscaler.tick(after(0));
    eventsOnNode();
    await autoscaler.tick(after(600));
    expect(scale).not.toHaveBeenCalled();
    await autoscaler.tick(after(1199));
    expect(scale).not.toHaveBeenCalled();
    await autoscaler.tick(after(1200));
    expect(scale).toHaveBeenCalledTimes(1);
  });
});

describe('AutoscalerService run by the leader', () => {
  it("records the leader's lease epoch on the scale it orders", async () => {
    const readModels = new EmbeddedReadModelStore();
    await readModels.commit(
      'test',
      [
        { op: 'upsert', collection: NODE_POOLS, doc: pool('small', 4) },
        { op: 'upsert', collection: SESSIONS, doc: queued(1, 'small', 2) },
      ],
      1,
    );
    const scale = jest.fn().mockResolvedValue({ operationId: 'op' });
    const autoscaler = new AutoscalerService(
      readModels,
      bus(() => []),
      { scale } as unknown as OperationsService,
    );
    await autoscaler.tick(Date.parse('2026-12-03T01:00:00.000Z'), 6);
    expect(scale).toHaveBeenCalledWith(
      'small',
      1,
      expect.objectContaining({ leaderEpoch: 6 }),
      expect.anything(),
    );
  });
});

describe('AutoscalerService and the cluster and pool switches', () => {
  const seeded = async (docs: Array<PoolDoc & { _id: string }>) => {
    const readModels = new EmbeddedReadModelStore();
    await readModels.commit(
      'test',
      docs.map((doc) => ({ op: 'upsert' as const, collection: NODE_POOLS, doc })),
      1,
    );
    return readModels;
  };
  const below = (poolId: string, clusterId = 'c1', enabled = true) => ({
    ...pool(poolId, 4),
    clusterId,
    autoscaling: { enabled, min: 2, max: 3, queueWaitSec: 1, idleCooldownSec: 600 },
  });

  it('raises a pool below its min only where autoscaling is on and the cluster works', async () => {
    const readModels = await seeded([
      below('on'),
      below('off', 'c1', false),
      below('requested', 'c2'),
      below('failed', 'c3'),
      below('degraded', 'c4'),
    ]);
    const scale = jest.fn().mockResolvedValue({ operationId: 'op' });
    const autoscaler = new AutoscalerService(
      readModels,
      bus(() => [], { c2: 'requested', c3: 'failed', c4: 'degraded' }),
      { scale } as unknown as OperationsService,
    );
    await autoscaler.tick(Date.parse('2026-12-03T01:00:00.000Z'));
    expect(scale.mock.calls.map(([poolId, size]) => [poolId, size])).toEqual([
      ['degraded', 2],
      ['on', 2],
    ]);
  });
});
