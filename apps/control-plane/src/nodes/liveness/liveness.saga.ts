import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
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
import { Clock, CommandContext, systemContext } from '@fleet/kernel';
import { ReadModelStore } from '@fleet/readmodels/port';
import { clusterLivenessCodec } from '../../clusters';
import { Config } from '../../config/config';
import { Runtime } from '../../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../../platform/runtime/subscriptions.registry';
import { CLOCK, CONFIG, DELAYED_JOBS, READ_MODELS } from '../../platform/runtime/tokens';
import { HEARTBEATS } from '../heartbeat/heartbeat.module';
import { HeartbeatStore } from '../heartbeat/heartbeat.store';
import { nodeAggregate } from '../node.aggregate';
import { nodeCodec, nodeStreamId } from '../node.events';
import { ClusterReports } from './cluster-reports';
import {
  LivenessInput,
  LivenessOutput,
  LivenessState,
  TimeoutCause,
  livenessWorkflow,
} from './liveness.workflow';
import { LivenessMemory, OFFLINE_TIMEOUT_QUEUE, OfflineTimers, TimerOps } from './offline-timers';

export { OFFLINE_TIMEOUT_QUEUE } from './offline-timers';
export { REPORTING_TRUST_MS } from './cluster-reports';

/** A node's offline timer; `cause`: set when an admin's outage confirmation fired it at once. */
type TimeoutJob = { nodeId: string; cause?: TimeoutCause };

/**
 * Offline timeouts handled at once; those that fire together form a batch sharing one
 * heartbeat read and one commit. Not more: a BullMQ worker fetches jobs one round trip after
 * another until this many are held, and only then starts handling them.
 */
const FIRE_CONCURRENCY = 100;
/** BullMQ workers sharing FIRE_CONCURRENCY: each fills its 25 slots before it starts handling. */
const FIRE_FETCHERS = 4;

/**
 * The liveness saga: runs the liveness workflow (liveness.workflow.ts) on the node events that
 * start or end a node's online time, on outages admins confirm, on its timers (in batches:
 * offline-timers.ts) and on the repair that re-creates timers lost with Redis (jobs are hints).
 */
