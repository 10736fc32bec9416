import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CommandPipeline } from '../../../../libs/cqrs/src';
import { StoredEvent } from '../../../../libs/eventstore/src/port';
import { DelayedJobs, scheduleUnlessBusy } from '../../../../libs/jobs/src/port';
import { CommandContext, systemContext, uuidFrom } from '../../../../libs/kernel/src';
import { Doc, ReadModelStore, findAll } from '../../../../libs/readmodels/src/port';
import {
  GetClusterLiveness,
  MarkClusterReportsStalled,
  ResumeClusterReports,
  clusterLivenessCodec,
  isMassFailure,
  weighSilence,
} from '../clusters';
import { Config } from '../config/config';
import { Runtime } from '../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CONFIG, DELAYED_JOBS, READ_MODELS } from '../platform/runtime/tokens';
import { HEARTBEATS } from './heartbeat/heartbeat.module';
import { Heartbeat, HeartbeatStore } from './heartbeat/heartbeat.store';
import { nodeAggregate } from './node.aggregate';
import { isBeingRemoved, nodeCodec, nodeStreamId } from './node.events';
import { NODES, NodeDoc } from './nodes.projection';

export const OFFLINE_TIMEOUT_QUEUE = 'node-offline-timeout';

/**
 * A node's offline timer. `cause`: set when an admin's outage confirmation fired it at once,
 * so the offline it leads to joins that request's correlation, caused by its event.
 */
type TimeoutJob = {
  nodeId: string;
  cause?: { eventId: string; correlationId: string };
};

/** Arms and cancels started by the reactor and not finished yet, at most (across nodes). */
const MAX_QUEUE_OPS = 256;
/**
 * Offline timeouts handled at once; those that fire together form a batch sharing one
 * heartbeat read and one commit. Not more: a BullMQ worker fetches jobs one round trip after
 * another until this many are held, and only then starts handling them.
 */
const FIRE_CONCURRENCY = 100;
/** BullMQ workers sharing FIRE_CONCURRENCY: each fills its 25 slots before it starts handling. */
const FIRE_FETCHERS = 4;
/** Missing timeouts the reconciler re-creates at once. */
const RECONCILE_SLICE = 500;
/**
 * How long a cluster found not stalled is taken as still not stalled by the reports that
 * follow, which then skip its liveness stream (read by every report of a fleet before). A stall
 * this process marks ends that at once; one another replica marks is seen within this time.
 */
export const REPORTING_TRUST_MS = 1000;
/** Clusters remembered as reporting, at most (an admin may report for any cluster id). */
const REPORTING_CAPACITY = 10_000;

type Firing = {
  readonly nodeId: string;
  readonly cause?: TimeoutJob['cause'];
  resolve(): void;
  reject(error: unknown): void;
};

/**
 * The offline-timeout saga. One delayed job per online node at lastSeenAt + nodeStaleSec;
 * reports never touch the queue. When the job fires it re-reads lastSeenAt: reported since →
 * re-arm; silent → TimeOutNodeHeartbeat, unless the mass-failure guard holds for its cluster.
 * Jobs firing together are decided in one batch (see `fire`). Jobs are hints: a reconciler
 * re-creates missing ones from the read model.
 */

