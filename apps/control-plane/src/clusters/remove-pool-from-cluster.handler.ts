import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { clusterAggregate, ClusterCommand, ClusterState } from './cluster.decider';
import { ClusterEvent, clusterStreamId } from './cluster.events';

/** A pool leaves its cluster's list: refused (`last_pool`) for the cluster's last one. */
export class RemovePoolFromCluster extends Command<CommandResult<ClusterEvent, ClusterState>> {
  constructor(
    readonly data: Data<ClusterCommand, 'RemovePoolFromCluster'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(RemovePoolFromCluster)
export class RemovePoolFromClusterHandler implements ICommandHandler<RemovePoolFromCluster> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ data, ctx }: RemovePoolFromCluster) {
    const command = { type: 'RemovePoolFromCluster' as const, data };
    return this.pipeline.handle(clusterAggregate, clusterStreamId(data.clusterId), command, ctx);
  }
}