@Injectable()
export class LivenessSaga implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('liveness');
  private readonly runner: WorkflowRunner<LivenessInput, LivenessOutput, LivenessState>;
  private readonly ops = new TimerOps(this.logger);
  private readonly timers: OfflineTimers;
  private readonly reports: ClusterReports;
  private readonly periodMs: number;

  constructor(
    @Inject(CONFIG) config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(HEARTBEATS) heartbeats: HeartbeatStore,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(CommandBus) commands: CommandBus,
    @Inject(QueryBus) queries: QueryBus,
  ) {
    const staleMs = config.nodeStaleSec * 1000;
    this.periodMs = Math.min(60_000, Math.max(1000, staleMs / 2));
    const workflow = livenessWorkflow({ staleSec: config.nodeStaleSec });
    const memory = new LivenessMemory(workflow);
    this.runner = new WorkflowRunner({
      workflow,
      // What the node's runs have seen is kept in this process (a lost heartbeat's grace).
      load: async (nodeId, input) => memory.see(nodeId, input),
      carriers: this.carriers(),
      clock,
    });
    this.reports = new ClusterReports({ commands, queries }, clock, (id) => this.timers.forget(id));
    this.timers = new OfflineTimers({
      pipeline,
      commands,
      queries,
      readModels,
      jobs,
      heartbeats,
      clock,
      guard: {
        staleMs,
        massFailureRatio: config.massFailureRatio,
        massFailureMinNodes: config.massFailureMinNodes,
      },
      memory,
      reports: this.reports,
      logger: this.logger,
      run: (nodeId, input) => this.runner.run(nodeId, input),
    });
  }

  onModuleInit(): void {
    this.jobs.register<TimeoutJob>(
      OFFLINE_TIMEOUT_QUEUE,
      (job) => this.timers.fire(job.nodeId, job.cause ?? null),
      { attempts: 20, backoffMs: 200, concurrency: FIRE_CONCURRENCY, fetchers: FIRE_FETCHERS },
    );
    this.registry.addReactor({ name: 'node-liveness', react: (e) => this.react(e) });
    this.runtime.afterStart(async () => void (await this.reconcile()));
    // Once a period across the processes sharing Redis, not in each of them.
    this.runtime.every('liveness-reconcile', this.periodMs, async () => {
      await this.reconcile();
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.ops.settled();
  }

  /** Whether a report from `clusterId` may end a stall (see ClusterReports). */
  mayBeStalled(clusterId: string): boolean {
    return this.reports.mayBeStalled(clusterId);
  }

  /** Reports arrived from a cluster: a stall of those nodes, if any, is over. */
  reportsArrived(clusterId: string, nodeIds: string[], ctx: CommandContext): Promise<void> {
    return this.reports.reportsArrived(clusterId, nodeIds, ctx);
  }

  /** Re-creates missing timeout jobs from the read model (after a restart or a lost Redis). */
  reconcile(): Promise<number> {
    return this.timers.reconcile(this.periodMs, (nodeId, online, at) =>
      this.runner.run(nodeId, { type: 'OfflineTimeoutLost', data: { nodeId, online, at } }),
    );
  }

  private async react(stored: StoredEvent): Promise<void> {
    if (stored.streamId.startsWith('cluster-')) return this.reactToCluster(stored);
    if (!stored.streamId.startsWith('node-')) return;
    const event = nodeCodec.decode(stored.type, stored.data);
    switch (event?.type) {
      case 'NodeRegistered':
      case 'NodeCameOnline':
      case 'NodeWentOffline':
      case 'NodeDeleted':
        return this.ops.start(event.data.nodeId, () => this.runner.run(event.data.nodeId, event));
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
    this.timers.forget(clusterId);
    const at = this.clock.now().getTime();
    const cause = { eventId: stored.eventId, correlationId: stored.metadata.correlationId };
    for (const { nodeId } of await this.timers.onlineNodes({ clusterId })) {
      await this.ops.start(nodeId, () =>
        this.runner.run(nodeId, { type: 'NodeOutageConfirmed', data: { nodeId, cause, at } }),
      );
    }
  }

  private carriers(): Carriers<LivenessInput, LivenessOutput, LivenessState> {
    return {
      ScheduleOfflineTimeout: scheduleTimer(this.jobs, OFFLINE_TIMEOUT_QUEUE, ({ data }) => ({
        jobId: data.nodeId,
        runAt: data.runAt,
        payload: { nodeId: data.nodeId } satisfies TimeoutJob,
      })),
      // A run already due re-reads the node anyway.
      CheckSilenceNow: scheduleTimer(
        this.jobs,
        OFFLINE_TIMEOUT_QUEUE,
        ({ data }) => ({
          jobId: data.nodeId,
          runAt: data.runAt,
          payload: { nodeId: data.nodeId, cause: data.cause } satisfies TimeoutJob,
        }),
        () => undefined,
      ),
      CancelOfflineTimeout: cancelTimer(
        this.jobs,
        OFFLINE_TIMEOUT_QUEUE,
        ({ data }) => data.nodeId,
      ),
      TimeOutNodeHeartbeat: sendCommand(this.pipeline, nodeAggregate, ({ data }) => ({
        streamId: nodeStreamId(data.nodeId),
        command: {
          type: 'TimeOutNodeHeartbeat' as const,
          data: { lastSeenAt: data.lastSeenAt, staleSec: data.staleSec, at: data.at },
        },
        context: systemContext(data.commandId, {
          now: new Date(data.at),
          ...(data.cause
            ? { correlationId: data.cause.correlationId, causationId: data.cause.eventId }
            : {}),
        }),
      })),
    };
  }
}
