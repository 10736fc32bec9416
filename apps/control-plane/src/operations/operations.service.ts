import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { armWithin } from '@fleet/jobs/port';
import {
  Clock,
  CommandContext,
  DomainError,
  notFound,
  systemContext,
  Turns,
  uuidFrom,
} from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import {
  AddPoolToCluster,
  GetClusterState,
  RemovePoolFromCluster,
  refuseUnlessWorking,
} from '../clusters';
import { Config } from '../config/config';
import { CLOCK, CONFIG, READ_MODELS } from '../platform/runtime/tokens';
import {
  BeginPoolOperation,
  GetPoolState,
  ListPoolMembers,
  NODE_POOLS,
  PoolCommand,
  PoolDoc,
  PoolOperationType,
  beginsOperation,
} from '../pools';
import { gpuShapeRefusal } from './gpu-shape';
import { operationAggregate } from './operation.decider';
import { operationStreamId } from './operation.events';
import { OperationsSaga } from './operations.saga';

export const OPERATIONS_PROJECTION = 'projection:operations';

/** How long a request waits for the job queue to arm recorded work (Redis may be down). */
const ARM_WAIT_MS = 2000;

/** How long last_pool waits for another replica's removal from the cluster's list to settle. */
const REMOVAL_SETTLE_MS = 1000;

@Injectable()
export class OperationsService {
  private readonly logger = new Logger('operations');
  /** Pool operations opened one at a time per cluster in this process (see `lock`). */
  private readonly opening = new Turns();
  /** Pools found off their cluster's list at the last `relistStrays` pass. */
  private unlisted = new Set<string>();
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(OperationsSaga) private readonly saga: OperationsSaga,
    @Inject(CLOCK) private readonly clock: Clock,
    /** Pools and clusters are their slices': asked of them on the buses. */
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  /** ScaleNodePool: refused while another operation runs on the pool, or outside min/max. */
  async scale(
    poolId: string,
    desiredSize: number,
    ctx: CommandContext,
    reason: string | null = null,
  ) {
    return this.open(poolId, 'scale_node_pool', { desiredSize, reason }, ctx);
  }

  /** DeleteNodePool: the cluster refuses its last pool; then the nodes are drained and removed. */
  async delete(poolId: string, ctx: CommandContext) {
    return this.open(poolId, 'delete_node_pool', {}, ctx);
  }

  /** ResizeNodePool: rolls every node onto the new vCPU / memory shape, one at a time. */
  async resize(poolId: string, shape: { cpu?: number; memoryGiB?: number }, ctx: CommandContext) {
    const pool = (await this.queries.execute(new GetPoolState(poolId))).state;
    if (pool.status === 'absent' || pool.status === 'deleted') throw notFound('node pool', poolId);
    const resizeTo = {
      cpu: shape.cpu ?? pool.spec.cpu,
      memoryGiB: shape.memoryGiB ?? pool.spec.memoryGiB,
    };
    const offShape = pool.gpuType
      ? gpuShapeRefusal(pool.gpuType, pool.spec.gpusPerNode, resizeTo)
      : null;
    if (offShape) throw offShape;
    // With an operation running, that is the answer (the decider's), whatever the shape asked.
    const same = resizeTo.cpu === pool.spec.cpu && resizeTo.memoryGiB === pool.spec.memoryGiB;
    if (same && pool.operationId === null) {
      throw new DomainError(
        'resize_no_change',
        `node pool ${pool.name} already has ${resizeTo.cpu} vCPU / ${resizeTo.memoryGiB} GiB nodes`,
      );
    }
    return this.open(poolId, 'resize_node_pool', { resizeTo }, ctx);
  }

  /**
   * Pools left off their cluster's list: a delete whose process died between taking the pool
   * off the list and locking it left an active pool the cluster no longer counts (last_pool
   * then refused too early, the cluster view missed it). Run every JOBS_REPAIR_SEC: an active
   * pool with no operation, off its cluster's list at two passes in a row (a live delete is
   * between its two appends for milliseconds, not a whole period), is listed again.
   * Returns how many were; `leaderEpoch` (the leader's lease term) is recorded on each.
   */
  async relistStrays(leaderEpoch?: number): Promise<number> {
    const active = await findAll<PoolDoc & Doc>(this.readModels, NODE_POOLS, { status: 'active' });
    const seen = new Set<string>();
    let relisted = 0;
    for (const doc of active) {
      const pool = (await this.queries.execute(new GetPoolState(doc.poolId))).state;
      if (pool.status !== 'active' || pool.operationId !== null) continue;
      const cluster = await this.queries.execute(new GetClusterState(pool.clusterId));
      const state = cluster.state;
      if (state.status === 'absent' || state.status === 'deleting') continue;
      if (state.pools.includes(pool.poolId)) continue;
      seen.add(pool.poolId);
      if (!this.unlisted.has(pool.poolId)) continue;
      const now = this.clock.now();
      await this.commands.execute(
        new AddPoolToCluster(
          { clusterId: pool.clusterId, poolId: pool.poolId, at: now.toISOString() },
          systemContext(uuidFrom('relist-pool', pool.poolId, String(cluster.revision ?? -1)), {
            now,
            leaderEpoch,
          }),
        ),
      );
      this.logger.warn(
        `node pool ${pool.poolId} was off cluster ${pool.clusterId}'s list: listed again`,
      );
      relisted++;
    }
    this.unlisted = seen;
    return relisted;
  }

