import type { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline, WorkflowRun } from '@fleet/cqrs';
import { CommandContext, DomainError, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { DRAINS, DrainDoc, DrainNode } from '../drains';
import { DeleteNode, GetNodeState, NODES, NodeDoc, RequestNodeRemoval } from '../nodes';
import { ListPoolMembers, NODE_POOLS, PoolDefinition, PoolDoc } from '../pools';
import { Provisioner } from '../provisioner';
import { OperationCommand, OperationState, operationAggregate } from './operation.decider';
import { operationStreamId } from './operation.events';
import {
  ChosenNode,
  OperationInput,
  OperationOutput,
  OperationSnapshot,
} from './operation.workflow';
import { choosesNodes } from './pool-operation.steps';

type Running = Extract<OperationState, { operationId: string }>;
type Run = WorkflowRun<OperationInput, OperationSnapshot>;

/** A timeout has one id (a stale one appends nothing); others are keyed by what they say. */
export const operationCommandId = (operationId: string, command: OperationCommand): string =>
  command.type === 'TimeOutOperation'
    ? uuidFrom(operationId, 'timeout')
    : uuidFrom(operationId, command.type, JSON.stringify(command.data));

/** The pool as the provisioner is asked for it. */
export const definitionOf = (pool: PoolDoc): PoolDefinition => {
  const {
    _id: _i,
    _rev: _r,
    access,
    status: _s,
    operation: _o,
    createdAt: _c,
    deletedAt: _d,
    ...definition
  } = pool;
  return { ...definition, tenants: access.tenants };
};

/** The operation a run's output acts for: outputs of a step come only from an open one. */
export const poolOp = (run: Run): Running & { poolId: string } => {
  const { op } = run.state;
  if (op.status === 'absent' || op.poolId === null)
    throw new Error('a pool output without its pool');
  return { ...op, poolId: op.poolId };
};

/**
 * What a pool operation reads and does beyond its own stream: the snapshot a step decides on
 * (its pool, members, new nodes, chosen nodes, drains), and the effects its outputs name on
 * the provisioner, drains and nodes. Each effect is idempotent (a retry repeats nothing).
 */
export class PoolOperationEffects {
  /** What this process asked the provisioner, per operation (see OperationSnapshot.asked). */
  private readonly asked = new Map<string, Set<string>>();

  constructor(
    private readonly deps: {
      readonly pipeline: CommandPipeline;
      readonly readModels: ReadModelStore;
      readonly provisioner: Provisioner;
      /** Nodes, drains and pools are their slices': asked of them on the buses. */
      readonly commands: CommandBus;
      readonly queries: QueryBus;
      /** The context of a command the operation issues (in its request's correlation). */
      readonly context: (operationId: string, commandId: string) => Promise<CommandContext>;
    },
  ) {}

  /** A pool operation's snapshot for a step; `bare` holds the operation alone. */
  async snapshot(
    bare: OperationSnapshot & { op: Running & { poolId: string } },
  ): Promise<OperationSnapshot> {
    const { op } = bare;
    const { poolId } = op;
    if (!(await this.deps.readModels.get<PoolDoc & Doc>(NODE_POOLS, poolId))) return bare;
    const registered = op.addHostnames.length
      ? await findAll<NodeDoc & Doc>(this.deps.readModels, NODES, {
          poolId,
          hostname: { $in: [...op.addHostnames] },
        })
      : [];
    const nodes: Record<string, ChosenNode> = {};
    for (const { nodeId, hostname } of op.chosen ?? []) {
      const { state } = await this.deps.queries.execute(new GetNodeState(nodeId));
      nodes[nodeId] =
        state.status === 'online' || state.status === 'offline'
          ? {
              status: state.status,
              poolId: state.poolId,
              hostname: state.hostname,
              sessions: Object.keys(state.allocations).length,
            }
          : { status: 'gone', poolId: null, hostname, sessions: 0 };
    }
    const drains: Record<string, string> = {};
    for (const drainId of Object.values(op.drains)) {
      const drain = await this.deps.readModels.get<DrainDoc & Doc>(DRAINS, drainId);
      if (drain) drains[drainId] = drain.status;
    }
    return {
      ...bare,
      poolSeen: true,
      members: choosesNodes(op)
        ? await this.deps.queries.execute(new ListPoolMembers(poolId))
        : null,
      registered: new Set(registered.map((n) => n.hostname)),
      nodes,
      drains,
      asked: this.asked.get(op.operationId) ?? new Set(),
    };
  }

  /** The operation ended: nothing more is asked for it. */
  forget(operationId: string): void {
    this.asked.delete(operationId);
  }

  async createNodes(
    { hostnames, shape }: Extract<OperationOutput, { type: 'CreateNodes' }>['data'],
    run: Run,
  ): Promise<void> {
    const { operationId, poolId } = poolOp(run);
    const pool = await this.deps.readModels.get<PoolDoc & Doc>(NODE_POOLS, poolId);
    if (!pool) throw new Error(`node pool ${poolId}: not in the read model yet`);
    const definition = definitionOf(pool);
    await this.deps.provisioner.createNodes({
      operationId,
      pool: shape ? { ...definition, spec: { ...pool.spec, ...shape } } : definition,
      hostnames,
    });
    for (const hostname of hostnames) this.remember(operationId, `create ${hostname}`);
  }

  /** Drains the node by relocation, and records the drain on the operation. */
  async drainNode(nodeId: string, run: Run): Promise<void> {
    const { operationId, poolId } = poolOp(run);
    const drainId = await this.deps.commands.execute(
      new DrainNode(
        nodeId,
        'relocate',
        await this.deps.context(operationId, uuidFrom(operationId, 'drain', nodeId)),
        // Decided on the node's stream too: a move landing after the snapshot is seen.
        poolId,
      ),
    );
    const record: OperationCommand = {
      type: 'RecordOperationDrain',
      data: { nodeId, drainId, at: run.now.toISOString() },
    };
    await this.deps.pipeline.handle(
      operationAggregate,
      operationStreamId(operationId),
      record,
      await this.deps.context(operationId, operationCommandId(operationId, record)),
    );
  }

  /**
   * Before the provisioner is asked to remove nodes, each is marked for removal on its own
   * stream. The node decides: one an admin uncordoned since its drain (queued sessions may land
   * on it again), or that holds sessions, is refused (`node_in_use`), the operation fails naming
   * it, and nothing is removed; once marked, an uncordon or a move to another pool is refused
   * (`node_being_removed`) until the operation's deadline, so nothing is placed on a node on its
   * way out and no other pool loses it. Deciding on the stream, not on a read, settles a race
   * with an uncordon or a move either way. Asked once per process: the adapters are
   * idempotent, so a restart may ask again.
   */
  async removeNodes(
    { key, nodes }: Extract<OperationOutput, { type: 'RemoveNodes' }>['data'],
    run: Run,
  ): Promise<void> {
    const { operationId, poolId, clusterId, deadlineAt } = poolOp(run);
    for (const node of nodes) {
      await this.deps.commands.execute(
        new RequestNodeRemoval(
          node.nodeId,
          { operationId, poolId, until: deadlineAt, at: run.now.toISOString() },
          await this.deps.context(operationId, uuidFrom(operationId, 'removal', node.nodeId)),
        ),
      );
    }
    await this.deps.provisioner.removeNodes({ operationId, clusterId, poolId, nodes });
    this.remember(operationId, `removal ${key}`);
  }

  /** Through the node command path, once offline (a pool's or a cluster's deletion): refused while it still holds sessions. */
  async deleteNode(
    { nodeId, at }: Extract<OperationOutput, { type: 'DeleteNode' }>['data'],
    run: Run,
  ): Promise<void> {
    const { op } = run.state;
    if (op.status === 'absent') throw new Error('a node deletion without its operation');
    const { operationId } = op;
    try {
      await this.deps.commands.execute(
        new DeleteNode(
          nodeId,
          await this.deps.context(operationId, uuidFrom(operationId, 'delete', nodeId)),
          at,
        ),
      );
    } catch (error) {
      // A session landed between the read and the delete: the next step looks again.
      if (!(error instanceof DomainError && error.code === 'node_busy')) throw error;
    }
  }

  private remember(operationId: string, asked: string): void {
    const set = this.asked.get(operationId) ?? new Set<string>();
    this.asked.set(operationId, set.add(asked));
  }
}
