import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { CLUSTERS, ClusterDoc, GetClusterState, refuseUnlessWorking, roleOn } from '../clusters';
import { READ_MODELS } from '../platform/runtime/tokens';
import { poolAggregate } from './pool.decider';
import { poolStreamId } from './pool.events';
import {
  ClusterMembers,
  NO_MEMBERS,
  PoolAccess,
  PoolRequest,
  poolOpenTo,
  poolRefusal,
} from './pool-access.rule';

/**
 * Who may place sessions in a pool (poolOpenTo). Nodes in no pool, and pools this process
 * never created, stay open. A cluster's members are read from its read model, settled after
 * every change, so a change holds from the next placement.
 */
@Injectable()
export class PoolAccessRule implements PoolAccess {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
  ) {}

  async mayUse(owner: string, poolId: string | null): Promise<boolean> {
    if (poolId === null) return true;
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(poolId));
    if (state.status === 'absent') return true;
    if (state.tenants.length > 0) return state.tenants.includes(owner);
    return poolOpenTo(state.tenants, owner, await this.members(state.clusterId, owner));
  }

  async gone(poolId: string): Promise<boolean> {
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(poolId));
    return state.status === 'absent' || state.status === 'deleted';
  }

  async admit(request: PoolRequest): Promise<void> {
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(request.poolId));
    const members =
      state.status === 'absent' || state.tenants.length > 0
        ? NO_MEMBERS
        : await this.members(state.clusterId, request.owner);
    const refusal = poolRefusal(state, request, members);
    if (refusal) throw refusal;
    if (state.status === 'absent') return;
    // New sessions (and resumes) need the pool's cluster running, upgrading or degraded.
    const cluster = (await this.queries.execute(new GetClusterState(state.clusterId))).state;
    refuseUnlessWorking(state.clusterId, cluster);
  }

  private async members(clusterId: string, owner: string): Promise<ClusterMembers> {
    const doc = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    if (!doc?.members?.length) return NO_MEMBERS;
    return { any: true, role: roleOn(doc, owner) };
  }
}