  private async beingDeleted(poolId: string): Promise<boolean> {
    const pool = (await this.queries.execute(new GetPoolState(poolId))).state;
    return pool.status !== 'active' || pool.operationType === 'delete_node_pool';
  }

  /**
   * Locks the pool for the operation; a deletion first takes the pool off its cluster's list,
   * so two deletes cannot take a cluster's last two pools. Every refusal comes before anything
   * is appended: the pool's own (operation_in_progress, size_out_of_range, a pool being
   * deleted) are decided on the pool as read in this turn, then the cluster's (last_pool). One
   * turn per cluster in this process, so no other operation of the cluster's pools can come
   * between the read and the lock here. Only a replica that locks the pool in between (or a
   * store failure) makes this request undo its own removal (ClusterPoolRemoved then
   * ClusterPoolAdded under its correlation id).
   */
  private async lock(
    clusterId: string,
    poolId: string,
    begin: Extract<PoolCommand, { type: 'BeginPoolOperation' }>,
    ctx: CommandContext,
  ): Promise<void> {
    const pool = (await this.queries.execute(new GetPoolState(poolId))).state;
    if (pool.status === 'absent' || pool.status === 'deleted') throw notFound('node pool', poolId);
    if (!beginsOperation(begin.data, pool)) return; // a replayed request
    const removed =
      begin.data.operationType === 'delete_node_pool'
        ? await this.removeFromCluster(clusterId, poolId, begin.data.at, ctx)
        : null;
    try {
      await this.commands.execute(
        new BeginPoolOperation(poolId, begin.data, {
          ...ctx,
          commandId: uuidFrom(ctx.commandId, 'begin'),
        }),
      );
    } catch (error) {
      // Another replica locked the pool since we read it: undo this request's removal, and
      // only that. A delete that removed nothing (another had) must not list the pool again,
      // and neither may one that lost to another delete, or the real last pool could go.
      if (removed !== null && !(await this.beingDeleted(poolId))) {
        await this.commands.execute(
          new AddPoolToCluster(
            { clusterId, poolId, at: begin.data.at },
            { ...ctx, commandId: uuidFrom(ctx.commandId, 'restore-pool', String(removed)) },
          ),
        );
      }
      throw error;
    }
  }

