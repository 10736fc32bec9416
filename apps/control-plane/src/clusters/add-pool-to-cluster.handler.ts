import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { clusterAggregate, ClusterCommand, ClusterState } from './cluster.decider';
import { ClusterEvent, clusterStreamId } from './cluster.events';

/** A pool joins its cluster's list (where `last_pool` is decided). */
export class AddPoolToCluster extends Command<CommandResult<ClusterEvent, ClusterState>> {
  constructor(
    readonly data: Data<ClusterCommand, 'AddPoolToCluster'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(AddPoolToCluster)
export class AddPoolToClusterHandler implements ICommandHandler<AddPoolToCluster> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ data, ctx }: AddPoolToCluster) {
    const command = { type: 'AddPoolToCluster' as const, data };
    return this.pipeline.handle(clusterAggregate, clusterStreamId(data.clusterId), command, ctx);
  }
}
