import { Inject, Injectable } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { CommandContext, DomainError, UnavailableError } from '@fleet/kernel';
import { GetClusterLiveness, GetClusterState, takesPlacements } from '../clusters';
import { Config } from '../config/config';
import {
  AllocateOnNode,
  Allocation,
  HEARTBEATS,
  HeartbeatStore,
  NodeDoc,
  ReleaseNodeCapacity,
} from '../nodes';
import { CONFIG } from '../platform/runtime/tokens';
import { NodeFit, freeFor } from './placement';
import { PlacementIndex } from './placement-index';
import { POOL_ACCESS, PoolAccess } from './pool-access';
import { sessionAggregate } from './session.decider';
import { Placement, SessionState, sessionStreamId } from './session.events';
import { stepCommandId } from './step-ids';

/** Candidates looked at per placement: enough to skip the few a race or a pool rule removes. */
const CANDIDATES = 50;

/** Refusals of the allocating stream that mean "try the next node", not "fail". */
const NEXT_NODE = new Set(['insufficient_capacity', 'node_unavailable', 'not_found']);

export type QueuedSession = Extract<SessionState, { status: 'queued' }>;

/**
 * Placement spans two streams, so it is a process: (1) allocate on the node stream, where
 * optimistic concurrency makes a card go to one session only; (2) start the session on its
 * own stream; if (2) is refused (terminated meanwhile), (3) release on the node. A crash
 * between steps is finished or compensated by the placement reactor from the events.
 */
@Injectable()
export class PlacementService {
  /** Cards (or vCPUs) being allocated per node by placements in flight in this process: a hint. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(PlacementIndex) private readonly index: PlacementIndex,
    @Inject(POOL_ACCESS) private readonly pools: PoolAccess,
    @Inject(HEARTBEATS) private readonly heartbeats: HeartbeatStore,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  /** Placements in flight in this process, by session: one at a time per session. */
  private readonly placing = new Map<string, Promise<SessionState>>();

  /**
   * Tries to place a queued session now; returns its state afterwards (running, or still
   * queued). A second try for a session whose placement is in flight here (the queue pass
   * seeing a session its create request is placing) waits for it and then finds it placed,
   * instead of allocating cards on a second node only to release them again.
   */
  tryPlace(sessionId: string, ctx: CommandContext, known?: SessionState): Promise<SessionState> {
    const prior = this.placing.get(sessionId);
    const run = prior
      ? prior.then(
          () => this.placeOnce(sessionId, ctx),
          () => this.placeOnce(sessionId, ctx),
        )
      : this.placeOnce(sessionId, ctx, known);
    this.placing.set(sessionId, run);
    const done = () => {
      if (this.placing.get(sessionId) === run) this.placing.delete(sessionId);
    };
    run.then(done, done);
    return run;
  }

  /** The placement of the session in flight in this process, if any (settles with its state). */
  pending(sessionId: string): Promise<SessionState> | undefined {
    return this.placing.get(sessionId);
  }

  /** `known`: the session's state as a command on its stream just left it (spares a load). */
  private async placeOnce(
    sessionId: string,
    ctx: CommandContext,
    known?: SessionState,
  ): Promise<SessionState> {
    const state =
      known ?? (await this.pipeline.load(sessionAggregate, sessionStreamId(sessionId))).state;
    if (state.status !== 'queued') return state;
    const need = state.demand.kind === 'gpu' ? state.demand.gpuCount : state.demand.cpu;
    const candidates = await this.candidates(state);
    // Concurrent placements would all pick the same best-fit node and queue on its stream;
    // nodes whose free capacity is already claimed by placements in flight here go last.
    const claimed = (n: NodeFit) => this.inFlight.get(n.nodeId) ?? 0;
    const free = (n: NodeFit) => freeFor(n, state.demand);
    const ordered = [
      ...candidates.filter((n) => free(n) - claimed(n) >= need),
      ...candidates.filter((n) => free(n) - claimed(n) < need),
    ];
    for (const node of ordered) {
      this.inFlight.set(node.nodeId, claimed(node) + need);
      try {
        // Asked of the node about to be tried only (usually the first): one small read, made
        // once the node is claimed, so concurrent placements still spread over the fleet.
        const heard = await this.heard(node.nodeId);
        // The heartbeat store is out of reach: no node can be shown alive, so the session
        // waits in the queue, at once (asking each candidate in turn kept a create waiting
        // for every one of them). A create is still answered, 201 queued: it was recorded,
        // and a 503 would invite a retry that makes a second session.
        if (heard === 'unknown') return state;
        if (heard === 'silent') continue;
        const allocation = await this.allocate(node.nodeId, state, ctx);
        if (!allocation) continue;
        return await this.start(state, node, allocation, ctx);
      } finally {
        const left = claimed(node) - need;
        if (left > 0) this.inFlight.set(node.nodeId, left);
        else this.inFlight.delete(node.nodeId);
      }
    }
    return state;
  }

  /** Nodes that could take the session, best fit first. */
  async candidates(session: QueuedSession): Promise<NodeFit[]> {
    if (!(await this.pools.mayUse(session.owner, session.poolId))) return [];
    // A few of the best are plenty (the node stream re-checks).
    const ranked = await this.index.bestFit(session.demand, session.poolId, CANDIDATES);
    const held = await this.heldByClusters(ranked);
    const open: NodeFit[] = [];
    for (const n of ranked) {
      if (held.has(n.nodeId)) continue;
      if (n.poolId === null || (await this.pools.mayUse(session.owner, n.poolId))) open.push(n);
    }
    return open;
  }

