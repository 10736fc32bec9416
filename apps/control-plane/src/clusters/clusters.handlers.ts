import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../../libs/cqrs/src';
import { clusterAggregate } from './cluster.decider';
import { clusterStreamId } from './cluster.events';
import { clusterLivenessAggregate } from './cluster-liveness.decider';
import {
  AddPoolToCluster,
  AdoptCluster,
  GetClusterLiveness,
  GetClusterState,
  MarkClusterReportsStalled,
  RemovePoolFromCluster,
  ResumeClusterReports,
} from './clusters.messages';

/** Each runs the one command path: load the cluster's stream, decide, append. */
abstract class OnCluster {
  constructor(@Inject(CommandPipeline) protected readonly pipeline: CommandPipeline) {}
}

@CommandHandler(AdoptCluster)
export class AdoptClusterHandler extends OnCluster implements ICommandHandler<AdoptCluster> {
  execute({ data, ctx }: AdoptCluster) {
    const command = { type: 'AdoptCluster' as const, data };
    return this.pipeline.handle(clusterAggregate, clusterStreamId(data.clusterId), command, ctx);
  }
}

@CommandHandler(AddPoolToCluster)
export class AddPoolToClusterHandler
  extends OnCluster
  implements ICommandHandler<AddPoolToCluster>
{
  execute({ data, ctx }: AddPoolToCluster) {
    const command = { type: 'AddPoolToCluster' as const, data };
    return this.pipeline.handle(clusterAggregate, clusterStreamId(data.clusterId), command, ctx);
  }
}

@CommandHandler(RemovePoolFromCluster)
export class RemovePoolFromClusterHandler
  extends OnCluster
  implements ICommandHandler<RemovePoolFromCluster>
{
  execute({ data, ctx }: RemovePoolFromCluster) {
    const command = { type: 'RemovePoolFromCluster' as const, data };
    return this.pipeline.handle(clusterAggregate, clusterStreamId(data.clusterId), command, ctx);
  }
}

@CommandHandler(MarkClusterReportsStalled)
export class MarkClusterReportsStalledHandler
  extends OnCluster
  implements ICommandHandler<MarkClusterReportsStalled>
{
  execute({ data, ctx }: MarkClusterReportsStalled) {
    const command = { type: 'MarkClusterReportsStalled' as const, data };
    const stream = clusterStreamId(data.clusterId);
    return this.pipeline.handle(clusterLivenessAggregate, stream, command, ctx);
  }
}

@CommandHandler(ResumeClusterReports)
export class ResumeClusterReportsHandler
  extends OnCluster
  implements ICommandHandler<ResumeClusterReports>
{
  execute({ data, ctx }: ResumeClusterReports) {
    const command = { type: 'ResumeClusterReports' as const, data };
    const stream = clusterStreamId(data.clusterId);
    return this.pipeline.handle(clusterLivenessAggregate, stream, command, ctx);
  }
}

@QueryHandler(GetClusterState)
export class GetClusterStateHandler extends OnCluster implements IQueryHandler<GetClusterState> {
  execute({ clusterId }: GetClusterState) {
    return this.pipeline.load(clusterAggregate, clusterStreamId(clusterId));
  }
}

@QueryHandler(GetClusterLiveness)
export class GetClusterLivenessHandler
  extends OnCluster
  implements IQueryHandler<GetClusterLiveness>
{
  execute({ clusterId }: GetClusterLiveness) {
    return this.pipeline.load(clusterLivenessAggregate, clusterStreamId(clusterId));
  }
}

export const CLUSTER_HANDLERS = [
  AdoptClusterHandler,
  AddPoolToClusterHandler,
  RemovePoolFromClusterHandler,
  MarkClusterReportsStalledHandler,
  ResumeClusterReportsHandler,
  GetClusterStateHandler,
  GetClusterLivenessHandler,
];