  /**
   * Takes the pool off its cluster's list; the cluster revision that left, or null when it was
   * off already. last_pool is answered only once no other pool of the cluster is off the list
   * while still active without a deletion: such a pool is another replica's removal between
   * its two appends (kept or undone in moments), or a pool being created. Waited for up to
   * REMOVAL_SETTLE_MS; one left by a replica that died between the two appends is waited for
   * that long, then last_pool is answered.
   */
  private async removeFromCluster(
    clusterId: string,
    poolId: string,
    at: string,
    ctx: CommandContext,
  ): Promise<number | null> {
    const until = Date.now() + REMOVAL_SETTLE_MS;
    for (;;) {
      const before = (await this.queries.execute(new GetClusterState(clusterId))).revision ?? -1;
      try {
        const removal = await this.commands.execute(
          new RemovePoolFromCluster(
            { clusterId, poolId, at },
            // Keyed by the revision it saw: a retry of this request (same Idempotency-Key) after
            // its removal was undone must remove again, not be taken for a replay of it.
            { ...ctx, commandId: uuidFrom(ctx.commandId, 'remove-pool', String(before)) },
          ),
        );
        return removal.appended ? removal.revision : null;
      } catch (error) {
        const lastPool = error instanceof DomainError && error.code === 'last_pool';
        if (!lastPool || Date.now() >= until || !(await this.unsettled(clusterId, poolId)))
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  /** Whether a pool of the cluster other than `poolId` is off its list yet active, not being deleted. */
  private async unsettled(clusterId: string, poolId: string): Promise<boolean> {
    const cluster = (await this.queries.execute(new GetClusterState(clusterId))).state;
    const listed = cluster.status === 'absent' ? [] : cluster.pools;
    const pools = await findAll<PoolDoc & Doc>(
      this.readModels,
      NODE_POOLS,
      { clusterId, status: 'active' },
      { poolId: 1 },
    );
    for (const doc of pools) {
      if (doc.poolId === poolId || listed.includes(doc.poolId)) continue;
      const other = (await this.queries.execute(new GetPoolState(doc.poolId))).state;
      if (other.status === 'active') return true;
    }
    return false;
  }

  private async open(
    poolId: string,
    type: PoolOperationType,
    options: {
      desiredSize?: number;
      reason?: string | null;
      resizeTo?: { cpu: number; memoryGiB: number };
    },
    ctx: CommandContext,
  ): Promise<{ operationId: string }> {
    const desiredSize = options.desiredSize ?? null;
    const resizeTo = options.resizeTo ?? null;
    const pool = (await this.queries.execute(new GetPoolState(poolId))).state;
    if (pool.status === 'absent' || pool.status === 'deleted') throw notFound('node pool', poolId);
    const operationId = uuidFrom('operation', ctx.commandId);
    if (pool.operationId === operationId) return { operationId }; // a replayed request
    const at = ctx.now.toISOString();
    const begin: PoolCommand = {
      type: 'BeginPoolOperation',
      data: { operationId, operationType: type, desiredSize, at },
    };
    await this.opening.run(pool.clusterId, () => this.lock(pool.clusterId, poolId, begin, ctx));
    const members = await this.queries.execute(new ListPoolMembers(poolId));
    const fromSize = members.length;
    // Scale-out: one new node per missing one; resize: one replacement per node of another shape.
    const grow = resizeTo
      ? members.filter(
          (m) => m.capacity.cpu !== resizeTo.cpu || m.capacity.memoryGiB !== resizeTo.memoryGiB,
        ).length
      : desiredSize === null
        ? 0
        : Math.max(0, desiredSize - fromSize);
    const taken = new Set(members.map((m) => m.hostname));
    const addHostnames: string[] = [];
    for (let i = 1; addHostnames.length < grow; i++) {
      const hostname = `${pool.name}-${operationId.slice(0, 6)}-${i}`;
      if (!taken.has(hostname)) addHostnames.push(hostname);
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
          clusterId: pool.clusterId,
          poolId,
          fromSize,
          desiredSize,
          addHostnames,
          resizeTo,
          reason: options.reason ?? null,
          deadlineAt: deadlineAt.toISOString(),
          at,
        },
      },
      { ...ctx, commandId: uuidFrom(ctx.commandId, 'request') },
    );
    await this.arm(operationId, deadlineAt.toISOString());
    await this.runner.settle(requested.position, [OPERATIONS_PROJECTION, 'projection:node-pools']);
    return { operationId };
  }

  /**
   * A cluster operation: it follows the lifecycle the provisioner reports (one step per
   * working status) and succeeds when the cluster is running, fails when it is failed (a
   * repair starts from there), or times out.
   */
  async openCluster(
    clusterId: string,
    type: 'create_cluster' | 'upgrade_cluster' | 'repair_cluster',
    reason: string | null,
    ctx: CommandContext,
  ): Promise<{ operationId: string }> {
    const operationId = uuidFrom('operation', ctx.commandId, type);
    const deadlineAt = new Date(
      ctx.now.getTime() + this.config.operationDeadlineSec * 1000,
    ).toISOString();
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
          reason,
          deadlineAt,
          at: ctx.now.toISOString(),
        },
      },
      { ...ctx, commandId: uuidFrom(ctx.commandId, 'request', type) },
    );
    await this.arm(operationId, deadlineAt);
    await this.runner.settle(requested.position, [OPERATIONS_PROJECTION]);
    return { operationId };
  }

  /**
   * The operation is recorded: with Redis out of reach it starts once Redis is back (the
   * saga's repair re-arms an unfinished operation without a job), and the request does not
   * wait for that (a cluster create waited, then answered 500, and its retry made a second
   * cluster).
   */
  private async arm(operationId: string, deadlineAt: string): Promise<void> {
    await armWithin(this.saga.arm({ operationId, deadlineAt }), ARM_WAIT_MS, (error) =>
      this.logger.warn(`operation ${operationId}: not armed yet (${String(error)})`),
    );
  }

  /**
   * API pool changes need the pool's cluster running, upgrading or degraded (409
   * cluster_not_running). Asked by the routes only: an operation's own steps, and the
   * autoscaler (which skips such clusters), are not refused here.
   */
  async refuseOnIdleCluster(poolId: string): Promise<void> {
    const pool = (await this.queries.execute(new GetPoolState(poolId))).state;
    if (pool.status === 'absent' || pool.status === 'deleted') throw notFound('node pool', poolId);
    const cluster = (await this.queries.execute(new GetClusterState(pool.clusterId))).state;
    refuseUnlessWorking(pool.clusterId, cluster);
  }
}
