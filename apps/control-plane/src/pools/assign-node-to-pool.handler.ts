import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '../../../../libs/kernel/src';
import { NodeView } from '../nodes/nodes.dto';
import { PoolsService } from './pools.service';

/** An admin moves a node into a pool at once: same cluster, matching kind and GPU model. */
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

  execute({ nodeId, poolId, ctx }: AssignNodeToPool): Promise<NodeView> {
    return this.pools.assignNode(nodeId, poolId, ctx);
  }
}