/** Whether the mass-failure guard holds a due node of a cluster instead of taking it offline. */
type Holds = (nodeId: string) => boolean;
@Injectable()
export class LivenessService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('liveness');
  private readonly staleMs: number;
  /** When a node was first found without a heartbeat (store restarted or flushed): its grace starts then. */
  private readonly missingSince = new Map<string, number>();
  private readonly clusterVerdicts = new Map<string, { at: number; holds: Holds }>();
  /** Clusters found not stalled, and when (`performance.now()`): see REPORTING_TRUST_MS. */
  private readonly reportingSince = new Map<string, number>();
  /** Stalls this process has marked: a cluster read as reporting before one is not remembered. */
  private stallsMarked = 0;
  private reconciling = false;
  /** The reactor's queue operations in flight, the last one per node: one node's stay in order. */
  private readonly queueOps = new Map<string, Promise<void>>();
  /** Timeouts that fired since the last batch started. */
  private firing: Firing[] = [];

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(HEARTBEATS) private readonly heartbeats: HeartbeatStore,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {
    this.staleMs = config.nodeStaleSec * 1000;
  }

  onModuleInit(): void {
    this.jobs.register<TimeoutJob>(
      OFFLINE_TIMEOUT_QUEUE,
      (job) => this.fire(job.nodeId, job.cause),
      {
        attempts: 20,
        backoffMs: 200,
        concurrency: FIRE_CONCURRENCY,
        fetchers: FIRE_FETCHERS,
      },
    );
    this.registry.addReactor({ name: 'node-liveness', react: (e) => this.react(e) });
    this.runtime.afterStart(async () => void (await this.reconcile()));
    // Once a period across the processes sharing Redis, not in each of them.
    this.runtime.every(
      'liveness-reconcile',
      this.reconcilePeriod(),
      async () => void (await this.reconcile()),
    );
  }

  async onModuleDestroy(): Promise<void> {
    // Before the job queue closes: an arm cut short is left to the reconciler of the next start.
    await Promise.allSettled([...this.queueOps.values()]);
  }

  /**
   * Arms the timer when a node starts being online; disarms it when it stops. The queue
   * operation is started, not awaited: one round trip after another, a burst of registrations
   * would be armed seconds after its nodes' deadlines. One node's operations run in order,
   * and at most MAX_QUEUE_OPS are in flight. One that fails is logged and left to the
   * reconciler, which re-creates any missing timeout from state (jobs are hints).
   */
  private async react(stored: StoredEvent): Promise<void> {
    if (stored.streamId.startsWith('cluster-')) return this.reactToCluster(stored);
    if (!stored.streamId.startsWith('node-')) return;
    const event = nodeCodec.decode(stored.type, stored.data);
    if (!event) return;
    const nodeId = stored.streamId.slice('node-'.length);
    switch (event.type) {
      case 'NodeRegistered':
        if (!event.data.kubeletReady) return;
        return this.queueOp(nodeId, () => this.arm(nodeId, Date.parse(event.data.registeredAt)));
      case 'NodeCameOnline':
        return this.queueOp(nodeId, () => this.arm(nodeId, Date.parse(event.data.at)));
      case 'NodeWentOffline':
        this.missingSince.delete(nodeId);
        // Timed out: the job that did it is running and ends by itself (it cannot be removed
        // while running). Any other leftover finds the node offline and does nothing.
        if (event.data.reason === 'heartbeat_timeout') return;
        return this.queueOp(nodeId, () => this.jobs.cancel(OFFLINE_TIMEOUT_QUEUE, nodeId));
      case 'NodeDeleted':
        this.missingSince.delete(nodeId);
        return this.queueOp(nodeId, () => this.jobs.cancel(OFFLINE_TIMEOUT_QUEUE, nodeId));
      default:
        return;
    }
  }

  /**
   * An admin confirmed an outage of the nodes the guard held: every online node of the
   * cluster is checked now, so the silent ones go offline without waiting out another window
   * (the held ones were re-armed a window ahead); the others are simply re-armed.
   */
  private async reactToCluster(stored: StoredEvent): Promise<void> {
    const event = clusterLivenessCodec.decode(stored.type, stored.data);
    if (event?.type !== 'ClusterOutageConfirmed') return;
    const { clusterId } = event.data;
    this.clusterVerdicts.delete(clusterId);
    const now = Date.now();
    for (const { nodeId } of await this.onlineNodes({ clusterId })) {
      await this.queueOp(nodeId, async () => {
        await scheduleUnlessBusy<TimeoutJob>(this.jobs, OFFLINE_TIMEOUT_QUEUE, nodeId, now, {
          nodeId,
          cause: { eventId: stored.eventId, correlationId: stored.metadata.correlationId },
        });
      });
    }
  }

  /** Starts `op` after the node's previous one; waits only while too many are in flight. */
  private async queueOp(nodeId: string, op: () => Promise<void>): Promise<void> {
    while (this.queueOps.size >= MAX_QUEUE_OPS) await Promise.race(this.queueOps.values());
    const previous = this.queueOps.get(nodeId) ?? Promise.resolve();
    const run = previous.then(op).catch((error: unknown) => {
      this.logger.warn(
        `offline timeout of ${nodeId} not updated (the reconciler will): ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    this.queueOps.set(nodeId, run);
    void run.then(() => {
      if (this.queueOps.get(nodeId) === run) this.queueOps.delete(nodeId);
    });
  }

  private arm(nodeId: string, seenAt: number): Promise<void> {
    return this.jobs.schedule<TimeoutJob>(OFFLINE_TIMEOUT_QUEUE, nodeId, seenAt + this.staleMs, {
      nodeId,
    });
  }

  /**
   * When the node was last seen. `at`: its heartbeat, or, when the heartbeat store lost it (an
   * embedded store after a restart, or Redis flushed with this process restarted too), the
   * moment the loss was first noticed (never before the node's last change): a full window
   * from there. `proof`: the last sighting on record, where an offline ends its sessions'
   * bills; without a heartbeat only the node's last change is, so no unproven time is billed.
   */
  private lastSeen(
    nodeId: string,
    beat: Heartbeat | null,
    changedAt: string,
    now: number,
  ): { at: number; proof: number } {
    if (beat?.seenAt !== undefined) {
      this.missingSince.delete(nodeId);
      return { at: beat.seenAt, proof: beat.seenAt };
    }
    const since = this.missingSince.get(nodeId) ?? now;
    this.missingSince.set(nodeId, since);
    const changed = Date.parse(changedAt);
    return { at: Math.max(since, changed), proof: changed };
  }

  /**
   * The time a node's silence is counted from: its last sighting, or the end of its cluster's
   * stall if later (every clock restarts then, so no stampede of offlines follows), or the
   * heartbeat store's return after an outage (reports could not be recorded meanwhile).
   * Timing only: the offline records the real last sighting, where its sessions' bills end.
   */
  private reference(lastSeen: number, resumedAt: string | null): number {
    return Math.max(lastSeen, resumedAt ? Date.parse(resumedAt) : 0, this.heartbeats.restoredAt());
  }

  /**
   * A timeout fired. Timeouts firing together (a burst of nodes falling silent) are handled as
   * one batch: one heartbeat read for all of them, the guard once per cluster, and their
   * offline commands issued together so they share one group commit. Each job's promise
   * settles with its own node's outcome, so a failure retries only that job.
   */
  fire(nodeId: string, cause?: TimeoutJob['cause']): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.firing.push({ nodeId, cause, resolve, reject });
      // setImmediate: the handlers BullMQ starts within this turn join the batch.
      if (this.firing.length === 1) setImmediate(() => void this.fireBatch());
    });
  }

  private async fireBatch(): Promise<void> {
    const batch = this.firing;
    this.firing = [];
    const causes = new Map(batch.flatMap((f) => (f.cause ? [[f.nodeId, f.cause] as const] : [])));
    const now = Date.now();
    const outcomes = new Map<string, Promise<void>>();
    try {
      for (const nodeId of new Set(batch.map((f) => f.nodeId))) {
        outcomes.set(nodeId, Promise.resolve());
      }
      const ids = [...outcomes.keys()];
      const nodes = await Promise.all(
        ids.map((id) => this.pipeline.load(nodeAggregate, nodeStreamId(id))),
      );
      const online: Array<{
        nodeId: string;
        clusterId: string;
        changedAt: string;
        removing: boolean;
      }> = [];
      ids.forEach((nodeId, i) => {
        const { state } = nodes[i];
        if (state.status === 'online') {
          const { clusterId, changedAt } = state;
          online.push({
            nodeId,
            clusterId,
            changedAt,
            removing: isBeingRemoved(state.removal, now),
          });
        }
      });
      const beats = await this.heartbeats.get(online.map((n) => n.nodeId));
      const clusterIds = [...new Set(online.map((n) => n.clusterId))];
      const clusters = new Map(
        await Promise.all(
          clusterIds.map(
            async (id) => [id, await this.queries.execute(new GetClusterLiveness(id))] as const,
          ),
        ),
      );
      const due: Array<{ nodeId: string; clusterId: string; seen: number }> = [];
      online.forEach(({ nodeId, clusterId, changedAt, removing }, i) => {
        const cluster = clusters.get(clusterId)!;
        const resumedAt = cluster.state.status === 'reporting' ? cluster.state.resumedAt : null;
        const seen = this.lastSeen(nodeId, beats[i], changedAt, now);
        const reference = this.reference(seen.at, resumedAt);
        if (reference + this.staleMs > now) outcomes.set(nodeId, this.arm(nodeId, reference));
        // A pool operation is removing it: its silence is expected, never held, and the
        // operation deletes it once offline.
        else if (removing)
          outcomes.set(nodeId, this.timeOut(nodeId, seen.proof, now, causes.get(nodeId)));
        else due.push({ nodeId, clusterId, seen: seen.proof });
      });
      const stalled = new Map<string, Promise<Holds>>();
      for (const { clusterId } of due) {
        if (!stalled.has(clusterId)) stalled.set(clusterId, this.clusterStalled(clusterId, now));
      }
      for (const { nodeId, clusterId, seen } of due) {
        outcomes.set(
          nodeId,
          stalled.get(clusterId)!.then((holds) =>
            holds(nodeId)
              ? // Held, not offline: re-check after another window.
                this.jobs.schedule<TimeoutJob>(OFFLINE_TIMEOUT_QUEUE, nodeId, now + this.staleMs, {
                  nodeId,
                })
              : this.timeOut(nodeId, seen, now, causes.get(nodeId)),
          ),
        );
      }
    } catch (error) {
      for (const outcome of outcomes.values()) outcome.catch(() => undefined);
      for (const f of batch) f.reject(error);
      return;
    }
    for (const f of batch) outcomes.get(f.nodeId)!.then(f.resolve, f.reject);
  }

  private async timeOut(
    nodeId: string,
    lastSeen: number,
    now: number,
    cause?: TimeoutJob['cause'],
  ): Promise<void> {
    const commandId = uuidFrom('heartbeat-timeout', nodeId, String(lastSeen));
    await this.pipeline.handle(
      nodeAggregate,
      nodeStreamId(nodeId),
      {
        type: 'TimeOutNodeHeartbeat',
        data: {
          lastSeenAt: new Date(lastSeen).toISOString(),
          staleSec: this.config.nodeStaleSec,
          at: new Date(now).toISOString(),
        },
      },
      systemContext(commandId, {
        now: new Date(now),
        ...(cause ? { correlationId: cause.correlationId, causationId: cause.eventId } : {}),
      }),
    );
  }

  /**
   * Evaluates the mass-failure guard for a cluster (cached briefly: many timeouts fire
   * together): which of its due nodes are held rather than taken offline.
   */
  private async clusterStalled(clusterId: string, now: number): Promise<Holds> {
    const cached = this.clusterVerdicts.get(clusterId);
    if (cached && now - cached.at < Math.min(1000, this.staleMs / 4)) return cached.holds;
    const online = await this.onlineNodes({ clusterId });
    const beats = await this.heartbeats.get(online.map((n) => n.nodeId));
    const cluster = await this.queries.execute(new GetClusterLiveness(clusterId));
    const resumedAt = cluster.state.status === 'reporting' ? cluster.state.resumedAt : null;
    const confirmed =
      cluster.state.status === 'reporting' && cluster.state.outageConfirmedAt
        ? Date.parse(cluster.state.outageConfirmedAt)
        : null;
    // Silence an admin confirmed as an outage is not held again, and nodes a pool operation
    // is removing are expected to fall silent: both left out (see weighSilence).
    const { judged, stale } = weighSilence(
      online.map((n, i) => {
        const seen = this.lastSeen(n.nodeId, beats[i], n.changedAt, now);
        return {
          n,
          seen,
          seenAt: seen.at,
          silentSince: this.reference(seen.at, resumedAt),
          removal: n.removal ?? null,
        };
      }),
      now,
      this.staleMs,
      confirmed,
    );
    if (cluster.state.status === 'stalled') {
      // The stall holds the nodes that fell silent together, not every node that falls silent
      // while it lasts: one that stops later, while others report, is a node's own failure and
      // goes offline, unless the nodes not held stop together in numbers of their own.
      const held = cluster.state.held;
      const others = stale.filter(({ n }) => !held.has(n.nodeId)).length;
      const again = isMassFailure(
        others,
        judged.length,
        this.config.massFailureRatio,
        this.config.massFailureMinNodes,
      );
      const holds: Holds = (nodeId) => again || held.has(nodeId);
      this.clusterVerdicts.set(clusterId, { at: now, holds });
      return holds;
    }
    const stalled = isMassFailure(
      stale.length,
      judged.length,
      this.config.massFailureRatio,
      this.config.massFailureMinNodes,
    );
    if (stalled) {
      // The latest real report among them, not a restarted clock (see `reference`).
      const lastSeen = stale.reduce((m, s) => Math.max(m, s.seen.proof), 0);
      const commandId = uuidFrom('cluster-stalled', clusterId, String(cluster.revision ?? -1));
      await this.commands.execute(
        new MarkClusterReportsStalled(
          {
            clusterId,
            staleNodes: stale.map(({ n }) => ({ nodeId: n.nodeId, hostname: n.hostname })),
            onlineNodes: judged.length,
            lastSeenAt: lastSeen ? new Date(lastSeen).toISOString() : null,
            at: new Date(now).toISOString(),
          },
          systemContext(commandId, { now: new Date(now) }),
        ),
      );
      this.stallsMarked++;
      this.reportingSince.delete(clusterId);
      this.logger.warn(
        `cluster ${clusterId}: ${stale.length} of ${judged.length} online nodes stopped reporting together; holding them`,
      );
    }
    const holds: Holds = () => stalled;
    this.clusterVerdicts.set(clusterId, { at: now, holds });
    return holds;
  }

  /**
   * Whether a report from `clusterId` may end a stall: false while the cluster was found not
   * stalled within the last REPORTING_TRUST_MS, and this process has marked no stall of it since.
   */
  mayBeStalled(clusterId: string): boolean {
    const since = this.reportingSince.get(clusterId);
    return since === undefined || performance.now() - since >= REPORTING_TRUST_MS;
  }

  /** Reports arrived from a cluster: a stall of those nodes, if any, is over. */
  async reportsArrived(clusterId: string, nodeIds: string[], ctx: CommandContext): Promise<void> {
    const marked = this.stallsMarked;
    const cluster = await this.queries.execute(new GetClusterLiveness(clusterId));
    if (cluster.state.status !== 'stalled') {
      // Read before a stall this process marked meanwhile: not evidence that it is reporting.
      if (marked !== this.stallsMarked) return;
      if (this.reportingSince.size >= REPORTING_CAPACITY) this.reportingSince.clear();
      this.reportingSince.set(clusterId, performance.now());
      return;
    }
    this.clusterVerdicts.delete(clusterId);
    await this.commands.execute(
      new ResumeClusterReports(
        { clusterId, reportedNodeIds: nodeIds, at: ctx.now.toISOString() },
        { ...ctx, commandId: uuidFrom(ctx.commandId, 'resume', clusterId) },
      ),
    );
  }

  private onlineNodes(filter: Record<string, unknown>): Promise<NodeDoc[]> {
    return findAll<NodeDoc & Doc>(this.readModels, NODES, { ...filter, online: true });
  }

  private reconcilePeriod(): number {
    return Math.min(60_000, Math.max(1000, this.staleMs / 2));
  }

  /** Re-creates missing timeout jobs from the read model (after a restart or a lost Redis). */
  async reconcile(): Promise<number> {
    if (this.reconciling) return 0;
    this.reconciling = true;
    try {
      const counts = await this.jobs.counts(OFFLINE_TIMEOUT_QUEUE);
      // Cheap check first: nothing is missing when every online node has its job (a running
      // one counts: its handler re-arms or takes the node offline). The count comes off an
      // index; reading every online node (100,000 of them: seconds of CPU) waits for a miss.
      const onlineCount = await this.readModels.count(NODES, { online: true });
      if (counts.delayed + counts.waiting + counts.running >= onlineCount) return 0;
      const online = await this.onlineNodes({});
      const live = await this.jobs.liveJobIds(OFFLINE_TIMEOUT_QUEUE);
      // A node that came online within the last window and period is the reactor's to arm
      // (it may lag behind a burst of registrations); one missing longer is re-armed.
      const now = Date.now();
      const recent = now - this.staleMs - this.reconcilePeriod();
      const candidates = online.filter(
        (node) => !live.has(node.nodeId) && Date.parse(node.changedAt) <= recent,
      );
      let rearmed = 0;
      // In slices: after a lost Redis, every online node of the fleet is missing.
      for (let i = 0; i < candidates.length; i += RECONCILE_SLICE) {
        await Promise.all(
          candidates.slice(i, i + RECONCILE_SLICE).map(async (node) => {
            // The read model lags the log: a node just taken offline (its job gone) may still
            // be listed online there, so the aggregate (cached) decides.
            const { state } = await this.pipeline.load(nodeAggregate, nodeStreamId(node.nodeId));
            if (state.status !== 'online') return;
            await this.jobs.schedule<TimeoutJob>(OFFLINE_TIMEOUT_QUEUE, node.nodeId, now, {
              nodeId: node.nodeId,
            });
            rearmed++;
          }),
        );
      }
      if (rearmed > 0) this.logger.log(`re-armed ${rearmed} offline timeout(s) from state`);
      return rearmed;
    } catch (error) {
      this.logger.warn(
        `reconcile failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      return 0;
    } finally {
      this.reconciling = false;
    }
  }
}
