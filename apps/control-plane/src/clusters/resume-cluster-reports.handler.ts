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

/** Nodes of the cluster reported: a stall ends when a held node is among them. */
export class ResumeClusterReports extends Command<
  CommandResult<ClusterLivenessEvent, ClusterLivenessState>
> {
  constructor(
    readonly data: Data<ClusterLivenessCommand, 'ResumeClusterReports'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(ResumeClusterReports)
export class ResumeClusterReportsHandler implements ICommandHandler<ResumeClusterReports> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ data, ctx }: ResumeClusterReports) {
    const command = { type: 'ResumeClusterReports' as const, data };
    const stream = clusterStreamId(data.clusterId);
    return this.pipeline.handle(clusterLivenessAggregate, stream, command, ctx);
  }
}
