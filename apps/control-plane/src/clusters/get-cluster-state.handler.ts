import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { Loaded } from '../platform/bus/messages';
import { clusterAggregate, ClusterState } from './cluster.decider';
import { clusterStreamId } from './cluster.events';

/** The cluster's lifecycle state as its stream has it now. */
export class GetClusterState extends Query<Loaded<ClusterState>> {
  constructor(readonly clusterId: string) {
    super();
  }
}

@QueryHandler(GetClusterState)
export class GetClusterStateHandler implements IQueryHandler<GetClusterState> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ clusterId }: GetClusterState) {
    return this.pipeline.load(clusterAggregate, clusterStreamId(clusterId));
  }
}
