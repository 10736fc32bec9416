import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CommandPipeline } from '../../../../libs/cqrs/src';
import { StoredEvent } from '../../../../libs/eventstore/src/port';
import { DelayedJobs } from '../../../../libs/jobs/src/port';
import { CommandContext, SYSTEM_ACTOR, uuidFrom } from '../../../../libs/kernel/src';
import { Doc, ReadModelStore } from '../../../../libs/readmodels/src/port';
import { clusterLivenessAggregate, isMassFailure } from '../clusters/cluster-liveness.decider';
import { clusterStreamId } from '../clusters/cluster-liveness.events';
import { Config } from '../config/config';
import { Runtime } from '../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CONFIG, DELAYED_JOBS, READ_MODELS } from '../platform/runtime/tokens';
import { HEARTBEATS } from './heartbeat/heartbeat.module';
import { Heartbeat, HeartbeatStore } from './heartbeat/heartbeat.store';
import { nodeAggregate } from './node.aggregate';
import { nodeCodec, nodeStreamId } from './node.events';
import { NODES, NodeDoc } from './nodes.projection';

export const OFFLINE_TIMEOUT_QUEUE = 'node-offline-timeout';

type TimeoutJob = { nodeId: string };

const systemContext = (commandId: string, causationId: string, now: Date): CommandContext => ({
  commandId,
  correlationId: causationId,
  causationId,
  actor: SYSTEM_ACTOR,
  now,
});

/**
 * The offline-timeout saga. One delayed job per online node at lastSeenAt + nodeStaleSec;
 * reports never touch the queue. When the job fires it re-reads lastSeenAt: reported since →
 * re-arm; silent → TimeOutNodeHeartbeat, unless the mass-failure guard holds for its cluster.
 * Jobs are hints: a reconciler re-creates missing ones from the read model.
 */
