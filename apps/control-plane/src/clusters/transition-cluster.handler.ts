import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { ClusterCommand, ClusterState } from './cluster.decider';
import { ClusterEvent } from './cluster.events';
import { ClustersService } from './clusters.service';

/**
 * A lifecycle step, as the provisioner reports it: the HTTP one posts it to
 * `/v1/clusters/{id}/transitions`, the simulated one and the delete operation send this.
 */
export class TransitionCluster extends Command<CommandResult<ClusterEvent, ClusterState>> {
  constructor(
    readonly data: Data<ClusterCommand, 'TransitionCluster'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(TransitionCluster)
export class TransitionClusterHandler implements ICommandHandler<TransitionCluster> {
  constructor(@Inject(ClustersService) private readonly clusters: ClustersService) {}

  execute({ data, ctx }: TransitionCluster) {
    return this.clusters.execute(data.clusterId, { type: 'TransitionCluster', data }, ctx);
  }
}

/** Delete: the cluster goes deleting at once (cluster_in_use while sessions run on its nodes). */
export class DeleteCluster extends Command<CommandResult<ClusterEvent, ClusterState>> {
  constructor(
    readonly data: Data<ClusterCommand, 'DeleteCluster'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(DeleteCluster)
export class DeleteClusterHandler implements ICommandHandler<DeleteCluster> {
  constructor(@Inject(ClustersService) private readonly clusters: ClustersService) {}

  execute({ data, ctx }: DeleteCluster) {
    return this.clusters.execute(data.clusterId, { type: 'DeleteCluster', data }, ctx);
  }
}

/** An admin sets a cluster's pod and service blocks (checked against its meshes by the caller). */
export class SetClusterNetwork extends Command<CommandResult<ClusterEvent, ClusterState>> {
  constructor(
    readonly data: Data<ClusterCommand, 'SetClusterNetwork'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(SetClusterNetwork)
export class SetClusterNetworkHandler implements ICommandHandler<SetClusterNetwork> {
  constructor(@Inject(ClustersService) private readonly clusters: ClustersService) {}

  execute({ data, ctx }: SetClusterNetwork) {
    return this.clusters.execute(data.clusterId, { type: 'SetClusterNetwork', data }, ctx);
  }
}
