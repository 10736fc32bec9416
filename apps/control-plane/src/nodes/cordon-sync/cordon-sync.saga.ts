import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import {
  Carriers,
  CommandPipeline,
  WorkflowRunner,
  cancelTimer,
  scheduleTimer,
  sendCommand,
} from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { DelayedJobs } from '@fleet/jobs/port';
import { Clock, systemContext } from '@fleet/kernel';
import { Doc, Filter, ReadModelStore, pagesOf } from '@fleet/readmodels/port';
import { Config } from '../../config/config';
import { Runtime } from '../../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../../platform/runtime/subscriptions.registry';
import { CLOCK, CONFIG, DELAYED_JOBS, READ_MODELS } from '../../platform/runtime/tokens';
import { HEARTBEATS } from '../heartbeat/heartbeat.module';
import { HeartbeatStore } from '../heartbeat/heartbeat.store';
import { nodeAggregate } from '../node.aggregate';
import { nodeCodec, nodeStreamId } from '../node.events';
import { NODES, NodeDoc } from '../nodes.projection';
import {
  CordonSyncDeadline,
  CordonSyncInput,
  CordonSyncOutput,
  CordonSyncState,
  awaitsSync,
  cordonSyncStateOf,
  cordonSyncWorkflow,
} from './cordon-sync.workflow';

export const CORDON_SYNC_QUEUE = 'cordon-sync-deadline';

/** Nodes whose desired cordon state differs from what Kubernetes last said (or never said). */
const UNSYNCED: Filter = { cordonSynced: false };

/**
 * The cordon-sync saga: runs the cordon-sync workflow (cordon-sync.workflow.ts) on the cordons
 * and uncordons of the log, on its deadlines (one job per node, id = nodeId, so a newer change
 * replaces the older deadline) and on the repair that re-arms the deadlines of unsynced,
 * unflagged nodes (jobs are hints).
 */
@Injectable()
export class CordonSyncSaga implements OnModuleInit {
  private readonly logger = new Logger('cordon-sync');
  private readonly runner: WorkflowRunner<CordonSyncInput, CordonSyncOutput, CordonSyncState>;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(HEARTBEATS) private readonly heartbeats: HeartbeatStore,
    @Inject(CLOCK) clock: Clock,
  ) {
    const workflow = cordonSyncWorkflow({ syncSec: config.cordonSyncSec });
    this.runner = new WorkflowRunner({
      workflow,
      // A change is decided from its event alone: only a deadline and the repair read the node.
      load: (nodeId, input) =>
        input.type === 'CordonSyncDeadlinePassed' || input.type === 'CordonSyncDeadlineLost'
          ? this.state(nodeId)
          : Promise.resolve(workflow.initialState()),
      carriers: this.carriers(),
      clock,
    });
  }

  onModuleInit(): void {
    this.jobs.register<CordonSyncDeadline>(CORDON_SYNC_QUEUE, (job) => this.fire(job), {
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
    const nodeId = stored.streamId.slice('node-'.length);
    switch (event?.type) {
      case 'NodeCordoned':
      case 'NodeUncordoned': {
        const { eventId, metadata } = stored;
        const change = {
          nodeId,
          at: event.data.at,
          eventId,
          correlationId: metadata.correlationId,
        };
        await this.runner.run(nodeId, { type: event.type, data: change });
        return;
      }
      case 'NodeDeleted':
        await this.runner.run(nodeId, { type: 'NodeDeleted', data: { nodeId } });
        return;
      default:
        return;
    }
  }

  /** The deadline fired: flag the change if Kubernetes still does not show it. */
  async fire(deadline: CordonSyncDeadline): Promise<void> {
    // Stale or synced: nothing to ask the heartbeat store (which fails while out of reach).
    if (!awaitsSync(deadline, await this.state(deadline.nodeId))) return;
    // Ask the store first: the job queue's connection may be back before the heartbeat
    // store has noticed it was ever gone, and its return is what the deadline runs from.
    await this.heartbeats.ping();
    await this.runner.run(deadline.nodeId, (now) => ({
      type: 'CordonSyncDeadlinePassed',
      data: {
        deadline,
        heartbeatsRestoredAt: this.heartbeats.restoredAt(),
        at: now.toISOString(),
      },
    }));
  }

  /** Re-arms missing deadlines from state (after a restart or a lost Redis). */
  async reconcile(): Promise<number> {
    let rearmed = 0;
    try {
      let live: ReadonlySet<string> | null = null;
      for await (const page of pagesOf<NodeDoc & Doc>(this.readModels, NODES, UNSYNCED)) {
        live ??= await this.jobs.liveJobIds(CORDON_SYNC_QUEUE);
        for (const { nodeId } of page) {
          if (live.has(nodeId)) continue;
          const input: CordonSyncInput = { type: 'CordonSyncDeadlineLost', data: { nodeId } };
          if ((await this.runner.run(nodeId, input)).length > 0) rearmed++;
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

  private async state(nodeId: string): Promise<CordonSyncState> {
    return cordonSyncStateOf((await this.pipeline.load(nodeAggregate, nodeStreamId(nodeId))).state);
  }

  private carriers(): Carriers<CordonSyncInput, CordonSyncOutput, CordonSyncState> {
    return {
      ScheduleCordonSyncDeadline: scheduleTimer(this.jobs, CORDON_SYNC_QUEUE, ({ data }) => ({
        jobId: data.deadline.nodeId,
        runAt: data.runAt,
        payload: data.deadline,
      })),
      CancelCordonSyncDeadline: cancelTimer(
        this.jobs,
        CORDON_SYNC_QUEUE,
        ({ data }) => data.nodeId,
      ),
      // One command per change: a retried or duplicated deadline appends nothing new.
      FlagCordonSyncOverdue: sendCommand(this.pipeline, nodeAggregate, ({ data }) => ({
        streamId: nodeStreamId(data.nodeId),
        command: {
          type: 'FlagCordonSyncOverdue' as const,
          data: { desired: data.desired, at: data.at },
        },
        context: systemContext(data.commandId, {
          correlationId: data.correlationId,
          causationId: data.causationId,
          now: new Date(data.at),
        }),
      })),
    };
  }
}
