import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { clusterAggregate, ClusterCommand, ClusterState } from './cluster.decider';
import { ClusterEvent, clusterStreamId } from './cluster.events';

/** A node registered in a cluster this control plane has not seen: it exists from then on. */
export class AdoptCluster extends Command<CommandResult<ClusterEvent, ClusterState>> {
  constructor(
    readonly data: Data<ClusterCommand, 'AdoptCluster'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(AdoptCluster)
export class AdoptClusterHandler implements ICommandHandler<AdoptCluster> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ data, ctx }: AdoptCluster) {
    const command = { type: 'AdoptCluster' as const, data };
    return this.pipeline.handle(clusterAggregate, clusterStreamId(data.clusterId), command, ctx);
  }
}
