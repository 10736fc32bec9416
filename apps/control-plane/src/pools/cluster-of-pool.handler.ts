import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { ClusterOfAnswer, ClusterOfPool } from '../platform/auth/cluster-queries';
import { READ_MODELS } from '../platform/runtime/tokens';
import { NODE_POOLS, PoolDoc } from './pools.projection';

/** For the cluster-role guard: the cluster a pool belongs to, from the pools read model. */
@QueryHandler(ClusterOfPool)
export class ClusterOfPoolHandler implements IQueryHandler<ClusterOfPool, ClusterOfAnswer> {
  constructor(@Inject(READ_MODELS) private readonly readModels: ReadModelStore) {}

  async execute({ poolId }: ClusterOfPool): Promise<ClusterOfAnswer> {
    const doc = await this.readModels.get<PoolDoc & Doc>(NODE_POOLS, poolId);
    return doc?.clusterId ?? null;
  }
}
