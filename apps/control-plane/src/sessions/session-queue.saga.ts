import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  Carriers,
  CommandPipeline,
  SubscriptionRunner,
  WorkflowRunner,
  scheduleTimer,
  sendCommand,
} from '@fleet/cqrs';
import { EventStore, LOG_START, StoredEvent, asLogPosition } from '@fleet/eventstore/port';
import { DelayedJobs, scheduleUnlessBusy } from '@fleet/jobs/port';
import { Clock, CommandContext, EventCodec, Message, newId } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { nodeCodec, NODES_PROJECTION } from '../nodes';
import { poolCodec } from '../pools';
import { CLOCK, DELAYED_JOBS, EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { PlacementService } from './placement.service';
import { POOL_ACCESS, PoolAccess } from './pool-access';
import {
  CreatePlacementOutcome,
  QUEUE_ORDER,
  QueueInput,
  QueueOutput,
  QueueState,
  QueuedSession,
  queueWorkflow,
  queuedByIn,
  queuedSessionContext,
  stillWaiting,
} from './session-queue.workflow';
import { sessionAggregate } from './session.decider';
import { sessionCodec, sessionStreamId } from './session.events';
import { stepCommandId } from './step-ids';
import { QueuedBy, SESSIONS, SessionDoc } from './sessions.projection';
import { SESSIONS_PROJECTION } from './sessions.service';

export const QUEUE_TICK = 'session-queue-tick';
const TICK_JOB = 'tick';
const SAFETY_JOB = `${TICK_JOB}-safety`;

/** A pass asked for by an event: the read models it reads must show that event first. */
type TickJob = { position?: number };

/** The runner's instances; runs of one never overlap in this process. */
const EVENTS = 'queue-events';
/** A pass job's run, the pass inside it: passes never overlap. */
const TICK = 'queue-tick';
/** The pass's steps, one waiting session at a time. */
const PASS = 'queue-pass';

/** The streams whose events the queue reads, by category (the stream id's prefix). */
const CODECS: Readonly<Record<string, EventCodec<Message>>> = {
  node: nodeCodec as unknown as EventCodec<Message>,
  session: sessionCodec as unknown as EventCodec<Message>,
  pool: poolCodec as unknown as EventCodec<Message>,
};

const iso = (now: Date): string => now.toISOString();

/**
 * The resumption queue (session-queue.workflow.ts decides) on the workflow runner:
 * event-driven (capacity freed → a tick job due now, one id so a burst is one tick) with a
 * periodic tick as the safety net. It reads the queue, the pools and the jobs, and carries
 * out the workflow's outputs: jobs, placements, terminations.
 */
@Injectable()
export class SessionQueueSaga {
  private readonly logger = new Logger('session-queue');
  private readonly runner: WorkflowRunner<QueueInput, QueueOutput, QueueState>;
  /** The pass in progress, as folded from its inputs and what came of its outputs. */
  private pass: QueueState = queueWorkflow.initialState();

  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(PlacementService) private readonly placement: PlacementService,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(POOL_ACCESS) private readonly pools: PoolAccess,
    @Inject(SubscriptionRunner) private readonly subscriptions: SubscriptionRunner,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.runner = new WorkflowRunner({
      workflow: queueWorkflow,
      load: async () => this.pass,
      carriers: this.carriers(),
      clock,
    });
  }

  register(): void {
    this.jobs.register<TickJob>(QUEUE_TICK, (job) => this.tick(job.position ?? LOG_START), {
      attempts: 5,
      backoffMs: 100,
      concurrency: 1,
    });
  }

  async react(stored: StoredEvent): Promise<void> {
    const category = stored.streamId.slice(0, stored.streamId.indexOf('-'));
    const event = CODECS[category]?.decode(stored.type, stored.data);
    if (!event) return;
    const position = stored.position;
    if (event.type === 'SessionRequested') {
      const { sessionId } = event.data as { sessionId: string };
      await this.runner.run(sessionId, (now) => ({
        type: 'SessionRequestRecorded',
        data: {
          sessionId,
          position,
          placingHere: this.placement.pending(sessionId) !== undefined,
          at: iso(now),
        },
      }));
      return;
    }
    await this.runner.run(EVENTS, (now) => ({
      type: 'EventRecorded',
      data: { category, eventType: event.type, position, at: iso(now) },
    }));
  }

  /** A pass soon, with no event to wait for (the start: sessions left queued by a crash). */
  async kick(): Promise<void> {
    await this.runner.run(EVENTS, (now) => ({
      type: 'PassRequested',
      data: { position: LOG_START, at: iso(now) },
    }));
  }

  /**
   * Jobs are hints: the safety pass is armed when sessions wait and no pass is to come. Runs
   * every JOBS_REPAIR_SEC; the job queue is asked only when something waits.
   */
  async repair(): Promise<void> {
    const queued = await this.readModels.count(SESSIONS, { status: 'queued' });
    const passPending = queued > 0 && (await this.jobs.liveJobIds(QUEUE_TICK)).size > 0;
    await this.runner.run(EVENTS, (now) => ({
      type: 'RepairDue',
      data: { queued, passPending, at: iso(now) },
    }));
  }

  /** A pass job: the read models catch up with the event that asked for it, then the pass. */
  async tick(position: number = LOG_START): Promise<void> {
    await this.runner.run(TICK, { type: 'TickFired', data: { position } });
  }

  private carriers(): Carriers<QueueInput, QueueOutput, QueueState> {
    return {
      SchedulePass: scheduleTimer(
        this.jobs,
        QUEUE_TICK,
        ({ data: { position, runAt } }) => ({ jobId: TICK_JOB, runAt, payload: { position } }),
        () => undefined, // its run could not be put in place: a pass is coming anyway
      ),
      ArmSafetyPass: ({ data: { dueAt } }) => this.armSafetyPass(dueAt),
      ScheduleSafetyPass: scheduleTimer(this.jobs, QUEUE_TICK, ({ data: { runAt } }) => ({
        jobId: SAFETY_JOB,
        runAt,
        payload: {},
      })),
      AwaitCreatePlacement: async ({ data: { sessionId, position } }) =>
        this.awaitCreatePlacement(sessionId, position),
      // Bounded: on a timeout the pass runs anyway (the safety pass follows).
      CatchUpReadModels: ({ data: { position } }) =>
        this.subscriptions.settle(asLogPosition(position), [NODES_PROJECTION, SESSIONS_PROJECTION]),
      PassOverQueue: () => this.passOverQueue(),
      TryPlacement: async ({ data: { session, passId, at } }) => {
        const ctx = await this.contextFor(session, passId, at);
        const state = await this.placement.tryPlace(session.sessionId, ctx);
        this.record({
          type: 'PlacementTried',
          data: { session, placed: state.status !== 'queued' },
        });
      },
      EndPinnedSession: sendCommand(
        this.pipeline,
        sessionAggregate,
        async ({ data: { session, passId, at, command } }) => {
          const ctx = await this.contextFor(session, passId, at);
          const context = { ...ctx, commandId: stepCommandId(ctx.commandId, 'pool-gone') };
          return { streamId: sessionStreamId(session.sessionId), command, context };
        },
        (_result, { data: { session } }) => {
          this.logger.log(`session ${session.sessionId} ended: its pool was deleted`);
          this.record({ type: 'PinnedSessionEnded', data: { sessionId: session.sessionId } });
        },
      ),
    };
  }

  /** The safety pass by `dueAt`, unless one is due sooner (a stream of creates must not keep pushing it away). */
  private async armSafetyPass(dueAt: number): Promise<void> {
    const at = await this.jobs.scheduledAt(QUEUE_TICK, SAFETY_JOB);
    if (at !== null && at <= dueAt) return;
    await scheduleUnlessBusy(this.jobs, QUEUE_TICK, SAFETY_JOB, dueAt, {});
  }

  /** In the background: the reactor goes on while the create request places the session. */
  private awaitCreatePlacement(sessionId: string, position: number): void {
    const placing = this.placement.pending(sessionId);
    const outcome: Promise<CreatePlacementOutcome> = placing
      ? placing.then(
          (state) => (state.status === 'queued' ? 'queued' : 'placed'),
          () => 'failed',
        )
      : Promise.resolve('unknown');
    void outcome
      .then((settled) =>
        this.runner.run(sessionId, (now) => ({
          type: 'CreatePlacementSettled',
          data: { sessionId, position, outcome: settled, at: iso(now) },
        })),
      )
      .catch(() => undefined);
  }

  /** One pass over the queue, in its order; the workflow decides each session's step. */
  private async passOverQueue(): Promise<void> {
    const queued = await findAll<SessionDoc & Doc>(
      this.readModels,
      SESSIONS,
      { status: 'queued' },
      QUEUE_ORDER,
    );
    await this.step({ type: 'PassStarted', data: { passId: newId(), at: iso(this.clock.now()) } });
    const poolGone = new Map<string, Promise<boolean>>();
    for (const session of queued) {
      let gone = false;
      if (session.poolId !== null) {
        const known = poolGone.get(session.poolId) ?? this.pools.gone(session.poolId);
        poolGone.set(session.poolId, known);
        gone = await known;
      }
      await this.step({ type: 'SessionReached', data: { session, poolGone: gone } });
    }
    const waiting = stillWaiting(this.pass);
    if (queued.length > 0)
      this.logger.debug(`queue pass: ${queued.length - waiting} placed, ${waiting} waiting`);
    await this.step({ type: 'PassEnded', data: { at: iso(this.clock.now()) } });
  }

  /** A step of the pass: decided on the pass so far and carried out, then folded into it. */
  private async step(input: QueueInput): Promise<void> {
    await this.runner.run(PASS, input);
    this.record(input);
  }

  private record(input: QueueInput): void {
    this.pass = queueWorkflow.evolve(this.pass, input);
  }

  private async contextFor(
    session: QueuedSession,
    passId: string,
    at: string,
  ): Promise<CommandContext> {
    return queuedSessionContext(
      passId,
      session.sessionId,
      await this.queuedBy(session),
      new Date(at),
    );
  }

  /** From the document; one projected before it kept the event (MongoDB until a rebuild): the log. */
  private async queuedBy(s: QueuedSession): Promise<QueuedBy | null> {
    if (s.queuedBy !== undefined) return s.queuedBy;
    return queuedByIn(await this.events.readStream(sessionStreamId(s.sessionId)));
  }
}
