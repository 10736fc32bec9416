import { Logger } from '@nestjs/common';
import type { CommandBus, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { DelayedJobs } from '@fleet/jobs/port';
import { Clock, Workflow, systemContext } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { GetClusterLiveness, MarkClusterReportsStalled } from '../../clusters';
import { HeartbeatStore } from '../heartbeat/heartbeat.store';
import { nodeAggregate } from '../node.aggregate';
import { nodeStreamId } from '../node.events';
import { NODES, NodeDoc } from '../nodes.projection';
import { ClusterReports } from './cluster-reports';
import { GuardConfig, weighCluster } from './cluster-guard';
import {
  LivenessInput,
  LivenessOutput,
  LivenessState,
  SilenceFacts,
  TimeoutCause,
  lastSeen,
  silentSince,
  weighNodeSilence,
} from './liveness.workflow';

export const OFFLINE_TIMEOUT_QUEUE = 'node-offline-timeout';

/** Arms and cancels started by the reactor and not finished yet, at most (across nodes). */
const MAX_TIMER_OPS = 256;
/** Missing timeouts the repair re-creates at once. */
const RECONCILE_SLICE = 500;

/** Whether the mass-failure guard holds a due node of a cluster instead of taking it offline. */
type Holds = (nodeId: string) => boolean;
/** One run of the liveness workflow for a node (the saga's runner). */
type Run = (nodeId: string, input: LivenessInput) => Promise<unknown>;

type Firing = {
  readonly nodeId: string;
  readonly cause: TimeoutCause | null;
  resolve(): void;
  reject(error: unknown): void;
};

/**
 * The liveness workflow's memory of each node, in this process: only nodes whose heartbeat
 * the store lost are kept (see LivenessState).
 */
export class LivenessMemory {
  private readonly states = new Map<string, LivenessState>();

  constructor(private readonly workflow: Workflow<LivenessInput, LivenessOutput, LivenessState>) {}

  get(nodeId: string): LivenessState {
    return this.states.get(nodeId) ?? this.workflow.initialState();
  }

  /** The state before `input`, for deciding on it; what it has seen is kept for the next. */
  see(nodeId: string, input: LivenessInput): LivenessState {
    const before = this.get(nodeId);
    const after = this.workflow.evolve(before, input);
    if (after.heartbeatLostAt === null) this.states.delete(nodeId);
    else this.states.set(nodeId, after);
    return before;
  }
}

/**
 * The reactor's timer operations are started, not awaited: one round trip after another, a
 * burst of registrations would be armed seconds after its nodes' deadlines. One node's run in
 * order; at most MAX_TIMER_OPS are in flight. One that fails is logged and left to the repair,
 * which re-creates any missing timeout from state (jobs are hints).
 */
export class TimerOps {
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(private readonly logger: Logger) {}

  /** Starts `op` after the node's previous one; waits only while too many are in flight. */
  async start(nodeId: string, op: () => Promise<unknown>): Promise<void> {
    while (this.inFlight.size >= MAX_TIMER_OPS) await Promise.race(this.inFlight.values());
    const previous = this.inFlight.get(nodeId) ?? Promise.resolve();
    const run = previous.then(op).then(
      () => undefined,
      (error: unknown) => {
        this.logger.warn(
          `offline timeout of ${nodeId} not updated (the reconciler will): ${error instanceof Error ? error.message : String(error)}`,
        );
      },
    );
    this.inFlight.set(nodeId, run);
    void run.then(() => {
      if (this.inFlight.get(nodeId) === run) this.inFlight.delete(nodeId);
    });
  }

  /** Before the job queue closes: an arm cut short is left to the repair of the next start. */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.inFlight.values()]);
  }
}

export type OfflineTimersDeps = {
  readonly pipeline: CommandPipeline;
  /** The cluster's liveness is the clusters slice's: asked of it on its buses. */
  readonly commands: CommandBus;
  readonly queries: QueryBus;
  readonly readModels: ReadModelStore;
  readonly jobs: DelayedJobs;
  readonly heartbeats: HeartbeatStore;
  readonly clock: Clock;
  readonly guard: GuardConfig;
  readonly memory: LivenessMemory;
  readonly reports: ClusterReports;
  readonly logger: Logger;
  readonly run: Run;
};

/**
 * Reads in bulk what the liveness workflow decides on: timeouts that fire together (a burst of
 * nodes falling silent) share one heartbeat read, the guard's verdict once per cluster (cached
 * briefly), and their offline commands go out together, so they share one group commit.
 */
