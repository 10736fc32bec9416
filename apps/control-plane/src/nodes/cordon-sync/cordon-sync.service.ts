import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { CommandPipeline } from '../../../../../libs/cqrs/src';
import { StoredEvent } from '../../../../../libs/eventstore/src/port';
import { DelayedJobs } from '../../../../../libs/jobs/src/port';
import { systemContext, uuidFrom } from '../../../../../libs/kernel/src';
import { Doc, Filter, ReadModelStore, pagesOf } from '../../../../../libs/readmodels/src/port';
import { Config } from '../../config/config';
import { Runtime } from '../../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../../platform/runtime/subscriptions.registry';
import { CONFIG, DELAYED_JOBS, READ_MODELS } from '../../platform/runtime/tokens';
import { HEARTBEATS } from '../heartbeat/heartbeat.module';
import { HeartbeatStore } from '../heartbeat/heartbeat.store';
import { nodeAggregate } from '../node.aggregate';
import { nodeCodec, nodeStreamId } from '../node.events';
import { NODES, NodeDoc } from '../nodes.projection';

export const CORDON_SYNC_QUEUE = 'cordon-sync-deadline';

/** One pending deadline per node: the desired state it checks and when that state was set. */
export type CordonSyncJob = {
  nodeId: string;
  desired: boolean;
  since: string;
  /** The cordon's correlation id, so an auditor follows it to the overdue flag. */
  correlationId: string;
  causationId: string;
};

/** Nodes whose desired cordon state differs from what Kubernetes last said (or never said). */
const UNSYNCED: Filter = { cordonSynced: false };

/**
 * The cordon-sync deadline saga. Each cordon or uncordon schedules one job (id = nodeId, so a
 * newer change replaces the older deadline) at the change time + cordonSyncSec. When it fires
 * it re-reads the node and, if Kubernetes still shows the other state, issues
 * FlagCordonSyncOverdue; the decider appends NodeCordonSyncWentOverdue at most once per change.
 * Jobs are hints: at start a reconciler re-arms the deadlines of unsynced, unflagged nodes.
 */
@Injectable()
export class CordonSyncService implements OnModuleInit {
  private readonly logger = new Logger('cordon-sync');
  private readonly syncMs: number;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(HEARTBEATS) private readonly heartbeats: HeartbeatStore,
  ) {
    this.syncMs = config.cordonSyncSec * 1000;
  }

  onModuleInit(): void {
    this.jobs.register<CordonSyncJob>(CORDON_SYNC_QUEUE, (job) => this.fire(job), {
      attempts: 20,
      backoffMs: 200,
      concurrency: 20,
    });
    this.registry.addReactor({ name: 'cordon-sync', react: (e) => this.react(e) });
    this.runtime.afterStart(async () => {
      await this.reconcile();
    });
    // Redis may lose jobs while we run (restarted empty, flushed): re-arm what is gone. Only
    // at start, a cordon made before an outage went without its overdue notice until the next
    // restart of the control plane.
    this.runtime.every(
      'cordon-sync-reconcile',
      this.config.jobsRepairSec * 1000,
      async () => void (await this.reconcile()),
    );
  }

  /** Arms the deadline on every desired-state change; a deleted node needs none. */
  async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('node-')) return;
    const event = nodeCodec.decode(stored.type, stored.data);
    if (!event) return;
    const nodeId = stored.streamId.slice('node-'.length);
    switch (event.type) {
      case 'NodeCordoned':
      case 'NodeUncordoned':
        return this.arm({
          nodeId,
          desired: event.type === 'NodeCordoned',
          since: event.data.at,
          correlationId: stored.metadata.correlationId,
          causationId: stored.eventId,
        });
      case 'NodeDeleted':
        return this.jobs.cancel(CORDON_SYNC_QUEUE, nodeId);
      default:
        return;
    }
  }

  private arm(job: CordonSyncJob): Promise<void> {
    const runAt = Date.parse(job.since) + this.syncMs;
    return this.jobs.schedule<CordonSyncJob>(CORDON_SYNC_QUEUE, job.nodeId, runAt, job);
  }

  /** The deadline fired: flag the change if Kubernetes still does not show it. */
  async fire(job: CordonSyncJob): Promise<void> {
    const { state } = await this.pipeline.load(nodeAggregate, nodeStreamId(job.nodeId));
    if (state.status !== 'online' && state.status !== 'offline') return;
    const { desired, since, overdue } = state.cordon;
    // A newer change armed its own deadline; this one is stale.
    if (desired !== job.desired || since !== job.since) return;
    if (overdue || state.observedUnschedulable === desired) return;
    const now = new Date();
    // Reports could not be recorded while the heartbeat store was out of reach (down or
    // stalled), so the operator could not show the change applied: its time runs again from
    // the store's return, as a node's silence does.
    // Ask the store first: the job queue's connection may be back before the heartbeat
    // store has noticed it was ever gone, and its return is what the deadline runs from.
    await this.heartbeats.ping();
    const restored = this.heartbeats.restoredAt();
    if (restored > Date.parse(since) && now.getTime() < restored + this.syncMs) {
      await this.jobs.schedule<CordonSyncJob>(
        CORDON_SYNC_QUEUE,
        job.nodeId,
        restored + this.syncMs,
        job,
      );
      return;
    }
    // One command per change: a retried or duplicated job appends nothing new.
    const commandId = uuidFrom('cordon-sync-overdue', job.nodeId, job.since, String(job.desired));
    await this.pipeline.handle(
      nodeAggregate,
      nodeStreamId(job.nodeId),
      { type: 'FlagCordonSyncOverdue', data: { desired: job.desired, at: now.toISOString() } },
      systemContext(commandId, {
        correlationId: job.correlationId,
        causationId: job.causationId,
        now,
      }),
    );
  }

  /** Re-arms missing deadlines from state (after a restart or a lost Redis). */
  async reconcile(): Promise<number> {
    let rearmed = 0;
    try {
      let live: ReadonlySet<string> | null = null;
      for await (const page of pagesOf<NodeDoc & Doc>(this.readModels, NODES, UNSYNCED)) {
        live ??= await this.jobs.liveJobIds(CORDON_SYNC_QUEUE);
        for (const doc of page) {
          if (live.has(doc.nodeId)) continue;
          const { state } = await this.pipeline.load(nodeAggregate, nodeStreamId(doc.nodeId));
          if (state.status !== 'online' && state.status !== 'offline') continue;
          const { desired, since, overdue } = state.cordon;
          if (since === null || overdue || state.observedUnschedulable === desired) continue;
          await this.arm({
            nodeId: doc.nodeId,
            desired,
            since,
            correlationId: uuidFrom('cordon-sync-reconcile', doc.nodeId, since),
            causationId: uuidFrom('cordon-sync-reconcile', doc.nodeId, since),
          });
          rearmed++;
        }
      }
      if (rearmed > 0) this.logger.log(`re-armed ${rearmed} cordon-sync deadline(s) from state`);
    } catch (error) {
      this.logger.warn(
        `reconcile failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return rearmed;
  }
}
