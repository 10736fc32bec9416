import { DomainError } from '@fleet/kernel';
import { poolAggregate, PoolCommand } from '../../apps/control-plane/src/pools/pool.decider';
import { PoolDefinition, poolStreamId } from '../../apps/control-plane/src/pools/pool.events';
import { ReplicaWrites, replicasOnPostgres, requestContext } from './replicas';

const at = '2026-12-07T12:00:00.000Z';
const definition: PoolDefinition = {
  poolId: 'p1',
  clusterId: 'c1',
  name: 'l40s-a',
  kind: 'gpu',
  gpuType: 'L40S',
  mode: 'dedicated',
  spec: { cpu: 16, memoryGiB: 64, diskGiB: 200, gpusPerNode: 1 },
  tenants: [],
  autoscaling: { min: 1, max: 6 },
};

const begin = (operationId: string): PoolCommand => ({
  type: 'BeginPoolOperation',
  data: { operationId, operationType: 'scale_node_pool', desiredSize: 3, at },
});

/**
 * A pool's one-operation lock is `BeginPoolOperation` on the pool's stream, appended with the
 * revision its decision read: two replicas opening operations on one pool at once race on that
 * revision, and the loser decides again on the winner's lock (operation_in_progress).
 */
describe("a pool's operation lock across replicas (PostgreSQL)", () => {
  let close: () => Promise<void>;
  let replicas: ReplicaWrites[];
  beforeAll(async () => {
    ({ replicas, close } = await replicasOnPostgres('ha_pool_lock', 2));
  });
  afterAll(() => close());

  it('gives the lock to one of two replicas opening operations at once, every time', async () => {
    const [a, b] = replicas;
    for (let round = 0; round < 20; round++) {
      const poolId = `p${round}`;
      const stream = poolStreamId(poolId);
      const create: PoolCommand = { type: 'CreateNodePool', data: { ...definition, poolId, at } };
      await a.pipeline.handle(poolAggregate, stream, create, requestContext('create', poolId));
      // Both caches hold the unlocked pool: each replica decides on a read that says "free".
      await Promise.all([a, b].map((r) => r.pipeline.load(poolAggregate, stream)));
      const outcomes = await Promise.allSettled(
        [a, b].map((r, i) =>
          r.pipeline.handle(
            poolAggregate,
            stream,
            begin(`op-${round}-${i}`),
            requestContext(poolId, String(i)),
          ),
        ),
      );
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0].reason).toBeInstanceOf(DomainError);
      expect((lost[0].reason as DomainError).code).toBe('operation_in_progress');
      const events = await a.store.readStream(stream);
      expect(events.map((e) => e.type)).toEqual([
        'NodePoolCreated.v1',
        'NodePoolOperationStarted.v1',
      ]);
    }
  });
});
