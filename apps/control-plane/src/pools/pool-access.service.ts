import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { GetClusterState, refuseUnlessWorking } from '../clusters';
import { poolAggregate } from './pool.decider';
import { poolStreamId } from './pool.events';
import { PoolAccess, PoolRequest, poolRefusal } from './pool-access.rule';

/**
 * Who may place sessions in a pool: everyone when its tenant list is empty, else only the
 * listed owners. Nodes in no pool, and pools this process never created, stay open.
 */
@Injectable()
export class PoolAccessRule implements PoolAccess {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  async mayUse(owner: string, poolId: string | null): Promise<boolean> {
    if (poolId === null) return true;
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(poolId));
    if (state.status === 'absent') return true;
    return state.tenants.length === 0 || state.tenants.includes(owner);
  }

  async gone(poolId: string): Promise<boolean> {
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(poolId));
    return state.status === 'absent' || state.status === 'deleted';
  }

  async admit(request: PoolRequest): Promise<void> {
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(request.poolId));
    const refusal = poolRefusal(state, request);
    if (refusal) throw refusal;
    if (state.status === 'absent') return;
    // New sessions (and resumes) need the pool's cluster running, upgrading or degraded.
    const cluster = (await this.queries.execute(new GetClusterState(state.clusterId))).state;
    refuseUnlessWorking(state.clusterId, cluster);
  }
}