export class OfflineTimers {
  /** Timeouts that fired since the last batch started. */
  private firing: Firing[] = [];
  private readonly verdicts = new Map<string, { at: number; holds: Holds }>();
  private reconciling = false;

  constructor(private readonly deps: OfflineTimersDeps) {}

  /**
   * A timeout fired. Each job's promise settles with its own node's outcome, so a failure
   * retries only that job.
   */
  fire(nodeId: string, cause: TimeoutCause | null): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.firing.push({ nodeId, cause, resolve, reject });
      // setImmediate: the handlers BullMQ starts within this turn join the batch.
      if (this.firing.length === 1) setImmediate(() => void this.fireBatch());
    });
  }

  /** The guard's verdict on a cluster is stale: its stall ended, or an admin confirmed it. */
  forget(clusterId: string): void {
    this.verdicts.delete(clusterId);
  }

  private async fireBatch(): Promise<void> {
    const batch = this.firing;
    this.firing = [];
    const causes = new Map(batch.flatMap((f) => (f.cause ? [[f.nodeId, f.cause] as const] : [])));
    const now = this.deps.clock.now().getTime();
    const outcomes = new Map<string, Promise<unknown>>();
    try {
      const ids = [...new Set(batch.map((f) => f.nodeId))];
      for (const nodeId of ids) outcomes.set(nodeId, Promise.resolve());
      const guarded = new Map<string, Promise<Holds>>();
      for (const facts of await this.silences(ids, now)) {
        const { nodeId } = facts;
        const silence = weighNodeSilence(
          facts,
          this.deps.memory.get(nodeId),
          this.deps.guard.staleMs,
        );
        const clusterId = facts.node!.clusterId;
        // The guard is asked only for a node due, and never for one a pool operation removes.
        const asks = silence.kind === 'due' && !silence.removing;
        if (asks && !guarded.has(clusterId)) guarded.set(clusterId, this.verdict(clusterId, now));
        const verdict = asks ? guarded.get(clusterId)!.then((holds) => holds(nodeId)) : false;
        const cause = causes.get(nodeId) ?? null;
        outcomes.set(
          nodeId,
          Promise.resolve(verdict).then((held) =>
            this.deps.run(nodeId, { type: 'OfflineTimeoutFired', data: { ...facts, held, cause } }),
          ),
        );
      }
    } catch (error) {
      for (const outcome of outcomes.values()) outcome.catch(() => undefined);
      for (const f of batch) f.reject(error);
      return;
    }
    for (const f of batch) outcomes.get(f.nodeId)!.then(() => f.resolve(), f.reject);
  }

  /** What the timers of `ids` read: their online nodes, heartbeats and clusters, in bulk. */
  private async silences(ids: readonly string[], now: number): Promise<SilenceFacts[]> {
    const { pipeline, queries, heartbeats } = this.deps;
    const nodes = await Promise.all(
      ids.map((id) => pipeline.load(nodeAggregate, nodeStreamId(id))),
    );
    const online = ids.flatMap((nodeId, i) => {
      const { state } = nodes[i];
      if (state.status !== 'online') return [];
      const { clusterId, changedAt } = state;
      return [{ nodeId, node: { clusterId, changedAt, removal: state.removal ?? null } }];
    });
    const beats = await heartbeats.get(online.map((n) => n.nodeId));
    const clusterIds = [...new Set(online.map((n) => n.node.clusterId))];
    const clusters = new Map(
      await Promise.all(
        clusterIds.map(
          async (id) => [id, await queries.execute(new GetClusterLiveness(id))] as const,
        ),
      ),
    );
    const restoredAt = heartbeats.restoredAt();
    return online.map(({ nodeId, node }, i) => {
      const cluster = clusters.get(node.clusterId)!.state;
      return {
        nodeId,
        node,
        heartbeatSeenAt: beats[i]?.seenAt ?? null,
        clusterResumedAt: cluster.status === 'reporting' ? cluster.resumedAt : null,
        heartbeatsRestoredAt: restoredAt,
        at: now,
      };
    });
  }

  /**
   * The mass-failure guard's verdict on a cluster (cached briefly: many timeouts fire
   * together), marking its stall when its nodes fell silent together.
   */
  private async verdict(clusterId: string, now: number): Promise<Holds> {
    const { commands, queries, heartbeats, memory, guard } = this.deps;
    const cached = this.verdicts.get(clusterId);
    if (cached && now - cached.at < Math.min(1000, guard.staleMs / 4)) return cached.holds;
    const online = await this.onlineNodes({ clusterId });
    const beats = await heartbeats.get(online.map((n) => n.nodeId));
    const cluster = await queries.execute(new GetClusterLiveness(clusterId));
    const resumedAt = cluster.state.status === 'reporting' ? cluster.state.resumedAt : null;
    const restoredAt = heartbeats.restoredAt();
    const weighed = online.map((n, i) => {
      const seenAt = beats[i]?.seenAt ?? null;
      const read: LivenessInput = {
        type: 'HeartbeatRead',
        data: { nodeId: n.nodeId, seenAt, at: now },
      };
      const seen = lastSeen(memory.see(n.nodeId, read), seenAt, n.changedAt, now);
      return {
        nodeId: n.nodeId,
        hostname: n.hostname,
        seenAt: seen.at,
        lastSeenAt: seen.proof,
        silentSince: silentSince(seen.at, resumedAt, restoredAt),
        removal: n.removal ?? null,
      };
    });
    const verdict = weighCluster(clusterId, weighed, cluster, now, guard);
    if (verdict.stall) {
      const { command, commandId } = verdict.stall;
      await commands.execute(
        new MarkClusterReportsStalled(
          command.data,
          systemContext(commandId, { now: new Date(now) }),
        ),
      );
      this.deps.reports.stallMarked(clusterId);
      this.deps.logger.warn(
        `cluster ${clusterId}: ${verdict.staleNodes} of ${verdict.judgedNodes} online nodes stopped reporting together; holding them`,
      );
    }
    this.verdicts.set(clusterId, { at: now, holds: verdict.holds });
    return verdict.holds;
  }

  onlineNodes(filter: Record<string, unknown>): Promise<NodeDoc[]> {
    return findAll<NodeDoc & Doc>(this.deps.readModels, NODES, { ...filter, online: true });
  }

  /**
   * Finds online nodes without a timer (after a restart or a lost Redis) and hands each to
   * `lost` with what its aggregate says; counts those it re-armed. `periodMs`: the repair's.
   */
  async reconcile(
    periodMs: number,
    lost: (nodeId: string, online: boolean, now: number) => Promise<readonly unknown[]>,
  ): Promise<number> {
    if (this.reconciling) return 0;
    this.reconciling = true;
    const { jobs, readModels, pipeline, guard, logger } = this.deps;
    try {
      const counts = await jobs.counts(OFFLINE_TIMEOUT_QUEUE);
      // Cheap check first: nothing is missing when every online node has its job (a running
      // one counts: its handler re-arms or takes the node offline). The count comes off an
      // index; reading every online node (100,000 of them: seconds of CPU) waits for a miss.
      const onlineCount = await readModels.count(NODES, { online: true });
      if (counts.delayed + counts.waiting + counts.running >= onlineCount) return 0;
      const online = await this.onlineNodes({});
      const live = await jobs.liveJobIds(OFFLINE_TIMEOUT_QUEUE);
      // A node that came online within the last window and period is the reactor's to arm
      // (it may lag behind a burst of registrations); one missing longer is re-armed.
      const now = this.deps.clock.now().getTime();
      const recent = now - guard.staleMs - periodMs;
      const candidates = online.filter(
        (node) => !live.has(node.nodeId) && Date.parse(node.changedAt) <= recent,
      );
      let rearmed = 0;
      // In slices: after a lost Redis, every online node of the fleet is missing.
      for (let i = 0; i < candidates.length; i += RECONCILE_SLICE) {
        await Promise.all(
          candidates.slice(i, i + RECONCILE_SLICE).map(async ({ nodeId }) => {
            // The read model lags the log: a node just taken offline (its job gone) may still
            // be listed online there, so the aggregate (cached) decides.
            const { state } = await pipeline.load(nodeAggregate, nodeStreamId(nodeId));
            if ((await lost(nodeId, state.status === 'online', now)).length > 0) rearmed++;
          }),
        );
      }
      if (rearmed > 0) logger.log(`re-armed ${rearmed} offline timeout(s) from state`);
      return rearmed;
    } catch (error) {
      logger.warn(`reconcile failed: ${error instanceof Error ? error.message : String(error)}`);
      return 0;
    } finally {
      this.reconciling = false;
    }
  }
}
