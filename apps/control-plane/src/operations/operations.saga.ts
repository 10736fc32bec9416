import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline, SubscriptionRunner } from '../../../../libs/cqrs/src';
import { EventStore, StoredEvent } from '../../../../libs/eventstore/src/port';
import { DelayedJobs, scheduleUnlessBusy } from '../../../../libs/jobs/src/port';
import { CommandContext, DomainError, systemContext, uuidFrom } from '../../../../libs/kernel/src';
import { Doc, ReadModelStore, findAll } from '../../../../libs/readmodels/src/port';
import { AddPoolToCluster, CLUSTERS, ClusterDoc, clusterCodec } from '../clusters';
import { DRAINS, DrainDoc, DrainNode } from '../drains';
import { DeleteNode, GetNodeState, NODES, NodeDoc, RequestNodeRemoval } from '../nodes';
import { DELAYED_JOBS, EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import {
  ChangePoolSpec,
  EndPoolOperation,
  ListPoolMembers,
  MarkPoolDeleted,
  NODE_POOLS,
  PoolDefinition,
  PoolDoc,
} from '../pools';
import { PROVISIONER, Provisioner } from '../provisioner';
import {
  OperationCommand,
  OperationState,
  isFinished,
  operationAggregate,
  stepOf,
} from './operation.decider';
import { operationCodec, operationStreamId } from './operation.events';
import { OPERATIONS, OperationDoc } from './operations.projection';

export const OPERATION_STEP_QUEUE = 'operation-step';
export const OPERATION_DEADLINE_QUEUE = 'operation-deadline';
/** How often a waiting step looks again (nodes registering, drains finishing, nodes going). */
const POLL_MS = 250;
/** Cluster steps take minutes; their transitions also wake the operation (react). */
const CLUSTER_POLL_MS = 1000;
/** Operations not finished: each should have a deadline job. */
const OPEN = { status: { $in: ['pending', 'running'] } };

type Job = { operationId: string };
type Running = Extract<OperationState, { operationId: string }>;

/** The pool as the provisioner is asked for it. */
const definitionOf = (pool: PoolDoc): PoolDefinition => {
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

/** Scale-in order: idle nodes first, then those with the fewest sessions; newest names first on a tie. */
export const chooseNodesToRemove = (
  nodes: ReadonlyArray<Pick<NodeDoc, 'nodeId' | 'hostname' | 'runningSessions'>>,
  count: number,
): Array<{ nodeId: string; hostname: string }> =>
  [...nodes]
    .sort(
      (a, b) =>
        a.runningSessions - b.runningSessions ||
        (a.hostname < b.hostname ? 1 : a.hostname > b.hostname ? -1 : 0),
    )
    .slice(0, Math.max(0, count))
    .map(({ nodeId, hostname }) => ({ nodeId, hostname }));

/** A chosen node an admin has moved to another pool: the operation fails naming it. */
const movedAway = (hostname: string, what: string): DomainError =>
  new DomainError(
    'node_in_use',
    `node ${hostname} was moved to another pool since it was chosen: not ${what}`,
    'conflict',
  );

/**
 * The operations saga. Each step re-reads the operation, the pool and its nodes and does the
 * next thing; a delayed job carries it from step to step (so a crash resumes it), and a second
 * job at the deadline sends TimeOutOperation. Every step's effect is idempotent.
 */
@Injectable()
export class OperationsSaga {
  private readonly logger = new Logger('operations');
  private readonly running = new Map<string, Promise<void>>();
  private readonly removalAsked = new Set<string>();
  private readonly created = new Set<string>();
  /** Each operation's request's correlation id (its first event's), read once per process. */
  private readonly correlations = new Map<string, string>();

  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(PROVISIONER) private readonly provisioner: Provisioner,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  register(): void {
    this.jobs.register<Job>(OPERATION_STEP_QUEUE, (job) => this.step(job.operationId), {
      attempts: 20,
      backoffMs: 200,
      concurrency: 20,
    });
    this.jobs.register<Job>(OPERATION_DEADLINE_QUEUE, (job) => this.deadline(job.operationId), {
      attempts: 20,
      backoffMs: 200,
      concurrency: 20,
    });
  }

  schedule(operationId: string, delayMs = 0): Promise<void> {
    return this.scheduleUnlessRunning(OPERATION_STEP_QUEUE, operationId, Date.now() + delayMs);
  }

  async arm(op: Pick<Running, 'operationId' | 'deadlineAt'>): Promise<void> {
    await this.scheduleUnlessRunning(
      OPERATION_DEADLINE_QUEUE,
      op.operationId,
      Date.parse(op.deadlineAt),
    );
    await this.schedule(op.operationId);
  }

  /** Every run re-reads state: when its run cannot be put in place, one is coming anyway. */
  private async scheduleUnlessRunning(queue: string, operationId: string, at: number) {
    if (!(await scheduleUnlessBusy<Job>(this.jobs, queue, operationId, at, { operationId })))
      this.logger.warn(`operation ${operationId}: ${queue} already running on a stalled worker`);
  }

  /** Requested → armed; finished → the pool is free again (and a failed deletion gives it back). */
  async react(stored: StoredEvent): Promise<void> {
    if (stored.streamId.startsWith('cluster-')) {
      // A lifecycle move wakes the cluster's open operations at once.
      if (clusterCodec.decode(stored.type, stored.data)?.type !== 'ClusterTransitioned') return;
      await this.runner.settle(stored.position, ['projection:clusters']);
      const open = await this.readModels.find<OperationDoc & Doc>(
        OPERATIONS,
        {
          clusterId: stored.streamId.slice('cluster-'.length),
          poolId: null,
          status: { $in: ['pending', 'running'] },
        },
        { limit: 100 },
      );
      for (const op of open.items) await this.schedule(op.operationId);
      return;
    }
    if (!stored.streamId.startsWith('operation-')) return;
    const event = operationCodec.decode(stored.type, stored.data);
    if (!event) return;
    if (event.type === 'OperationRequested') return this.arm(event.data);
    if (
      event.type !== 'OperationSucceeded' &&
      event.type !== 'OperationFailed' &&
      event.type !== 'OperationTimedOut'
    )
      return;
    const { state } = await this.pipeline.load(operationAggregate, stored.streamId);
    if (state.status === 'absent' || state.poolId === null) return;
    this.correlations.delete(state.operationId);
    const ctx = systemContext(uuidFrom(stored.eventId, 'end-pool-op'), {
      correlationId: stored.metadata.correlationId,
    });
    if (state.operationType === 'delete_node_pool' && event.type !== 'OperationSucceeded') {
      await this.commands.execute(
        new AddPoolToCluster(
          { clusterId: state.clusterId, poolId: state.poolId, at: event.data.at },
          { ...ctx, commandId: uuidFrom(stored.eventId, 'restore-pool') },
        ),
      );
    }
    await this.commands.execute(
      new EndPoolOperation(
        state.poolId,
        { operationId: state.operationId, at: event.data.at },
        ctx,
      ),
    );
    await this.jobs.cancel(OPERATION_DEADLINE_QUEUE, state.operationId);
  }

  async deadline(operationId: string): Promise<void> {
    const { state } = await this.pipeline.load(operationAggregate, operationStreamId(operationId));
    if (state.status === 'absent' || isFinished(state.status)) return;
    const now = new Date();
    await this.command(
      state,
      { type: 'TimeOutOperation', data: { at: now.toISOString() } },
      'timeout',
    );
    if (Date.parse(state.deadlineAt) > now.getTime()) await this.arm(state); // fired early: re-arm
  }

  /** One step; steps of one operation never overlap in this process. */
  step(operationId: string): Promise<void> {
    const previous = this.running.get(operationId) ?? Promise.resolve();
    const next = previous.then(() => this.runStep(operationId));
    const tail = next.catch(() => undefined);
    this.running.set(operationId, tail);
    void tail.then(() => {
      if (this.running.get(operationId) === tail) this.running.delete(operationId);
    });
    return next;
  }

  private async runStep(operationId: string): Promise<void> {
    const { state } = await this.pipeline.load(operationAggregate, operationStreamId(operationId));
    if (state.status === 'absent' || isFinished(state.status)) return;
    try {
      const again = await this.advance(state);
      if (again !== null) await this.schedule(operationId, again);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error; // transient: the job retries
      await this.command(state, {
        type: 'FailOperation',
        data: { error: `${error.code}: ${error.message}`, at: new Date().toISOString() },
      });
    }
  }

  /** Does what is next; returns the delay before looking again, or null when nothing is left. */
  private async advance(op: Running): Promise<number | null> {
    if (op.poolId === null) return this.followCluster(op);
    const pool = await this.readModels.get<PoolDoc & Doc>(NODE_POOLS, op.poolId);
    if (!pool) return POLL_MS; // the pool's read model is catching up
    if (op.operationType === 'scale_node_pool') {
      const grow = (op.desiredSize ?? 0) - (op.fromSize ?? 0);
      if (grow > 0) return this.scaleOut(op, pool);
      return this.shrink(op, grow === 0 ? 0 : null, false);
    }
    if (op.operationType === 'delete_node_pool') return this.shrink(op, null, true);
    if (op.operationType === 'resize_node_pool') return this.resize(op, pool);
    await this.command(op, {
      type: 'FailOperation',
      data: { error: `${op.operationType} is not supported yet`, at: this.now() },
    });
    return null;
  }

  private async scaleOut(op: Running, pool: PoolDoc): Promise<number | null> {
    if (!(await this.started(op, 'request_nodes'))) return 0;
    if (stepOf(op, 'request_nodes')?.status === 'running') {
      await this.provisioner.createNodes({
        operationId: op.operationId,
        pool: definitionOf(pool),
        hostnames: op.addHostnames,
      });
      await this.complete(op, 'request_nodes', `${op.addHostnames.length} node(s) requested`);
      return 0;
    }
    if (!(await this.started(op, 'await_registration'))) return 0;
    const registered = await this.readModels.count(NODES, {
      poolId: op.poolId,
      hostname: { $in: [...op.addHostnames] },
    });
    if (registered < op.addHostnames.length) return POLL_MS;
    await this.complete(op, 'await_registration', `${registered} node(s) registered in the pool`);
    await this.command(op, { type: 'SucceedOperation', data: { at: this.now() } });
    return null;
  }

  /**
   * Scale-in and deletion: choose the nodes (all of them for a deletion), drain them by
   * relocation, ask the provisioner to remove them, delete each once it is offline.
   */
  private async shrink(
    op: Running,
    nothing: 0 | null,
    deletePool: boolean,
  ): Promise<number | null> {
    const poolId = op.poolId!;
    if (nothing === 0) {
      await this.started(op, 'nothing_to_do');
      await this.complete(op, 'nothing_to_do', `pool already has ${op.desiredSize} node(s)`);
      await this.command(op, { type: 'SucceedOperation', data: { at: this.now() } });
      return null;
    }
    if (op.chosen === null) {
      await this.started(op, 'choose_nodes');
      const members = await this.queries.execute(new ListPoolMembers(poolId));
      const count = deletePool ? members.length : members.length - (op.desiredSize ?? 0);
      const nodes = chooseNodesToRemove(members, count);
      await this.command(op, { type: 'ChooseOperationNodes', data: { nodes, at: this.now() } });
      await this.complete(op, 'choose_nodes', nodes.map((n) => n.hostname).join(', ') || 'none');
      return 0;
    }
    const chosen = op.chosen;
    if (stepOf(op, 'drain_nodes')?.status !== 'succeeded') {
      await this.started(op, 'drain_nodes');
      const pending = await this.drainAll(op, chosen);
      if (pending > 0) return POLL_MS;
      await this.complete(op, 'drain_nodes', `${chosen.length} node(s) drained`);
      return 0;
    }
    if (stepOf(op, 'remove_nodes')?.status !== 'succeeded') {
      await this.started(op, 'remove_nodes');
      const left = await this.removeAll(op, chosen, 'all');
      if (left > 0) return POLL_MS;
      await this.complete(op, 'remove_nodes', `${chosen.length} node(s) removed`);
      return 0;
    }
    if (deletePool) {
      await this.started(op, 'delete_pool');
      await this.commands.execute(
        new MarkPoolDeleted(
          poolId,
          { at: this.now() },
          await this.context(op, uuidFrom(op.operationId, 'pool-deleted')),
        ),
      );
      await this.complete(op, 'delete_pool', null);
    }
    await this.command(op, { type: 'SucceedOperation', data: { at: this.now() } });
    return null;
  }

  /**
   * Cluster operations follow the lifecycle: a step per working status the cluster passes
   * through (provisioning, bootstrapping, upgrading, …), success once it is running, failure
   * once it failed (unless repairing a failed cluster, which starts there).
   */
  private async followCluster(op: Running): Promise<number | null> {
    const cluster = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, op.clusterId);
    if (!cluster) return CLUSTER_POLL_MS;
    const since = Date.parse(op.requestedAt);
    const moves = cluster.history.filter((h) => Date.parse(h.at) >= since);
    const repairing = op.operationType === 'repair_cluster';
    // One step per working status passed through, from its move to the next one.
    let open: string | null = null;
    const close = async (at: string) => {
      if (open !== null) await this.completeAt(op, open, at);
      open = null;
    };
    if (repairing) {
      await this.startAt(op, 'repair', op.requestedAt);
      open = 'repair';
    }
    for (const move of moves) {
      if (move.to === 'running') {
        await close(move.at);
        await this.command(op, { type: 'SucceedOperation', data: { at: move.at } });
        return null;
      }
      if (move.to === 'failed' || (move.to === 'deleting' && !repairing)) {
        if (repairing && move.to === 'failed') continue; // a repair waits for a retry to succeed
        await this.command(op, {
          type: 'FailOperation',
          data: {
            error:
              move.to === 'failed'
                ? `cluster failed during ${move.from ?? 'an unknown step'}`
                : 'cluster is being deleted',
            at: move.at,
          },
        });
        return null;
      }
      if (repairing) continue;
      // Both idempotent: a step already started or completed stays as it is.
      await close(move.at);
      await this.startAt(op, move.to, move.at);
      open = move.to;
    }
    return CLUSTER_POLL_MS;
  }

  private async startAt(op: Running, name: string, at: string): Promise<void> {
    if (stepOf(op, name)) return;
    await this.command(op, { type: 'StartOperationStep', data: { name, at } });
  }

  private async completeAt(op: Running, name: string, at: string): Promise<void> {
    await this.command(op, { type: 'CompleteOperationStep', data: { name, detail: null, at } });
  }

  /** Drains each node by relocation (once per node); returns how many drains still run. */
  private async drainAll(
    op: Running,
    nodes: ReadonlyArray<{ nodeId: string; hostname: string }>,
  ): Promise<number> {
    let pending = 0;
    for (const node of nodes) {
      const { state } = await this.queries.execute(new GetNodeState(node.nodeId));
      if (state.status !== 'online' && state.status !== 'offline') continue; // gone already
      let drainId: string | undefined = op.drains[node.nodeId];
      if (!drainId) {
        if (state.status === 'offline' && Object.keys(state.allocations).length === 0) continue;
        // An admin moved it to another pool since it was chosen: it is that pool's now.
        if (state.poolId !== op.poolId) throw movedAway(state.hostname, 'drained');
        drainId = await this.commands.execute(
          new DrainNode(
            node.nodeId,
            'relocate',
            await this.context(op, uuidFrom(op.operationId, 'drain', node.nodeId)),
            // Decided on the node's stream too: a move landing after the check above is seen.
            op.poolId!,
          ),
        );
        await this.command(op, {
          type: 'RecordOperationDrain',
          data: { nodeId: node.nodeId, drainId, at: this.now() },
        });
      }
      const drain = await this.readModels.get<DrainDoc & Doc>(DRAINS, drainId);
      if (drain?.status !== 'completed') pending++;
    }
    return pending;
  }

  /**
   * Asks the provisioner to remove the nodes (once per process: the adapters are idempotent, so
   * a restart may ask again) and deletes each through the node command path once it is
   * offline (refused while it still holds sessions). Returns how many are still online.
   */
  private async removeAll(
    op: Running,
    nodes: ReadonlyArray<{ nodeId: string; hostname: string }>,
    key: string,
  ): Promise<number> {
    const asked = `${op.operationId}\u0000${key}`;
    if (!this.removalAsked.has(asked)) {
      await this.markForRemoval(op, nodes);
      await this.provisioner.removeNodes({
        operationId: op.operationId,
        clusterId: op.clusterId,
        poolId: op.poolId!,
        nodes,
      });
      this.removalAsked.add(asked);
    }
    let left = 0;
    for (const node of nodes) {
      const { state } = await this.queries.execute(new GetNodeState(node.nodeId));
      if (state.status === 'online') left++;
      else if (state.status === 'offline') {
        // Gone offline with sessions on it: they are being ended (node_offline) and their
        // cards released in a moment; the node is deleted once it is empty, not refused.
        if (Object.keys(state.allocations).length > 0) {
          left++;
          continue;
        }
        try {
          await this.commands.execute(
            new DeleteNode(
              node.nodeId,
              { at: this.now() },
              await this.context(op, uuidFrom(op.operationId, 'delete', node.nodeId)),
            ),
          );
        } catch (error) {
          if (!(error instanceof DomainError && error.code === 'node_busy')) throw error;
          left++; // a session landed between the read and the delete: look again
        }
      }
    }
    return left;
  }

  /**
   * Before the provisioner is asked to remove nodes, each is marked for removal on its own
   * stream. The node decides: one an admin uncordoned since its drain (queued sessions may land
   * on it again), or that holds sessions, is refused (`node_in_use`), the operation fails naming
   * it, and nothing is removed; once marked, an uncordon or a move to another pool is refused
   * (`node_being_removed`) until the operation's deadline, so nothing is placed on a node on its
   * way out and no other pool loses it. Deciding on the stream, not on a read, settles a race
   * with an uncordon or a move either way.
   */
  private async markForRemoval(
    op: Running,
    nodes: ReadonlyArray<{ nodeId: string; hostname: string }>,
  ): Promise<void> {
    for (const node of nodes) {
      await this.commands.execute(
        new RequestNodeRemoval(
          node.nodeId,
          {
            operationId: op.operationId,
            poolId: op.poolId!,
            until: op.deadlineAt,
            at: this.now(),
          },
          await this.context(op, uuidFrom(op.operationId, 'removal', node.nodeId)),
        ),
      );
    }
  }

  /**
   * Resize by rolling replacement, one node at a time: add a node of the new shape and wait
   * for it in the pool, drain the old one by relocation, remove it; then the pool's shape.
   */
  private async resize(op: Running, pool: PoolDoc): Promise<number | null> {
    const to = op.resizeTo;
    if (!to) {
      await this.command(op, {
        type: 'FailOperation',
        data: { error: 'resize without a target shape', at: this.now() },
      });
      return null;
    }
    if (op.chosen === null) {
      await this.started(op, 'choose_nodes');
      const members = await this.queries.execute(new ListPoolMembers(op.poolId!));
      const old = members.filter(
        (m) => m.capacity.cpu !== to.cpu || m.capacity.memoryGiB !== to.memoryGiB,
      );
      const nodes = chooseNodesToRemove(old, old.length).slice(0, op.addHostnames.length);
      await this.command(op, { type: 'ChooseOperationNodes', data: { nodes, at: this.now() } });
      await this.complete(op, 'choose_nodes', nodes.map((n) => n.hostname).join(', ') || 'none');
      return 0;
    }
    for (const [i, old] of op.chosen.entries()) {
      const hostname = op.addHostnames[i];
      const add = `add_node ${hostname}`;
      if (stepOf(op, add)?.status !== 'succeeded') {
        if (!(await this.started(op, add))) return 0;
        if (!this.created.has(`${op.operationId}\u0000${hostname}`)) {
          await this.provisioner.createNodes({
            operationId: op.operationId,
            pool: { ...definitionOf(pool), spec: { ...pool.spec, ...to } },
            hostnames: [hostname],
          });
          this.created.add(`${op.operationId}\u0000${hostname}`);
        }
        const registered = await this.readModels.count(NODES, { poolId: op.poolId, hostname });
        if (registered === 0) return POLL_MS;
        await this.complete(
          op,
          add,
          `${hostname} registered with ${to.cpu} vCPU / ${to.memoryGiB} GiB`,
        );
        return 0;
      }
      const drain = `drain_node ${old.hostname}`;
      if (stepOf(op, drain)?.status !== 'succeeded') {
        if (!(await this.started(op, drain))) return 0;
        if ((await this.drainAll(op, [old])) > 0) return POLL_MS;
        await this.complete(op, drain, null);
        return 0;
      }
      const remove = `remove_node ${old.hostname}`;
      if (stepOf(op, remove)?.status !== 'succeeded') {
        if (!(await this.started(op, remove))) return 0;
        if ((await this.removeAll(op, [old], old.nodeId)) > 0) return POLL_MS;
        await this.complete(op, remove, null);
        return 0;
      }
    }
    await this.started(op, 'update_spec');
    await this.commands.execute(
      new ChangePoolSpec(
        op.poolId!,
        { ...to, at: this.now() },
        await this.context(op, uuidFrom(op.operationId, 'spec')),
      ),
    );
    await this.complete(op, 'update_spec', `${to.cpu} vCPU / ${to.memoryGiB} GiB`);
    await this.command(op, { type: 'SucceedOperation', data: { at: this.now() } });
    return null;
  }

  private async started(op: Running, name: string): Promise<boolean> {
    if (stepOf(op, name)) return true;
    await this.command(op, { type: 'StartOperationStep', data: { name, at: this.now() } });
    return false;
  }

  private async complete(op: Running, name: string, detail: string | null): Promise<void> {
    await this.command(op, {
      type: 'CompleteOperationStep',
      data: { name, detail, at: this.now() },
    });
  }

  private async command(op: Running, command: OperationCommand, key?: string): Promise<void> {
    await this.pipeline.handle(
      operationAggregate,
      operationStreamId(op.operationId),
      command,
      await this.context(
        op,
        key
          ? uuidFrom(op.operationId, key)
          : uuidFrom(op.operationId, command.type, JSON.stringify(command.data)),
      ),
    );
  }

  /**
   * Re-arms each unfinished operation whose deadline job is gone (a Redis that lost its jobs
   * while we ran: step and deadline went together); runs every JOBS_REPAIR_SEC. A step armed
   * twice is harmless: every step re-reads state.
   */
  async repair(): Promise<number> {
    const open = await findAll<OperationDoc & Doc>(this.readModels, OPERATIONS, OPEN);
    if (open.length === 0) return 0;
    const live = await this.jobs.liveJobIds(OPERATION_DEADLINE_QUEUE);
    const lost = open.filter((op) => !live.has(op.operationId));
    for (const op of lost) await this.arm(op);
    if (lost.length > 0) this.logger.log(`re-armed ${lost.length} operation(s) from state`);
    return lost.length;
  }

  /** Re-arms every unfinished operation (after a restart or a lost Redis); frees orphaned pool locks. */
  async reconcile(): Promise<void> {
    const open = await findAll<OperationDoc & Doc>(this.readModels, OPERATIONS, OPEN);
    for (const op of open) await this.arm(op);
    const locked = await findAll<PoolDoc & Doc>(this.readModels, NODE_POOLS, {
      operation: { $ne: null },
    });
    for (const pool of locked) {
      const operationId = pool.operation!.operationId;
      const { state } = await this.pipeline.load(
        operationAggregate,
        operationStreamId(operationId),
      );
      // A crash between locking the pool and opening the operation: nothing runs, so unlock.
      if (state.status !== 'absent') continue;
      await this.commands.execute(
        new EndPoolOperation(
          pool.poolId,
          { operationId, at: this.now() },
          systemContext(uuidFrom(operationId, 'orphaned'), { correlationId: operationId }),
        ),
      );
    }
    if (open.length) this.logger.log(`re-armed ${open.length} operation(s)`);
  }

  private now(): string {
    return new Date().toISOString();
  }

  /**
   * What the operation does is done in its request's correlation (API-ADDITIONS: everything one
   * request set off shares it), so an auditor following the admin's request finds the drains,
   * relocations and removals it caused. The id is its first event's; an operation whose
   * stream cannot be read (none in practice) falls back to its own id.
   */
  private async context(op: Running, commandId: string): Promise<CommandContext> {
    let correlationId = this.correlations.get(op.operationId);
    if (correlationId === undefined) {
      const [first] = await this.store.readStream(operationStreamId(op.operationId), {
        limit: 1,
      });
      correlationId = first?.metadata.correlationId ?? op.operationId;
      if (this.correlations.size >= 10_000) this.correlations.clear();
      this.correlations.set(op.operationId, correlationId);
    }
    return systemContext(commandId, { correlationId });
  }
}
