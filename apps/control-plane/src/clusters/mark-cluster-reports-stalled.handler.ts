import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import {
  clusterLivenessAggregate,
  ClusterLivenessCommand,
  ClusterLivenessState,
} from './cluster-liveness.decider';
import { ClusterLivenessEvent } from './cluster-liveness.events';
import { clusterStreamId } from './cluster.events';

/** The mass-failure guard holds the cluster's silent nodes (one stall, however often asked). */
export class MarkClusterReportsStalled extends Command<
  CommandResult<ClusterLivenessEvent, ClusterLivenessState>
> {
  constructor(
    readonly data: Data<ClusterLivenessCommand, 'MarkClusterReportsStalled'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(MarkClusterReportsStalled)
export class MarkClusterReportsStalledHandler implements ICommandHandler<MarkClusterReportsStalled> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ data, ctx }: MarkClusterReportsStalled) {
    const command = { type: 'MarkClusterReportsStalled' as const, data };
    const stream = clusterStreamId(data.clusterId);
    return this.pipeline.handle(clusterLivenessAggregate, stream, command, ctx);
  }
}
