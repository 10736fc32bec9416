import { EmbeddedReadModelStore } from '../../../../libs/readmodels/src';
import { NODE_POOLS, PoolDoc } from '../pools/pools.projection';
import { PoolsService } from '../pools/pools.service';
import { SESSIONS, SessionDoc } from '../sessions/sessions.projection';
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
      { members: async () => [] } as unknown as PoolsService,
      { scale } as unknown as OperationsService,
    );
    await autoscaler.tick(Date.parse('2026-12-03T01:00:00.000Z'));
    const grown = scale.mock.calls.map(([poolId, size]) => [poolId, size]);
    expect(grown).toContainEqual(['small', 1]);
    expect(grown).toContainEqual(['big', 3]);
  });
});
