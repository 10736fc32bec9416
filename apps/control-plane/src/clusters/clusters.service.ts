import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, SubscriptionRunner, reactorSubscriberName } from '@fleet/cqrs';
import { CommandContext, notFound, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { validationFailed } from '../platform/errors/error-envelope';
import { CONFIG, READ_MODELS } from '../platform/runtime/tokens';
import { Config } from '../config/config';
import { isListed } from '../config/k8s-versions';
import { ClusterCommand, clusterAggregate } from './cluster.decider';
import { clusterLivenessAggregate } from './cluster-liveness.decider';
import { ClusterStatus, VeleroSettings, clusterStreamId } from './cluster.events';
import { CLUSTERS, ClusterDoc } from './clusters.projection';
import { checkCidr, cidrsOverlap } from '../catalog/cidr';
import { scheduleProblem } from '../catalog/cron-schedule';
import { ClusterViews } from './cluster-views';
import { VELERO_AT_CREATE_REACTOR } from './backup-policies-of.query';

export const CLUSTERS_PROJECTION = 'projection:clusters';

export type ClusterInput = {
  name: string;
  k8sVersion: string;
  podCidr: string;
  serviceCidr: string;
  velero?: { enabled: boolean; schedule?: string; ttlHours?: number };
};

/**
 * The create's `velero` becomes the cluster's backup policy (the backups slice adopts it), so
 * it is held to the policy's rule here, before anything is recorded: a five-field cron,
 * required when enabled.
 */
const veleroScheduleProblem = (velero: ClusterInput['velero']): string | null => {
  if (!velero) return null;
  if (velero.schedule === undefined)
    return velero.enabled ? 'is required when enabled is true' : null;
  return scheduleProblem(velero.schedule);
};

@Injectable()
export class ClustersService {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(ClusterViews) private readonly views: ClusterViews,
  ) {}

  /** The Kubernetes versions a cluster may be created at or upgraded to (K8S_VERSIONS). */
  versions() {
    return { items: this.config.k8sVersions.map((v) => ({ ...v })) };
  }

  /** Refuses (400 naming the fields) a version not in the catalog and bad or overlapping CIDRs. */
  check(input: ClusterInput): void {
    const problems: Array<{ field: string; problems: string[] }> = [];
    if (!isListed(this.config.k8sVersions, input.k8sVersion)) {
      const listed = this.config.k8sVersions.map((v) => v.version).join(', ');
      problems.push({
        field: 'k8sVersion',
        problems: [`must be one of ${listed} (GET /v1/kubernetes-versions)`],
      });
    }
    const pod = checkCidr(input.podCidr);
    const service = checkCidr(input.serviceCidr);
    if ('problem' in pod) problems.push({ field: 'podCidr', problems: [pod.problem] });
    if ('problem' in service) problems.push({ field: 'serviceCidr', problems: [service.problem] });
    if ('cidr' in pod && 'cidr' in service && cidrsOverlap(pod.cidr, service.cidr)) {
      problems.push({ field: 'serviceCidr', problems: [`overlaps podCidr ${input.podCidr}`] });
    }
    const schedule = veleroScheduleProblem(input.velero);
    if (schedule) problems.push({ field: 'velero.schedule', problems: [schedule] });
    if (problems.length) throw validationFailed(problems);
  }

  async create(
    input: ClusterInput,
    ctx: CommandContext,
  ): Promise<{ clusterId: string; status: ClusterStatus }> {
    this.check(input);
    // Named one by one: the body carries more (nodePools) than the cluster's event records.
    const { name, k8sVersion, podCidr, serviceCidr, velero: asked } = input;
    const cluster = { name, k8sVersion, podCidr, serviceCidr };
    const velero: VeleroSettings | null = asked
      ? {
          enabled: asked.enabled,
          schedule: asked.schedule ?? null,
          ttlHours: asked.ttlHours ?? null,
        }
      : null;
    // A cluster id is a valid operator clusterId (lower-case, [a-z0-9-]) and follows the command id.
    const clusterId = uuidFrom('cluster', ctx.commandId);
    const result = await this.pipeline.handle(
      clusterAggregate,
      clusterStreamId(clusterId),
      {
        type: 'RequestCluster',
        data: { clusterId, ...cluster, velero, at: ctx.now.toISOString() },
      },
      ctx,
    );
    // With velero on, also until the backups slice adopted it as the policy the view shows.
    const readers = velero?.enabled
      ? [CLUSTERS_PROJECTION, reactorSubscriberName({ name: VELERO_AT_CREATE_REACTOR })]
      : [CLUSTERS_PROJECTION];
    await this.runner.settle(result.position, readers);
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
    move: {
      to: ClusterStatus;
      reason: string | null;
      apiEndpoint?: string;
      caCertificate?: string;
    },
    ctx: CommandContext,
  ) {
    await this.execute(
      clusterId,
      { type: 'TransitionCluster', data: { clusterId, ...move, at: ctx.now.toISOString() } },
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
    return this.views.one(doc, caller);
  }
}
