import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { Carriers, CommandPipeline, WorkflowRun, WorkflowRunner, sendCommand } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { DelayedJobs, scheduleUnlessBusy } from '@fleet/jobs/port';
import { Clock, CommandContext, systemContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { Config } from '../config/config';
import { EndNodeDrain, GetNodeState, NODES, NodeDoc, nodeCodec } from '../nodes';
import { CLOCK, CONFIG, DELAYED_JOBS, READ_MODELS } from '../platform/runtime/tokens';
import {
  GetSessionState,
  PauseSession,
  ReleasePlacement,
  ResumeSession,
  TerminateSession,
  TryPlaceSession,
} from '../sessions';
import {
  DrainInput,
  DrainOutput,
  DrainState,
  DrainView,
  DrainedNode,
  drainAggregate,
  drainCodec,
  drainStreamId,
  drainWorkflow,
} from './drain.workflow';
import { DRAINS, DrainDoc } from './drains.projection';

export const DRAIN_STEP_QUEUE = 'drain-step';

type StepJob = { drainId: string };
type RunningDrain = Extract<DrainState, { status: 'running' }>;

/** The drain a step runs on; its outputs come only from a running one. */
const running = (view: DrainView): RunningDrain => {
  if (view.drain.status !== 'running') throw new Error('a drain step output without its drain');
  return view.drain;
};

/**
 * The drain saga. Each step re-reads the drain and the node, and the drain workflow decides
 * the next thing (nextDrainStep): relocate up to N sessions at once by cold pause, resume
 * request and placement elsewhere (queued, unbilled, when nothing fits); or force-terminate
 * them; or end the drain. The workflow runner carries it out; a delayed job carries the drain
 * from step to step, so a crash resumes it.
 */
@Injectable()
export class DrainSaga {
  private readonly logger = new Logger('drain');
  private readonly runner: WorkflowRunner<DrainInput, DrainOutput, DrainView>;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(CLOCK) private readonly clock: Clock,
    /** Nodes and sessions are their slices': asked of them on the buses. */
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {
    this.runner = new WorkflowRunner({
      workflow: drainWorkflow,
      load: (drainId) => this.view(drainId),
      carriers: this.carriers(),
      clock,
      together: ['RelocateSession', 'ForceTerminateSession'],
    });
  }

  register(): void {
    this.jobs.register<StepJob>(DRAIN_STEP_QUEUE, (job) => this.step(job.drainId), {
      attempts: 20,
      backoffMs: 100,
      concurrency: 20,
    });
  }

  async schedule(drainId: string, delayMs = 0): Promise<void> {
    const at = this.clock.now().getTime() + delayMs;
    if (!(await scheduleUnlessBusy<StepJob>(this.jobs, DRAIN_STEP_QUEUE, drainId, at, { drainId })))
      this.logger.warn(`drain ${drainId}: step already pending on a stalled worker`);
  }

  /**
   * Drives drains from events: a drain started, or its node changed (released, uncordoned,
   * offline); a drain ended, so its node is told (again: the step ending it does it at once, this makes it
   * survive a crash between the two writes, which left the node draining for good).
   */
  async react(stored: StoredEvent): Promise<void> {
    if (stored.streamId.startsWith('drain-')) {
      const event = drainCodec.decode(stored.type, stored.data);
      if (event?.type !== 'DrainEnded') return;
      return this.endOnNode(event.data, {
        ...this.context(uuidFrom(event.data.drainId, 'end-node'), stored),
        correlationId: stored.metadata.correlationId,
      });
    }
    if (stored.streamId.startsWith('node-')) {
      const event = nodeCodec.decode(stored.type, stored.data);
      if (!event) return;
      if (event.type === 'NodeDrainStarted') {
        // The node was marked; make sure the drain's own stream exists (a crash may have come between).
        const { drainId, nodeId, mode, at } = event.data;
        await this.pipeline.handle(
          drainAggregate,
          drainStreamId(drainId),
          {
            type: 'StartDrain',
            data: { drainId, nodeId, mode, correlationId: stored.metadata.correlationId, at },
          },
          this.context(uuidFrom(stored.eventId, 'start-drain'), stored),
        );
        return this.schedule(drainId);
      }
      if (
        ['NodeCapacityReleased', 'NodeUncordoned', 'NodeWentOffline', 'NodeDeleted'].includes(
          event.type,
        )
      ) {
        const nodeId = stored.streamId.slice('node-'.length);
        const node = (await this.queries.execute(new GetNodeState(nodeId))).state;
        const drainId = node.status === 'online' || node.status === 'offline' ? node.drainId : null;
        if (drainId) await this.schedule(drainId);
      }
    }
  }

  /** One step; steps of one drain never overlap in this process. */
  async step(drainId: string): Promise<void> {
    await this.runner.run(drainId, (now) => ({
      type: 'DrainStepDue',
      data: { drainId, at: now.toISOString() },
    }));
  }

  /** The drain, and its node as the step needs it. */
  private async view(drainId: string): Promise<DrainView> {
    const parallelism = this.config.drainParallelism;
    const drain = (await this.pipeline.load(drainAggregate, drainStreamId(drainId))).state;
    if (drain.status !== 'running') return { ...drainWorkflow.initialState(), drain, parallelism };
    const nodeState = (await this.queries.execute(new GetNodeState(drain.nodeId))).state;
    const node: DrainedNode =
      nodeState.status === 'online' || nodeState.status === 'offline'
        ? {
            status: nodeState.status,
            cordoned: nodeState.cordon.desired,
            sessionsOnNode: Object.keys(nodeState.allocations).sort(),
          }
        : { status: 'gone', cordoned: false, sessionsOnNode: [] };
    return { drain, node, parallelism };
  }

  /** How a step's outputs are carried out. */
  private carriers(): Carriers<DrainInput, DrainOutput, DrainView> {
    return {
      EndDrain: sendCommand(this.pipeline, drainAggregate, (command, run) => ({
        streamId: drainStreamId(run.instanceId),
        command,
        context: this.stepContext(run, uuidFrom(run.instanceId, 'end')),
      })),
      EndDrainOnNode: async ({ data }, run) => {
        await this.endOnNode(data, this.stepContext(run, uuidFrom(data.drainId, 'end-node')));
        this.logger.log(`drain ${data.drainId} of node ${data.nodeId} ended: ${data.outcome}`);
      },
      RelocateSession: async ({ data: { sessionId, begin } }, run) => {
        const drain = running(run.state);
        if (begin && !(await this.beginRelocation(drain, sessionId, run))) return;
        await this.relocate(drain, sessionId, this.stepContext(run, run.instanceId));
      },
      ForceTerminateSession: ({ data: { sessionId } }, run) =>
        this.forceTerminate(running(run.state), sessionId, this.stepContext(run, run.instanceId)),
      ScheduleDrainStep: ({ data: { drainId } }) => this.schedule(drainId),
    };
  }

  /** Records the relocation as begun (up to the parallelism); whether it is in flight now. */
  private async beginRelocation(
    drain: RunningDrain,
    sessionId: string,
    run: WorkflowRun<DrainInput, DrainView>,
  ): Promise<boolean> {
    const begun = await this.pipeline.handle(
      drainAggregate,
      drainStreamId(drain.drainId),
      {
        type: 'BeginRelocation',
        data: { sessionId, parallelism: run.state.parallelism, at: run.input.data.at },
      },
      this.stepContext(run, uuidFrom(drain.drainId, 'begin', sessionId)),
    );
    return begun.state.status === 'running' && begun.state.inFlight.includes(sessionId);
  }

  /** Every command of the drain carries the admin's correlation id: auditors follow it to each session moved. */
  private stepContext(run: WorkflowRun<DrainInput, DrainView>, commandId: string): CommandContext {
    const drain = running(run.state);
    return systemContext(commandId, {
      correlationId: drain.correlationId,
      causationId: drain.drainId,
      now: run.now,
    });
  }

  /**
   * Cold pause (the segment closes), resume request ahead of never-run sessions, placement
   * elsewhere. Each step re-decides on the session's stream: once its owner pauses it (even
   * between these steps), the resume is a no-op, a placement in flight is refused (its cards
   * released) and the outcome is `gone`.
   */
  private async relocate(
    drain: RunningDrain,
    sessionId: string,
    ctx: CommandContext,
  ): Promise<void> {
    const { drainId, nodeId } = drain;
    const at = () => this.clock.now().toISOString();
    const id = (step: string) => ({
      ...ctx,
      commandId: uuidFrom(drainId, step, sessionId),
      now: this.clock.now(),
    });
    let state = (await this.queries.execute(new GetSessionState(sessionId))).state;
    if (state.status === 'running' && state.placement.nodeId === nodeId) {
      state = (
        await this.commands.execute(
          new PauseSession(sessionId, { reason: 'drain', drainId, at: at() }, id('pause')),
        )
      ).state;
    }
    await this.commands.execute(new ReleasePlacement(nodeId, sessionId, id('release')));
    if (state.status === 'paused' && state.drainId === drainId) {
      state = (
        await this.commands.execute(
          new ResumeSession(sessionId, { displaced: true, drainId, at: at() }, id('resume')),
        )
      ).state;
    }
    if (state.status === 'queued' && state.drainId === drainId)
      state = await this.commands.execute(new TryPlaceSession(sessionId, id('place')));
    const outcome =
      state.status === 'running' && state.placement.nodeId !== nodeId
        ? 'relocated'
        : state.status === 'queued'
          ? 'queued'
          : 'gone';
    await this.pipeline.handle(
      drainAggregate,
      drainStreamId(drainId),
      {
        type: 'FinishRelocation',
        data: {
          sessionId,
          outcome,
          toNodeId: state.status === 'running' ? state.placement.nodeId : null,
          at: at(),
        },
      },
      id('finish'),
    );
  }

  private async forceTerminate(
    drain: RunningDrain,
    sessionId: string,
    ctx: CommandContext,
  ): Promise<void> {
    const id = (step: string) => ({
      ...ctx,
      commandId: uuidFrom(drain.drainId, step, sessionId),
      now: this.clock.now(),
    });
    const at = () => this.clock.now().toISOString();
    await this.pipeline.handle(
      drainAggregate,
      drainStreamId(drain.drainId),
      { type: 'BeginForceTermination', data: { sessionId, at: at() } },
      id('begin-terminate'),
    );
    const { state: session } = await this.commands.execute(
      new TerminateSession(
        sessionId,
        { reason: 'drain_force', at: at(), onlyOnNode: drain.nodeId },
        id('terminate'),
      ),
    );
    await this.commands.execute(new ReleasePlacement(drain.nodeId, sessionId, id('release')));
    // Listed only if the drain ended it (now, or before a crash): its owner may have paused it,
    // or it was moved off the node, in between; then the drain only lets go of it.
    const ended = session.status === 'terminated' && session.reason === 'drain_force';
    await this.pipeline.handle(
      drainAggregate,
      drainStreamId(drain.drainId),
      {
        type: ended ? 'RecordForceTermination' : 'SkipForceTermination',
        data: { sessionId, at: at() },
      },
      id(ended ? 'record-terminate' : 'skip-terminate'),
    );
  }

  /** The node's side of a drain's end; a no-op once done (same command id, and the decider). */
  private async endOnNode(
    drain: { drainId: string; nodeId: string; at: string },
    ctx: CommandContext,
  ): Promise<void> {
    await this.commands.execute(
      new EndNodeDrain(drain.nodeId, { drainId: drain.drainId, at: drain.at }, ctx),
    );
  }

  /**
   * Re-arms a step for every running drain (after a restart or a lost Redis), and ends on its
   * node every drain that ended without it (a crash between the two writes, before the end
   * was also told from the log: data from before that).
   */
  async reconcile(): Promise<void> {
    const running = await findAll<DrainDoc & Doc>(this.readModels, DRAINS, { status: 'running' });
    for (const d of running) await this.schedule(d.drainId);
    const draining = await findAll<NodeDoc & Doc>(this.readModels, NODES, {
      'drain.status': 'running',
    });
    for (const node of draining) {
      const drainId = node.drain!.drainId;
      const drain = (await this.pipeline.load(drainAggregate, drainStreamId(drainId))).state;
      if (drain.status !== 'ended') continue;
      await this.endOnNode(
        { drainId, nodeId: node.nodeId, at: drain.endedAt },
        {
          ...this.context(uuidFrom(drainId, 'end-node')),
          correlationId: drain.correlationId,
          causationId: drainId,
        },
      );
      this.logger.log(`drain ${drainId} had ended without its node ${node.nodeId}: ended there`);
    }
  }

  /**
   * Re-arms each running drain whose step job is gone (a Redis that lost its jobs while we
   * ran); runs every JOBS_REPAIR_SEC. A step armed twice is harmless: every step re-reads state.
   */
  async repair(): Promise<number> {
    const running = await findAll<DrainDoc & Doc>(this.readModels, DRAINS, { status: 'running' });
    if (running.length === 0) return 0;
    const live = await this.jobs.liveJobIds(DRAIN_STEP_QUEUE);
    const lost = running.filter((d) => !live.has(d.drainId));
    for (const d of lost) await this.schedule(d.drainId);
    if (lost.length > 0) this.logger.log(`re-armed ${lost.length} drain step(s) from state`);
    return lost.length;
  }

  private context(commandId: string, cause?: StoredEvent): CommandContext {
    return systemContext(commandId, { cause });
  }
}
