import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { Loaded } from '../platform/bus/messages';
import { clusterLivenessAggregate, ClusterLivenessState } from './cluster-liveness.decider';
import { clusterStreamId } from './cluster.events';

/** The cluster's liveness (reporting, or stalled with the nodes held) as its stream has it now. */
export class GetClusterLiveness extends Query<Loaded<ClusterLivenessState>> {
  constructor(readonly clusterId: string) {
    super();
  }
}

@QueryHandler(GetClusterLiveness)
export class GetClusterLivenessHandler implements IQueryHandler<GetClusterLiveness> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ clusterId }: GetClusterLiveness) {
    return this.pipeline.load(clusterLivenessAggregate, clusterStreamId(clusterId));
  }
}
