import { Inject } from '@nestjs/common';
import { Command, CommandBus, CommandHandler, ICommandHandler, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { CommandContext, DomainError, notFound } from '@fleet/kernel';
import { GetNodeState, NodesQueries, SetNodePool } from '../nodes';
import type { NodeView } from '../nodes';
import { poolAggregate } from './pool.decider';
import { poolStreamId } from './pool.events';
import { PoolsService } from './pools.service';

/**
 * A node into a pool, checked against the pool (active, same cluster, kind and GPU model) and
 * then assigned on the node's stream, as `PUT /v1/nodes/{id}/pool` does; answers the node's
 * view. `poolId` null takes the node out of its pool.
 */
export class AssignNodeToPool extends Command<NodeView> {
  constructor(
    readonly nodeId: string,
    readonly poolId: string | null,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(AssignNodeToPool)
export class AssignNodeToPoolHandler implements ICommandHandler<AssignNodeToPool> {
  constructor(
    @Inject(PoolsService) private readonly pools: PoolsService,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(NodesQueries) private readonly nodes: NodesQueries,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  execute({ nodeId, poolId, ctx }: AssignNodeToPool) {
    if (poolId === null) return this.leave(nodeId, ctx);
    return this.pools.assignNode(nodeId, poolId, ctx);
  }

  /**
   * Out of its pool. A node in no pool is answered as it is (200, nothing appended, as a
   * second cordon is). Refused 409 operation_in_progress while an operation runs on its pool
   * (a scale-in may have chosen it, a resize replace it), and node_being_removed (the node's
   * own rule) while an operation removes it. Its sessions keep running where they are.
   */
  private async leave(nodeId: string, ctx: CommandContext): Promise<NodeView> {
    const node = (await this.queries.execute(new GetNodeState(nodeId))).state;
    if (node.status !== 'online' && node.status !== 'offline') throw notFound('node', nodeId);
    if (node.poolId === null) return this.nodes.get(nodeId);
    const pool = (await this.pipeline.load(poolAggregate, poolStreamId(node.poolId))).state;
    if (pool.status !== 'absent' && pool.operationId !== null) {
      throw new DomainError(
        'operation_in_progress',
        `node pool ${pool.name} is running operation ${pool.operationId} (${pool.operationType}): node ${node.hostname} stays in it until that ends`,
        'conflict',
        { poolId: pool.poolId, operationId: pool.operationId, operationType: pool.operationType },
      );
    }
    await this.commands.execute(
      new SetNodePool(nodeId, { poolId: null, at: ctx.now.toISOString() }, ctx),
    );
    return this.nodes.get(nodeId);
  }
}
