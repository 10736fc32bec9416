import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { CommandContext, notFound, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { validationFailed } from '../platform/errors/error-envelope';
import { READ_MODELS } from '../platform/runtime/tokens';
import { ClusterCommand, clusterAggregate } from './cluster.decider';
import { clusterLivenessAggregate } from './cluster-liveness.decider';
import { ClusterStatus, clusterStreamId } from './cluster.events';
import { CLUSTERS, ClusterDoc, reportingNormally } from './clusters.projection';
import { checkCidr, cidrsOverlap } from './cidr';
import { roleOn } from './members/members.projection';

export const CLUSTERS_PROJECTION = 'projection:clusters';

/** A document as the API shows it: members are their own route's, so left out here. */
export const clusterView = (doc: ClusterDoc, caller: string | null) => {
  const { _id: _i, _rev: _r, members: _m, memberSubs: _s, ...view } = doc;
  const myRole = caller === null ? null : roleOn(doc, caller);
  // Documents written before the guard was shown (a MongoDB not yet rebuilt).
  return { ...view, reports: view.reports ?? reportingNormally(), myRole };
};

export type ClusterInput = {
  name: string;
  k8sVersion: string;
  podCidr: string;
  serviceCidr: string;
};

@Injectable()
export class ClustersService {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
  ) {}

  async create(
    input: ClusterInput,
    ctx: CommandContext,
  ): Promise<{ clusterId: string; status: ClusterStatus }> {
    const pod = checkCidr(input.podCidr);
    const service = checkCidr(input.serviceCidr);
    const problems: Array<{ field: string; problems: string[] }> = [];
    if ('problem' in pod) problems.push({ field: 'podCidr', problems: [pod.problem] });
    if ('problem' in service) problems.push({ field: 'serviceCidr', problems: [service.problem] });
    if ('cidr' in pod && 'cidr' in service && cidrsOverlap(pod.cidr, service.cidr)) {
      problems.push({ field: 'serviceCidr', problems: [`overlaps podCidr ${input.podCidr}`] });
    }
    if (problems.length) throw validationFailed(problems);
    // A cluster id is a valid operator clusterId (lower-case, [a-z0-9-]) and follows the command id.
    const clusterId = uuidFrom('cluster', ctx.commandId);
    const result = await this.pipeline.handle(
      clusterAggregate,
      clusterStreamId(clusterId),
      { type: 'RequestCluster', data: { clusterId, ...input, at: ctx.now.toISOString() } },
      ctx,
    );
    await this.runner.settle(result.position, [CLUSTERS_PROJECTION]);
    const state = result.state;
    return { clusterId, status: state.status === 'absent' ? 'requested' : state.status };
  }

  async execute(clusterId: string, command: ClusterCommand, ctx: CommandContext) {
    const result = await this.pipeline.handle(
      clusterAggregate,
      clusterStreamId(clusterId),
      command,
      ctx,
    );
    await this.runner.settle(result.position, [CLUSTERS_PROJECTION]);
    return result;
  }

  async transition(
    clusterId: string,
    to: ClusterStatus,
    reason: string | null,
    ctx: CommandContext,
  ) {
    await this.execute(
      clusterId,
      { type: 'TransitionCluster', data: { clusterId, to, reason, at: ctx.now.toISOString() } },
      ctx,
    );
    return this.get(clusterId);
  }

  /**
   * The mass-failure guard holds the cluster's silent nodes, and an admin knows they are
   * really down: they go offline now, at their real last reports (where their sessions'
   * bills end), instead of waiting for reports that will not come. 409 cluster_not_stalled
   * when nothing is held.
   */
  async confirmOutage(clusterId: string, reason: string | null, ctx: CommandContext) {
    await this.get(clusterId);
    const result = await this.pipeline.handle(
      clusterLivenessAggregate,
      clusterStreamId(clusterId),
      { type: 'ConfirmClusterOutage', data: { clusterId, reason, at: ctx.now.toISOString() } },
      ctx,
    );
    await this.runner.settle(result.position, [CLUSTERS_PROJECTION]);
    return this.get(clusterId);
  }

  /** The cluster's view; `caller`'s role on it as `myRole` (null for none, or no caller). */
  async get(clusterId: string, caller: string | null = null) {
    const doc = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    if (!doc) throw notFound('cluster', clusterId);
    return clusterView(doc, caller);
  }
}