@Injectable()
export class LivenessService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('liveness');
  private readonly staleMs: number;
  /** When a node was first found without a heartbeat (store restarted or flushed): its grace starts then. */
  private readonly missingSince = new Map<string, number>();
  private readonly clusterVerdicts = new Map<string, { at: number; stalled: boolean }>();
  private reconcileTimer: NodeJS.Timeout | null = null;
  private reconciling = false;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(HEARTBEATS) private readonly heartbeats: HeartbeatStore,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
  ) {
    this.staleMs = config.nodeStaleSec * 1000;
  }

  onModuleInit(): void {
    this.jobs.register<TimeoutJob>(OFFLINE_TIMEOUT_QUEUE, (job) => this.fire(job.nodeId), {
      attempts: 20,
      backoffMs: 200,
      concurrency: 50,
    });
    this.registry.addReactor({ name: 'node-liveness', react: (e) => this.react(e) });
    this.runtime.afterStart(async () => {
      await this.reconcile();
      const period = Math.min(60_000, Math.max(1000, this.staleMs / 2));
      this.reconcileTimer = setInterval(() => void this.reconcile(), period);
      this.reconcileTimer.unref();
    });
  }

  onModuleDestroy(): void {
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
  }

  /** Arms the timer when a node starts being online; disarms it when it stops. */
  private async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('node-')) return;
    const event = nodeCodec.decode(stored.type, stored.data);
    if (!event) return;
    const nodeId = stored.streamId.slice('node-'.length);
    switch (event.type) {
      case 'NodeRegistered':
        if (event.data.kubeletReady) await this.arm(nodeId, Date.parse(event.data.registeredAt));
        return;
      case 'NodeCameOnline':
        return this.arm(nodeId, Date.parse(event.data.at));
      case 'NodeWentOffline':
      case 'NodeDeleted':
        this.missingSince.delete(nodeId);
        return this.jobs.cancel(OFFLINE_TIMEOUT_QUEUE, nodeId);
      default:
        return;
    }
  }

  private arm(nodeId: string, seenAt: number): Promise<void> {
    return this.jobs.schedule<TimeoutJob>(OFFLINE_TIMEOUT_QUEUE, nodeId, seenAt + this.staleMs, {
      nodeId,
    });
  }

  /** The time a node's silence is counted from. */
  private reference(
    nodeId: string,
    beat: Heartbeat | null,
    changedAt: string,
    resumedAt: string | null,
    now: number,
  ): number {
    let seen = beat?.seenAt;
    if (seen === undefined) {
      // No heartbeat (an embedded store after a restart, or Redis lost it): a full window from now.
      const since = this.missingSince.get(nodeId) ?? now;
      this.missingSince.set(nodeId, since);
      seen = Math.max(since, Date.parse(changedAt));
    } else {
      this.missingSince.delete(nodeId);
    }
    // After a stalled cluster resumes reporting, every clock restarts: no stampede of offlines.
    return Math.max(seen, resumedAt ? Date.parse(resumedAt) : 0);
  }

  async fire(nodeId: string): Promise<void> {
    const now = Date.now();
    const { state } = await this.pipeline.load(nodeAggregate, nodeStreamId(nodeId));
    if (state.status !== 'online') return;
    const [beat] = await this.heartbeats.get([nodeId]);
    const cluster = await this.pipeline.load(
      clusterLivenessAggregate,
      clusterStreamId(state.clusterId),
    );
    const resumedAt = cluster.state.status === 'reporting' ? cluster.state.resumedAt : null;
    const reference = this.reference(nodeId, beat, state.changedAt, resumedAt, now);
    if (reference + this.staleMs > now) return this.arm(nodeId, reference);
    if (await this.clusterStalled(state.clusterId, now)) {
      // Held, not offline: re-check after another window.
      return this.jobs.schedule<TimeoutJob>(OFFLINE_TIMEOUT_QUEUE, nodeId, now + this.staleMs, {
        nodeId,
      });
    }
    const commandId = uuidFrom('heartbeat-timeout', nodeId, String(reference));
    await this.pipeline.handle(
      nodeAggregate,
      nodeStreamId(nodeId),
      {
        type: 'TimeOutNodeHeartbeat',
        data: {
          lastSeenAt: new Date(reference).toISOString(),
          staleSec: this.config.nodeStaleSec,
          at: new Date(now).toISOString(),
        },
      },
      systemContext(commandId, commandId, new Date(now)),
    );
  }

  /** Evaluates the mass-failure guard for a cluster (cached briefly: many timeouts fire together). */
  private async clusterStalled(clusterId: string, now: number): Promise<boolean> {
    const cached = this.clusterVerdicts.get(clusterId);
    if (cached && now - cached.at < Math.min(1000, this.staleMs / 4)) return cached.stalled;
    const online = await this.onlineNodes({ clusterId });
    const beats = await this.heartbeats.get(online.map((n) => n.nodeId));
    const cluster = await this.pipeline.load(clusterLivenessAggregate, clusterStreamId(clusterId));
    const resumedAt = cluster.state.status === 'reporting' ? cluster.state.resumedAt : null;
    // Nodes report every few seconds, so one silent for half a window stopped with the others;
    // counting only fully stale ones would let the first few of a mass failure go offline.
    const stale = online
      .map((n, i) => ({ n, ref: this.reference(n.nodeId, beats[i], n.changedAt, resumedAt, now) }))
      .filter(({ ref }) => ref + this.staleMs / 2 <= now);
    const stalled =
      cluster.state.status === 'stalled' ||
      isMassFailure(
        stale.length,
        online.length,
        this.config.massFailureRatio,
        this.config.massFailureMinNodes,
      );
    if (stalled && cluster.state.status !== 'stalled') {
      const lastSeen = stale.reduce((m, s) => Math.max(m, s.ref), 0);
      const commandId = uuidFrom('cluster-stalled', clusterId, String(cluster.revision ?? -1));
      await this.pipeline.handle(
        clusterLivenessAggregate,
        clusterStreamId(clusterId),
        {
          type: 'MarkClusterReportsStalled',
          data: {
            clusterId,
            staleNodes: stale.map(({ n }) => ({ nodeId: n.nodeId, hostname: n.hostname })),
            onlineNodes: online.length,
            lastSeenAt: lastSeen ? new Date(lastSeen).toISOString() : null,
            at: new Date(now).toISOString(),
          },
        },
        systemContext(commandId, commandId, new Date(now)),
      );
      this.logger.warn(
        `cluster ${clusterId}: ${stale.length} of ${online.length} online nodes stopped reporting together; holding them`,
      );
    }
    this.clusterVerdicts.set(clusterId, { at: now, stalled });
    return stalled;
  }

  /** Reports arrived from a cluster: a stall of those nodes, if any, is over (cheap when there is none). */
  async reportsArrived(clusterId: string, nodeIds: string[], ctx: CommandContext): Promise<void> {
    const cluster = await this.pipeline.load(clusterLivenessAggregate, clusterStreamId(clusterId));
    if (cluster.state.status !== 'stalled') return;
    this.clusterVerdicts.delete(clusterId);
    await this.pipeline.handle(
      clusterLivenessAggregate,
      clusterStreamId(clusterId),
      {
        type: 'ResumeClusterReports',
        data: { clusterId, reportedNodeIds: nodeIds, at: ctx.now.toISOString() },
      },
      { ...ctx, commandId: uuidFrom(ctx.commandId, 'resume', clusterId) },
    );
  }

  private async onlineNodes(filter: Record<string, unknown>): Promise<NodeDoc[]> {
    const out: NodeDoc[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: NodeDoc[]; nextCursor: string | null } = await this.readModels.find<
        NodeDoc & Doc
      >(NODES, { ...filter, online: true }, { limit: 1000, cursor });
      out.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  /** Re-creates missing timeout jobs from the read model (after a restart or a lost Redis). */
  async reconcile(): Promise<number> {
    if (this.reconciling) return 0;
    this.reconciling = true;
    try {
      const online = await this.onlineNodes({});
      const counts = await this.jobs.counts(OFFLINE_TIMEOUT_QUEUE);
      // Cheap check first: nothing is missing when every online node has its job.
      if (counts.delayed + counts.waiting >= online.length) return 0;
      let rearmed = 0;
      for (const node of online) {
        if ((await this.jobs.scheduledAt(OFFLINE_TIMEOUT_QUEUE, node.nodeId)) !== null) continue;
        await this.jobs.schedule<TimeoutJob>(OFFLINE_TIMEOUT_QUEUE, node.nodeId, Date.now(), {
          nodeId: node.nodeId,
        });
        rearmed++;
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
