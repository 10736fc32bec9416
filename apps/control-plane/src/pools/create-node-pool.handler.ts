import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CreateNodePoolDto, PoolView } from './pools.dto';
import { PoolsService } from './pools.service';

/** An admin creates a node pool in a cluster (names are unique per cluster). */
export class CreateNodePool extends Command<PoolView> {
  constructor(
    readonly clusterId: string,
    readonly definition: CreateNodePoolDto,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(CreateNodePool)
export class CreateNodePoolHandler implements ICommandHandler<CreateNodePool> {
  constructor(@Inject(PoolsService) private readonly pools: PoolsService) {}

  execute({ clusterId, definition, ctx }: CreateNodePool): Promise<PoolView> {
    return this.pools.create(clusterId, definition, ctx);
  }
}
