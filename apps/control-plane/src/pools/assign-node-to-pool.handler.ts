import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import type { NodeView } from '../nodes';
import { PoolsService } from './pools.service';

/**
 * A node into a pool, checked against the pool (active, same cluster, kind and GPU model) and
 * then assigned on the node's stream, as `PUT /v1/nodes/{id}/pool` does; answers the node's view.
 */
export class AssignNodeToPool extends Command<NodeView> {
  constructor(
    readonly nodeId: string,
    readonly poolId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(AssignNodeToPool)
export class AssignNodeToPoolHandler implements ICommandHandler<AssignNodeToPool> {
  constructor(@Inject(PoolsService) private readonly pools: PoolsService) {}

  execute({ nodeId, poolId, ctx }: AssignNodeToPool) {
    return this.pools.assignNode(nodeId, poolId, ctx);
  }
}
