import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { armWithin } from '@fleet/jobs/port';
import { CommandContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import {
  CLUSTERS,
  ClusterDoc,
  ClusterPoolSpec,
  DeleteCluster,
  OpenClusterOperation,
} from '../clusters';
import { Config } from '../config/config';
import { NODES, NodeDoc } from '../nodes';
import { CONFIG, READ_MODELS } from '../platform/runtime/tokens';
import { ClusterPoolSpecDto, CreateNodePool, PoolView } from '../pools';
import { operationAggregate } from './operation.decider';
import { OperationTarget, operationStreamId } from './operation.events';
import { OPERATIONS, OperationDoc } from './operations.projection';
import { OperationsSaga } from './operations.saga';

type ClusterOperationType =
  OpenClusterOperation['operationType'] | 'restore_cluster' | 'connect_mesh' | 'disconnect_mesh';

/** How long a request waits for the job queue to arm recorded work (Redis may be down). */
const ARM_WAIT_MS = 2000;
const OPEN = { $in: ['pending', 'running'] };

/** A pool's first size: `size`, else autoscaling.min, else 1. */
export const initialSize = (spec: { size?: number; autoscaling?: { min: number } }): number =>
  spec.size ?? spec.autoscaling?.min ?? 1;

/** The hostnames of a pool made with its cluster: decided once, so a re-ask means the same nodes. */
export const poolHostnames = (name: string, operationId: string, size: number): string[] =>
  Array.from({ length: size }, (_, i) => `${name}-${operationId.slice(0, 6)}-${i + 1}`);

/**
 * Opens cluster operations: the create (its pools made at once, their nodes by the
 * provisioner), upgrade, repair and delete. Each asks the provisioner and follows the
 * lifecycle (operation.workflow); a delete first moves the cluster to `deleting`.
 */
@Injectable()
export class ClusterOperationsService {
  private readonly logger = new Logger('operations');

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(OperationsSaga) private readonly saga: OperationsSaga,
    @Inject(CommandBus) private readonly commands: CommandBus,
  ) {}

  async open(
    clusterId: string,
    type: ClusterOperationType,
    reason: string | null,
    ctx: CommandContext,
    pools: readonly ClusterPoolSpec[] = [],
    target: Pick<OperationTarget, 'backupId'> = {},
  ): Promise<{ operationId: string }> {
    const operationId = uuidFrom('operation', ctx.commandId, type);
    let clusterPools: OperationTarget['clusterPools'] = [];
    if (type === 'create_cluster')
      clusterPools = await this.createPools(clusterId, operationId, pools, ctx);
    if (type === 'repair_cluster') clusterPools = await this.createdPools(clusterId);
    if (type === 'delete_cluster') {
      const running = await this.startDeletion(clusterId, ctx);
      if (running) return { operationId: running };
    }
    const deadlineAt = new Date(ctx.now.getTime() + this.config.operationDeadlineSec * 1000);
    const requested = await this.pipeline.handle(
      operationAggregate,
      operationStreamId(operationId),
      {
        type: 'RequestOperation',
        data: {
          operationId,
          operationType: type,
          clusterId,
          poolId: null,
          fromSize: null,
          desiredSize: null,
          addHostnames: [],
          clusterPools,
          ...target,
          reason,
          deadlineAt: deadlineAt.toISOString(),
          at: ctx.now.toISOString(),
        },
      },
      { ...ctx, commandId: uuidFrom(ctx.commandId, 'request', type) },
    );
    await armWithin(
      this.saga.arm({ operationId, deadlineAt: deadlineAt.toISOString() }),
      ARM_WAIT_MS,
      (error) => this.logger.warn(`operation ${operationId}: not armed yet (${String(error)})`),
    );
    await this.runner.settle(requested.position, ['projection:operations']);
    return { operationId };
  }

  /** The create's pools as pool records now (the pools slice's CreateNodePool), with their hostnames. */
  private async createPools(
    clusterId: string,
    operationId: string,
    specs: readonly ClusterPoolSpec[],
    ctx: CommandContext,
  ): Promise<NonNullable<OperationTarget['clusterPools']>> {
    const plans: Array<{ poolId: string; hostnames: string[] }> = [];
    for (const [i, raw] of specs.entries()) {
      const { size, ...definition } = raw as unknown as ClusterPoolSpecDto;
      const pool: PoolView = await this.commands.execute(
        new CreateNodePool(
          clusterId,
          definition,
          { ...ctx, commandId: uuidFrom(ctx.commandId, 'pool', String(i)) },
          true,
        ),
      );
      const count = initialSize({ size, autoscaling: definition.autoscaling });
      plans.push({ poolId: pool.poolId, hostnames: poolHostnames(pool.name, operationId, count) });
    }
    return plans;
  }

  /**
   * A repair of a cluster that never ran makes what its create asked for and is missing. Once
   * it ran, a repair makes no nodes: the pools may have been scaled since.
   */
  private async createdPools(clusterId: string): Promise<OperationTarget['clusterPools']> {
    const cluster = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    if (!cluster || cluster.history.some((h) => h.to === 'running')) return [];
    const page = await this.readModels.find<OperationDoc & Doc>(
      OPERATIONS,
      { clusterId, operationType: 'create_cluster' },
      { sort: { requestedAt: -1 }, limit: 1 },
    );
    return page.items[0]?.clusterPools ?? [];
  }

  /**
   * The cluster goes `deleting` (409 cluster_in_use while sessions run on its nodes, as the
   * Nodes read model counts them; invalid_transition once deleted). Already deleting: the
   * running delete_cluster operation's id, the answer to a delete asked again.
   */
  private async startDeletion(clusterId: string, ctx: CommandContext): Promise<string | null> {
    const nodes = await findAll<NodeDoc & Doc>(this.readModels, NODES, { clusterId });
    const runningSessions = nodes.reduce((sum, n) => sum + n.runningSessions, 0);
    const at = ctx.now.toISOString();
    const result = await this.commands.execute(
      new DeleteCluster(
        { clusterId, runningSessions, at },
        { ...ctx, commandId: uuidFrom(ctx.commandId, 'delete') },
      ),
    );
    if (result.appended) return null;
    const open = await this.readModels.find<OperationDoc & Doc>(
      OPERATIONS,
      { clusterId, operationType: 'delete_cluster', status: OPEN },
      { sort: { requestedAt: -1 }, limit: 1 },
    );
    return open.items[0]?.operationId ?? null;
  }
}
