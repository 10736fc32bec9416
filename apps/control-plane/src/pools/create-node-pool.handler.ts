import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CreateNodePoolDto, PoolView } from './pools.dto';
import { PoolsService } from './pools.service';

/**
 * A node pool in a cluster (names are unique per cluster). From the API the cluster must be
 * running (409 cluster_not_running); a cluster's create makes the pools it was asked for while
 * the cluster is still on its way (`ofCreate`).
 */
export class CreateNodePool extends Command<PoolView> {
  constructor(
    readonly clusterId: string,
    readonly definition: CreateNodePoolDto,
    readonly ctx: CommandContext,
    readonly ofCreate = false,
  ) {
    super();
  }
}

@CommandHandler(CreateNodePool)
export class CreateNodePoolHandler implements ICommandHandler<CreateNodePool> {
  constructor(@Inject(PoolsService) private readonly pools: PoolsService) {}

  execute({ clusterId, definition, ctx, ofCreate }: CreateNodePool): Promise<PoolView> {
    return this.pools.create(clusterId, definition, ctx, { gated: !ofCreate });
  }
}
