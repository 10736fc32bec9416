import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { EventStore, StoredEvent } from '@fleet/eventstore/port';
import {
  CommandContext,
  DomainError,
  systemContext,
  Turns,
  notFound,
  uuidFrom,
} from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { AddPoolToCluster, ClusterState, GetClusterState, refuseUnlessWorking } from '../clusters';
import {
  SetNodePool,
  GetNodeState,
  NODES,
  NodeDoc,
  NodesQueries,
  POOL_LABEL,
  nodeCodec,
  nodeStreamId,
} from '../nodes';
import { validationFailed } from '../platform/errors/error-envelope';
import { EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { DEFAULT_CPU_NODE, GPU_CATALOG } from '../catalog/catalog';
import { poolAggregate, PoolCommand } from './pool.decider';
import {
  AUTOSCALE_DEFAULTS,
  PoolDefinition,
  autoscalingOn,
  poolCodec,
  poolStreamId,
} from './pool.events';
import { CreateNodePoolDto, PoolView } from './pools.dto';
import { NODE_POOLS, PoolDoc } from './pools.projection';
import { poolSize } from './pool-summaries-of.handler';

export const POOLS_PROJECTION = 'projection:node-pools';

const conflict = (code: string, message: string, details: Record<string, unknown> = {}) =>
  new DomainError(code, message, 'conflict', details);

/** The node shape of the other kind of pool: given, it would be dropped without a word. */
const OTHER_KIND_FIELDS = {
  gpu: ['cpu', 'memoryGiB'],
  cpu: ['gpuType', 'gpusPerNode'],
} as const;

/** A CPU pool takes no GPU fields, a GPU pool (shaped by its GPU type) no vCPUs or memory. */
export const refuseOtherKindFields = (body: CreateNodePoolDto): void => {
  const given = body as unknown as Record<string, unknown>;
  const extra = OTHER_KIND_FIELDS[body.kind].filter(
    (f) => given[f] !== undefined && given[f] !== null,
  );
  if (extra.length > 0) {
    throw validationFailed(
      extra.map((field) => ({ field, problems: [`not allowed for a ${body.kind} pool`] })),
    );
  }
};

@Injectable()
export class PoolsService {
  private readonly logger = new Logger('pools');
  private readonly creating = new Turns();
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(NodesQueries) private readonly nodes: NodesQueries,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  /**
   * One create at a time per cluster, each until the read model shows its pool: the name
   * check reads the read model, and creates racing under one name all passed it. (Across
   * replicas of the control plane it remains a read; see docs/ARCHITECTURE.md.)
   */
  create(
    clusterId: string,
    body: CreateNodePoolDto,
    ctx: CommandContext,
    { gated = true } = {},
  ): Promise<PoolView> {
    return this.creating.run(clusterId, () => this.createNow(clusterId, body, ctx, gated));
  }

  private async createNow(
    clusterId: string,
    body: CreateNodePoolDto,
    ctx: CommandContext,
    gated: boolean,
  ): Promise<PoolView> {
    refuseOtherKindFields(body);
    const cluster = await this.existingCluster(clusterId);
    if (gated) refuseUnlessWorking(clusterId, cluster);
    const poolId = uuidFrom('pool', ctx.commandId);
    // This very command made it already: a retry under an Idempotency-Key whose kept answer is
    // gone (Redis restarted empty) answers as the first did, not 409 pool_name_taken over the
    // pool it made itself.
    const made = (await this.pipeline.load(poolAggregate, poolStreamId(poolId))).state;
    if (made.status === 'active') return this.listed(poolId, clusterId, ctx);
    if (made.status !== 'absent') return this.get(poolId); // deleted since: shown as it is
    const taken = await this.readModels.count(NODE_POOLS, {
      clusterId,
      name: body.name,
      status: { $ne: 'deleted' },
    });
    if (taken > 0) {
      throw conflict('pool_name_taken', `cluster ${clusterId} already has a pool ${body.name}`);
    }
    if (body.autoscaling && body.autoscaling.min > body.autoscaling.max) {
      throw new DomainError(
        'validation_failed',
        'autoscaling.min exceeds autoscaling.max',
        'invalid',
        {
          fields: [{ field: 'autoscaling.min', problems: ['must not exceed autoscaling.max'] }],
        },
      );
    }
    const gpu = body.kind === 'gpu' && body.gpuType ? GPU_CATALOG[body.gpuType] : null;
    const definition: PoolDefinition = {
      poolId,
      clusterId,
      name: body.name,
      kind: body.kind,
      gpuType: body.kind === 'gpu' ? (body.gpuType ?? null) : null,
      mode: body.mode ?? 'shared',
      spec: {
        cpu: gpu?.cpu ?? body.cpu ?? DEFAULT_CPU_NODE.cpu,
        memoryGiB: gpu?.memoryGiB ?? body.memoryGiB ?? DEFAULT_CPU_NODE.memoryGiB,
        diskGiB: 200,
        gpusPerNode: gpu ? (body.gpusPerNode ?? 1) : 0,
      },
      tenants: [...new Set(body.access?.tenants ?? [])],
      autoscaling: body.autoscaling
        ? {
            min: body.autoscaling.min,
            max: body.autoscaling.max,
            queueWaitSec: body.autoscaling.queueWaitSec ?? AUTOSCALE_DEFAULTS.queueWaitSec,
            idleCooldownSec: body.autoscaling.idleCooldownSec ?? AUTOSCALE_DEFAULTS.idleCooldownSec,
          }
        : null,
    };
    const at = ctx.now.toISOString();
    // The pool first, then the cluster's list: a crash between can only make last_pool refuse more.
    await this.pipeline.handle(
      poolAggregate,
      poolStreamId(poolId),
      { type: 'CreateNodePool', data: { ...definition, at } },
      ctx,
    );
    return this.listed(poolId, clusterId, ctx);
  }

  /** The pool in its cluster's list (idempotent: the command id is the create's), then its view. */
  private async listed(poolId: string, clusterId: string, ctx: CommandContext): Promise<PoolView> {
    const added = await this.commands.execute(
      new AddPoolToCluster(
        { clusterId, poolId, at: ctx.now.toISOString() },
        { ...ctx, commandId: uuidFrom(ctx.commandId, 'add-pool') },
      ),
    );
    await this.runner.settle(added.position, [POOLS_PROJECTION, 'projection:clusters']);
    return this.get(poolId);
  }

  async execute(poolId: string, command: PoolCommand, ctx: CommandContext) {
    const result = await this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
    await this.runner.settle(result.position, [POOLS_PROJECTION]);
    return result;
  }

  async get(poolId: string): Promise<PoolView> {
    const doc = await this.readModels.get<PoolDoc & Doc>(NODE_POOLS, poolId);
    if (!doc) throw notFound('node pool', poolId);
    return this.view(doc);
  }

  async list(clusterId: string): Promise<{ items: PoolView[] }> {
    // An unknown cluster is 404, as GET /v1/clusters/{id} says, not an empty list.
    await this.existingCluster(clusterId);
    const pools = await findAll<PoolDoc & Doc>(
      this.readModels,
      NODE_POOLS,
      { clusterId, status: { $ne: 'deleted' } },
      { name: 1 },
    );
    return { items: await Promise.all(pools.map((d) => this.view(d))) };
  }

  /** Judged from the cluster's own stream, so a cluster just created is found at once. */
  private async existingCluster(clusterId: string): Promise<ClusterState> {
    const cluster = (await this.queries.execute(new GetClusterState(clusterId))).state;
    if (cluster.status === 'absent') throw notFound('cluster', clusterId);
    return cluster;
  }

  /** Every node of the pool on the Nodes screen (deleted nodes are gone from it). */
  async members(poolId: string): Promise<NodeDoc[]> {
    return findAll<NodeDoc & Doc>(this.readModels, NODES, { poolId }, { hostname: 1 });
  }

  private async view(doc: PoolDoc): Promise<PoolView> {
    return {
      poolId: doc.poolId,
      clusterId: doc.clusterId,
      name: doc.name,
      kind: doc.kind,
      gpuType: doc.gpuType,
      mode: doc.mode,
      spec: { ...doc.spec },
      access: { tenants: [...doc.access.tenants] },
      autoscaling: doc.autoscaling
        ? { ...AUTOSCALE_DEFAULTS, enabled: autoscalingOn(doc.autoscaling), ...doc.autoscaling }
        : null,
      status: doc.status,
      size: await poolSize(this.readModels, doc),
      operation: doc.operation,
      createdAt: doc.createdAt,
    };
  }

  /** PUT /v1/nodes/{id}/pool: at once, into an active pool of the same cluster, kind and GPU model. */
  async assignNode(nodeId: string, poolId: string, ctx: CommandContext) {
    const node = (await this.queries.execute(new GetNodeState(nodeId))).state;
    if (node.status !== 'online' && node.status !== 'offline') throw notFound('node', nodeId);
    const pool = (await this.pipeline.load(poolAggregate, poolStreamId(poolId))).state;
    if (pool.status === 'absent' || pool.status === 'deleted') throw notFound('node pool', poolId);
    if (pool.status !== 'active') {
      throw conflict('pool_not_active', `node pool ${pool.name} is ${pool.status}`);
    }
    if (node.clusterId !== pool.clusterId) {
      throw conflict(
        'pool_cluster_mismatch',
        `node ${node.hostname} is in cluster ${node.clusterId}, pool ${pool.name} in ${pool.clusterId}`,
        { nodeClusterId: node.clusterId, poolClusterId: pool.clusterId },
      );
    }
    if (node.role !== pool.kind) {
      throw conflict(
        'pool_kind_mismatch',
        `node ${node.hostname} is a ${node.role} node; pool ${pool.name} takes ${pool.kind} nodes`,
        { role: node.role, kind: pool.kind },
      );
    }
    const models = [...new Set(node.gpus.map((g) => g.model))];
    if (pool.kind === 'gpu' && (models.length === 0 || models.some((m) => m !== pool.gpuType))) {
      throw conflict(
        'gpu_model_mismatch',
        `node ${node.hostname} has ${models.join(', ') || 'no'} cards; pool ${pool.name} takes ${pool.gpuType}`,
        { models, gpuType: pool.gpuType },
      );
    }
    await this.commands.execute(
      new SetNodePool(nodeId, { poolId, at: ctx.now.toISOString() }, ctx),
    );
    return this.nodes.get(nodeId);
  }

  /**
   * pool_emptied: a node left a dedicated GPU pool (deleted, or moved away); when no node with
   * a GPU card is left in it, the pool says so once per departure.
   */
  async react(stored: StoredEvent): Promise<void> {
    if (stored.streamId.startsWith('pool-')) {
      // The cluster's list of pools converges even when a crash came between the two appends.
      const event = poolCodec.decode(stored.type, stored.data);
      if (event?.type !== 'NodePoolCreated') return;
      const { poolId, clusterId, at } = event.data;
      const pool = (await this.pipeline.load(poolAggregate, stored.streamId)).state;
      if (pool.status !== 'active') return;
      await this.commands.execute(
        new AddPoolToCluster(
          { clusterId, poolId, at },
          this.context(stored, uuidFrom(stored.eventId, 'add-pool')),
        ),
      );
      return;
    }
    if (!stored.streamId.startsWith('node-')) return;
    const event = nodeCodec.decode(stored.type, stored.data);
    if (event?.type === 'NodeRegistered') return this.joinLabelledPool(stored, event.data);
    if (event?.type === 'NodeInventoryChanged' || event?.type === 'NodeGpusChanged') {
      return this.joinLabelledPoolLate(stored, event.data.nodeId);
    }
    if (event?.type !== 'NodeDeleted' && event?.type !== 'NodeAssignedToPool') return;
    const nodeId = event.data.nodeId;
    const { poolId } = await this.poolsBefore(stored, nodeId);
    if (!poolId) return;
    // The Nodes screen must show the departure before we count what is left.
    await this.runner.settle(stored.position, ['projection:nodes'], 10_000);
    const left = await this.readModels.count(NODES, { poolId, gpuCount: { $gt: 0 } });
    if (left > 0) return;
    const hostname =
      event.type === 'NodeDeleted' ? event.data.hostname : await this.hostnameOf(stored.streamId);
    await this.pipeline.handle(
      poolAggregate,
      poolStreamId(poolId),
      { type: 'MarkPoolEmptied', data: { nodeId, hostname, at: event.data.at } },
      this.context(stored, uuidFrom(stored.eventId, 'pool-emptied')),
    );
  }

  /** A node moved out of a pool is still registered: its stream names it. */
  private async hostnameOf(streamId: string): Promise<string> {
    const nodeId = streamId.slice('node-'.length);
    const { state } = await this.queries.execute(new GetNodeState(nodeId));
    return state.status === 'absent' ? nodeId : state.hostname;
  }

  /**
   * A node that registers with the `fleet/pool` label (asked for by a provisioner) joins that
   * pool; one that does not fit it stays out (the refusal is the reason, logged).
   */
  private async joinLabelledPool(
    stored: StoredEvent,
    node: { nodeId: string; labels: Readonly<Record<string, string>> },
  ): Promise<void> {
    const poolId = node.labels[POOL_LABEL];
    if (!poolId) return;
    try {
      await this.assignNode(
        node.nodeId,
        poolId,
        this.context(stored, uuidFrom(stored.eventId, 'join-labelled-pool')),
      );
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      this.logger.warn(
        `node ${node.nodeId} labelled for pool ${poolId} stays out: ${error.message}`,
      );
    }
  }

  /**
   * A labelled node in no pool whose inventory changed tries again: it may not have fitted when
   * it registered (a GPU node reports its cards only once its driver is up), and a scale-out
   * waits for it. A node in a pool (one an admin moved, say), or one an admin took out of its
   * pool, is left where it is.
   */
  private async joinLabelledPoolLate(stored: StoredEvent, nodeId: string): Promise<void> {
    const { state } = await this.queries.execute(new GetNodeState(nodeId));
    if (state.status !== 'online' && state.status !== 'offline') return;
    if (state.poolId !== null || !state.labels[POOL_LABEL]) return;
    if ((await this.poolsBefore(stored, nodeId)).left) return;
    await this.joinLabelledPool(stored, { nodeId, labels: state.labels });
  }

  /**
   * The pool a node was in just before this event, and whether it was taken out of one since
   * it registered (read from its stream, not the read model).
   */
  private async poolsBefore(
    stored: StoredEvent,
    nodeId: string,
  ): Promise<{ poolId: string | null; left: boolean }> {
    let poolId: string | null = null;
    let left = false;
    for (let from = 0; from < stored.revision;) {
      const page = await this.events.readStream(nodeStreamId(nodeId), {
        fromRevision: from,
        limit: Math.min(1000, stored.revision - from),
      });
      if (page.length === 0) break;
      for (const e of page) {
        const decoded = nodeCodec.decode(e.type, e.data);
        if (decoded?.type === 'NodeAssignedToPool') {
          left = decoded.data.poolId === null && poolId !== null;
          poolId = decoded.data.poolId;
        }
        if (decoded?.type === 'NodeRegistered') [poolId, left] = [null, false];
      }
      from = page[page.length - 1].revision + 1;
    }
    return { poolId, left };
  }

  private context(stored: StoredEvent, commandId: string): CommandContext {
    return systemContext(commandId, { cause: stored });
  }
}
