import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandPipeline, SubscriptionRunner } from '../../../../libs/cqrs/src';
import {
  EventStore,
  LOG_START,
  LogPosition,
  StoredEvent,
  asLogPosition,
} from '../../../../libs/eventstore/src/port';
import { DelayedJobs, scheduleUnlessBusy } from '../../../../libs/jobs/src/port';
import { CommandContext, newId } from '../../../../libs/kernel/src';
import { Doc, ReadModelStore, findAll } from '../../../../libs/readmodels/src/port';
import { nodeCodec } from '../nodes/node.events';
import { NODES_PROJECTION } from '../nodes/nodes.commands';
import { poolCodec } from '../pools/pool.events';
import { DELAYED_JOBS, EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { PlacementService } from './placement.service';
import { POOL_ACCESS, PoolAccess } from './pool-access';
import { sessionAggregate } from './session.decider';
import { sessionCodec, sessionStreamId } from './session.events';
import { stepCommandId } from './step-ids';
import {
  SAFETY_TICK_MS,
  queueWorkflow,
  queuedByIn,
  queuedSessionContext,
  stillWaiting,
} from './session-queue.workflow';
import { QueuedBy, SESSIONS, SessionDoc } from './sessions.projection';
import { SESSIONS_PROJECTION } from './sessions.service';

export const QUEUE_TICK = 'session-queue-tick';
const TICK_JOB = 'tick';
const SAFETY_JOB = `${TICK_JOB}-safety`;

/** Node events after which a waiting session may fit. */
export { SAFETY_TICK_MS };

const FREES_CAPACITY = new Set([
  'NodeCapacityReleased',
  'NodeUncordoned',
  'NodeCameOnline',
  'NodeRegistered',
  'NodeGpusChanged',
  'NodeInventoryChanged',
  'NodeAssignedToPool',
  'NodeDrainEnded',
]);

/** A pass asked for by an event: the read models it reads must show that event first. */
type TickJob = { position?: number };

/**
 * The resumption queue. Event-driven (capacity freed → a tick job due now, one id so a burst
 * is one tick) with a periodic tick as the safety net. Order: sessions displaced by a drain
 * first, then by queue time; a head that fits nowhere does not block others that fit.
 */
@Injectable()
export class SessionQueueService {
  private readonly logger = new Logger('session-queue');
  private ticking: Promise<number> | null = null;

  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(PlacementService) private readonly placement: PlacementService,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(POOL_ACCESS) private readonly pools: PoolAccess,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(EVENT_STORE) private readonly events: EventStore,
  ) {}

  register(): void {
    this.jobs.register<TickJob>(
      QUEUE_TICK,
      (job) => this.tickAndRearm(asLogPosition(job.position ?? 0)),
      {
        attempts: 5,
        backoffMs: 100,
        concurrency: 1,
      },
    );
  }

  async react(stored: StoredEvent): Promise<void> {
    const node = stored.streamId.startsWith('node-')
      ? nodeCodec.decode(stored.type, stored.data)
      : null;
    const session = stored.streamId.startsWith('session-')
      ? sessionCodec.decode(stored.type, stored.data)
      : null;
    if (session?.type === 'SessionRequested') {
      // The create request placing it in this process leaves it queued only when nothing fits,
      // which a pass would find too: a pass now is needed only if that placement fails. Left
      // queued, the safety pass is armed: a node may become usable without an event (one
      // silent for half a window reporting again). (After a crash nothing is in flight, and
      // the pass at start finds the session anyway.)
      const placing = this.placement.pending(session.data.sessionId);
      if (placing)
        void placing
          .then(
            (state) => (state.status === 'queued' ? this.armSafetyPass() : undefined),
            () => this.kick(stored.position),
          )
          .catch(() => undefined);
      else await this.kick(stored.position);
      return;
    }
    const pool = stored.streamId.startsWith('pool-')
      ? poolCodec.decode(stored.type, stored.data)
      : null;
    if (
      (node && FREES_CAPACITY.has(node.type)) ||
      session?.type === 'SessionResumeRequested' ||
      pool?.type === 'NodePoolDeleted' // its pinned sessions are ended by the pass
    ) {
      await this.kick(stored.position);
    }
  }

  /**
   * A pass soon, once the read models show the event at `position` (the one that freed
   * capacity). One job id: a later kick replaces the payload with its later position. When its
   * run cannot be put in place, a pass is coming anyway (each re-reads the queue).
   */
  async kick(position: LogPosition = LOG_START): Promise<void> {
    await scheduleUnlessBusy<TickJob>(this.jobs, QUEUE_TICK, TICK_JOB, Date.now(), { position });
  }

  private async tickAndRearm(position: LogPosition): Promise<void> {
    // Placement reads the Nodes read model and the pass the Sessions one; the job may run before
    // they apply the event that kicked it, and the pass would miss the capacity it freed until
    // the safety pass. Bounded: on a timeout the pass runs anyway (the safety pass follows).
    await this.runner.settle(position, [NODES_PROJECTION, SESSIONS_PROJECTION]);
    const waiting = await this.tick();
    if (waiting > 0)
      await this.jobs.schedule(QUEUE_TICK, SAFETY_JOB, Date.now() + SAFETY_TICK_MS, {});
  }

  /**
   * A pass within SAFETY_TICK_MS, unless one is already due sooner (scheduling moves a job: a
   * stream of queued creates would otherwise keep pushing the pass away).
   */
  private async armSafetyPass(): Promise<void> {
    const due = Date.now() + SAFETY_TICK_MS;
    const at = await this.jobs.scheduledAt(QUEUE_TICK, SAFETY_JOB);
    if (at !== null && at <= due) return;
    await scheduleUnlessBusy(this.jobs, QUEUE_TICK, SAFETY_JOB, due, {});
  }

  /**
   * Jobs are hints: with sessions waiting and no pass to come (Redis lost it, or was down when
   * one was asked for), the safety pass is armed. Runs every JOBS_REPAIR_SEC.
   */
  async repair(): Promise<void> {
    if ((await this.readModels.count(SESSIONS, { status: 'queued' })) === 0) return;
    if ((await this.jobs.liveJobIds(QUEUE_TICK)).size > 0) return;
    await this.armSafetyPass();
  }

  /** One pass over the queue; returns how many still wait. Passes never overlap in this process. */
  tick(): Promise<number> {
    if (this.ticking) return this.ticking.then(() => this.tick());
    this.ticking = this.pass().finally(() => (this.ticking = null));
    return this.ticking;
  }

  private async pass(): Promise<number> {
    const queued = await this.queued();
    const passId = newId();
    const now = new Date();
    let pass = queueWorkflow.evolve(queueWorkflow.initialState(), {
      type: 'PassStarted',
      data: { passId, at: now.toISOString() },
    });
    const poolGone = new Map<string, Promise<boolean>>();
    const contextFor = async (s: SessionDoc) =>
      queuedSessionContext(passId, s.sessionId, await this.queuedBy(s), now);
    for (const s of queued) {
      let gone = false;
      if (s.poolId !== null) {
        const known = poolGone.get(s.poolId) ?? this.pools.gone(s.poolId);
        poolGone.set(s.poolId, known);
        gone = await known;
      }
      const reached = { type: 'SessionReached' as const, data: { session: s, poolGone: gone } };
      const [next] = queueWorkflow.decide(reached, pass);
      pass = queueWorkflow.evolve(pass, reached);
      if (next?.type === 'EndPinnedSession') {
        await this.endPinnedToGonePool(s.sessionId, await contextFor(s));
        pass = queueWorkflow.evolve(pass, {
          type: 'PinnedSessionEnded',
          data: { sessionId: s.sessionId },
        });
      } else if (next?.type === 'TryPlacement') {
        const state = await this.placement.tryPlace(s.sessionId, await contextFor(s));
        pass = queueWorkflow.evolve(pass, {
          type: 'PlacementTried',
          data: { session: s, placed: state.status !== 'queued' },
        });
      }
    }
    const waiting = stillWaiting(pass);
    if (queued.length > 0)
      this.logger.debug(`queue pass: ${queued.length - waiting} placed, ${waiting} waiting`);
    return waiting;
  }

  /**
   * A session pinned to a deleted pool can never run (no node joins a deleted pool): it is
   * terminated as by an admin (`admin_force`: deleting the pool was the admin's act). Queued,
   * it holds no cards and no bill is open; one running when the pool went was paused by the
   * pool's drain, which closed its bill.
   */
  private async endPinnedToGonePool(sessionId: string, ctx: CommandContext): Promise<void> {
    await this.pipeline.handle(
      sessionAggregate,
      sessionStreamId(sessionId),
      { type: 'TerminateSession', data: { reason: 'admin_force', at: ctx.now.toISOString() } },
      { ...ctx, commandId: stepCommandId(ctx.commandId, 'pool-gone') },
    );
    this.logger.log(`session ${sessionId} ended: its pool was deleted`);
  }

  /** From the document; one projected before it kept the event (MongoDB until a rebuild): the log. */
  private async queuedBy(s: SessionDoc): Promise<QueuedBy | null> {
    if (s.queuedBy !== undefined) return s.queuedBy;
    return queuedByIn(await this.events.readStream(sessionStreamId(s.sessionId)));
  }

  private queued(): Promise<SessionDoc[]> {
    return findAll<SessionDoc & Doc>(
      this.readModels,
      SESSIONS,
      { status: 'queued' },
      { queueRank: 1, queuedAt: 1 },
    );
  }
}
