import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { NodeDoc } from '../nodes';
import { PoolsService } from './pools.service';

/** Every node of the pool on the Nodes screen, by hostname (deleted nodes are gone from it). */
export class ListPoolMembers extends Query<NodeDoc[]> {
  constructor(readonly poolId: string) {
    super();
  }
}

@QueryHandler(ListPoolMembers)
export class ListPoolMembersHandler implements IQueryHandler<ListPoolMembers> {
  constructor(@Inject(PoolsService) private readonly pools: PoolsService) {}

  execute({ poolId }: ListPoolMembers) {
    return this.pools.members(poolId);
  }
}