  /**
   * Nodes silent for half a stale window or more take no new sessions, stall or not (as the
   * mass-failure guard counts them, and as Kubernetes taints an unreachable node): after a
   * stall ends, a node still silent stays online until its restarted clock runs out, and a
   * session placed there meanwhile was terminated with it. A node with no heartbeat at all
   * (the store lost after a restart) is given the benefit of the doubt, as its timer is.
   */
  private async heard(nodeId: string): Promise<'recently' | 'silent' | 'unknown'> {
    let beat;
    try {
      [beat] = await this.heartbeats.get([nodeId]);
    } catch (error) {
      if (error instanceof UnavailableError) return 'unknown';
      throw error;
    }
    const silent =
      beat !== null && beat.seenAt < Date.now() - (this.config.nodeStaleSec * 1000) / 2;
    return silent ? 'silent' : 'recently';
  }

  /**
   * Nodes their clusters keep from new sessions: every node of a cluster that is not running,
   * upgrading or degraded (requested, failed, deleting, ...), and while the mass-failure guard
   * holds a cluster's silent nodes, those. Asked once per cluster among the candidates, both
   * questions at once (each a cached fold of the cluster's stream), never per node.
   */
  private async heldByClusters(nodes: readonly NodeFit[]): Promise<Set<string>> {
    const held = new Set<string>();
    const closed = new Set<string>();
    const clusters = [...new Set(nodes.map((n) => n.clusterId))];
    await Promise.all(
      clusters.map(async (clusterId) => {
        const [liveness, lifecycle] = await Promise.all([
          this.queries.execute(new GetClusterLiveness(clusterId)),
          this.queries.execute(new GetClusterState(clusterId)),
        ]);
        if (!takesPlacements(lifecycle.state)) closed.add(clusterId);
        else if (liveness.state.status === 'stalled')
          liveness.state.held.forEach((id) => held.add(id));
      }),
    );
    if (closed.size > 0) for (const n of nodes) if (closed.has(n.clusterId)) held.add(n.nodeId);
    return held;
  }

  private async allocate(
    nodeId: string,
    session: QueuedSession,
    ctx: CommandContext,
  ): Promise<Allocation | null> {
    try {
      const result = await this.commands.execute(
        new AllocateOnNode(
          nodeId,
          {
            sessionId: session.sessionId,
            owner: session.owner,
            demand: session.demand,
            at: ctx.now.toISOString(),
          },
          {
            ...ctx,
            commandId: stepCommandId(
              ctx.commandId,
              'allocate',
              nodeId,
              session.sessionId,
              session.queuedAt,
            ),
          },
        ),
      );
      const node = result.state;
      return node.status === 'online' || node.status === 'offline'
        ? (node.allocations[session.sessionId] ?? null)
        : null;
    } catch (error) {
      if (error instanceof DomainError && NEXT_NODE.has(error.code)) return null;
      throw error;
    }
  }

  placementOf(
    node: Pick<NodeDoc, 'nodeId' | 'hostname'>,
    allocation: Allocation,
    session: QueuedSession,
  ): Placement {
    const card = this.config.rateCard;
    const gpu = session.demand.kind === 'gpu';
    return {
      nodeId: node.nodeId,
      hostname: node.hostname,
      gpus: [...allocation.gpus],
      cpu: allocation.cpu,
      memoryGiB: allocation.memoryGiB,
      units: gpu ? allocation.gpus.length : allocation.cpu,
      gpuModel: session.demand.kind === 'gpu' ? session.demand.gpuModel : null,
      // The rate card in force when the segment opens prices all of it.
      unitPricePerHour:
        session.demand.kind === 'gpu'
          ? card.gpuPerHour[session.demand.gpuModel]
          : card.cpuPerVcpuHour,
      currency: card.currency,
    };
  }

  /** Step 2, and step 3 when step 2 is refused. Also used by the reactor to finish a crashed placement. */
  async start(
    session: QueuedSession,
    node: Pick<NodeDoc, 'nodeId' | 'hostname'>,
    allocation: Allocation,
    ctx: CommandContext,
  ): Promise<SessionState> {
    try {
      const placed = await this.pipeline.handle(
        sessionAggregate,
        sessionStreamId(session.sessionId),
        {
          type: 'PlaceSession',
          data: {
            placement: this.placementOf(node, allocation, session),
            at: ctx.now.toISOString(),
          },
        },
        {
          ...ctx,
          commandId: stepCommandId(ctx.commandId, 'place', session.sessionId, node.nodeId),
        },
      );
      return placed.state;
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'invalid_transition') throw error;
      await this.release(node.nodeId, session.sessionId, ctx);
      return (await this.pipeline.load(sessionAggregate, sessionStreamId(session.sessionId))).state;
    }
  }

  async release(nodeId: string, sessionId: string, ctx: CommandContext): Promise<void> {
    await this.commands.execute(
      new ReleaseNodeCapacity(
        nodeId,
        { sessionId, at: ctx.now.toISOString() },
        { ...ctx, commandId: stepCommandId(ctx.commandId, 'release', nodeId, sessionId) },
      ),
    );
  }
}
