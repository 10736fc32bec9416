import { SessionDemand } from '../nodes';
import { PoolState, poolDecider } from './pool.decider';
import { PoolDefinition, PoolEvent } from './pool.events';
import { PoolRequest, poolOpenTo, poolRefusal } from './pool-access.rule';

const at = '2026-12-02T10:00:00.000Z';
const definition: PoolDefinition = {
  poolId: 'p1',
  clusterId: 'c1',
  name: 'l40s-a',
  kind: 'gpu',
  gpuType: 'L40S',
  mode: 'shared',
  spec: { cpu: 16, memoryGiB: 64, diskGiB: 200, gpusPerNode: 1 },
  tenants: [],
  autoscaling: null,
};
const given = (...events: PoolEvent[]): PoolState =>
  events.reduce(poolDecider.evolve, poolDecider.initialState());
const created = (over: Partial<PoolDefinition> = {}): PoolEvent => ({
  type: 'NodePoolCreated',
  data: { ...definition, ...over, at },
});
const deleting: PoolEvent = {
  type: 'NodePoolOperationStarted',
  data: { poolId: 'p1', operationId: 'o1', operationType: 'delete_node_pool', at },
};
const deleted: PoolEvent = { type: 'NodePoolDeleted', data: { poolId: 'p1', clusterId: 'c1', at } };

const l40s: SessionDemand = { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 };
const ask = (demand: SessionDemand = l40s, over: Partial<PoolRequest> = {}): PoolRequest => ({
  poolId: 'p1',
  owner: 'alice',
  demand,
  use: 'create',
  ...over,
});
const refusal = (pool: PoolState, request: PoolRequest) => {
  const error = poolRefusal(pool, request);
  return error && { code: error.code, kind: error.kind, details: error.details };
};

describe('a session naming a pool', () => {
  it('is taken by an active pool of its kind and model, open to its owner', () => {
    expect(poolRefusal(given(created()), ask())).toBeNull();
    expect(poolRefusal(given(created({ tenants: ['alice'] })), ask())).toBeNull();
    const cpu = created({ kind: 'cpu', gpuType: null });
    expect(poolRefusal(given(cpu), ask({ kind: 'cpu', cpu: 2, memoryGiB: 4 }))).toBeNull();
  });

  describe('when created', () => {
    it('is refused as not found for a pool that never was or was deleted', () => {
      for (const pool of [given(), given(created(), deleting, deleted)]) {
        expect(refusal(pool, ask())).toEqual({
          code: 'not_found',
          kind: 'not_found',
          details: { id: 'p1' },
        });
      }
    });
  });

  describe('when resumed', () => {
    it('is a conflict once its pool was deleted: the session exists, its pool does not', () => {
      expect(refusal(given(created(), deleting, deleted), ask(l40s, { use: 'resume' }))).toEqual({
        code: 'pool_not_active',
        kind: 'conflict',
        details: { poolId: 'p1', status: 'deleted' },
      });
    });
  });

  it('is refused while its pool is being deleted', () => {
    expect(refusal(given(created(), deleting), ask())).toMatchObject({
      code: 'pool_not_active',
      details: { poolId: 'p1', status: 'deleting' },
    });
  });

  it('is forbidden in a pool whose tenants leave its owner out', () => {
    expect(refusal(given(created({ tenants: ['bob'] })), ask())).toEqual({
      code: 'forbidden',
      kind: 'forbidden',
      details: { poolId: 'p1', owner: 'alice' },
    });
  });

  it('names only the pool id, not its name, to an owner it is closed to', () => {
    const error = poolRefusal(given(created({ tenants: ['bob'] })), ask());
    expect(error?.message).toBe('node pool p1 is not open to alice');
  });

  it('is a pool_mismatch in a pool of the other kind or another GPU model', () => {
    const mismatch = (pool: PoolState, demand: SessionDemand) => refusal(pool, ask(demand));
    expect(mismatch(given(created()), { kind: 'cpu', cpu: 2, memoryGiB: 4 })).toEqual({
      code: 'pool_mismatch',
      kind: 'conflict',
      details: { poolId: 'p1', poolKind: 'gpu', gpuType: 'L40S' },
    });
    expect(mismatch(given(created({ kind: 'cpu', gpuType: null })), l40s)).toMatchObject({
      code: 'pool_mismatch',
      details: { poolKind: 'cpu', gpuType: null },
    });
    expect(
      mismatch(given(created()), { kind: 'gpu', gpuModel: 'MIG_1g', gpuCount: 1 }),
    ).toMatchObject({ code: 'pool_mismatch', details: { gpuType: 'L40S' } });
  });
});

describe('a pool of a cluster with members', () => {
  const members = (role: 'owner' | 'editor' | 'viewer' | null) => ({ any: true, role });

  it('is open to the cluster’s owners and editors only, unless its access names tenants', () => {
    expect(poolOpenTo([], 'alice', members('owner'))).toBe(true);
    expect(poolOpenTo([], 'alice', members('editor'))).toBe(true);
    expect(poolOpenTo([], 'alice', members('viewer'))).toBe(false);
    expect(poolOpenTo([], 'alice', members(null))).toBe(false);
    expect(poolOpenTo([], 'alice', { any: false, role: null })).toBe(true);
    // The pool's access says otherwise: its tenants, members or not.
    expect(poolOpenTo(['alice'], 'alice', members(null))).toBe(true);
    expect(poolOpenTo(['bob'], 'alice', members('owner'))).toBe(false);
  });

  it('refuses a viewer’s session as forbidden, naming only the pool id', () => {
    expect(refusal(given(created()), ask(l40s))).toBeNull();
    const error = poolRefusal(given(created()), ask(l40s), members('viewer'));
    expect([error?.code, error?.message]).toEqual([
      'forbidden',
      'node pool p1 is not open to alice',
    ]);
    expect(poolRefusal(given(created()), ask(l40s), members('editor'))).toBeNull();
  });
});
