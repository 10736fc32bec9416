import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { CommandContext, DomainError, notFound } from '@fleet/kernel';
import { Doc, Filter, InvalidCursorError, ReadModelStore } from '@fleet/readmodels/port';
import { SessionDemand } from '../nodes';
import { Caller, isPrivileged, readsEveryOwner } from '../platform/auth/caller';
import { validationFailed } from '../platform/errors/error-envelope';
import { EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { EventStore } from '@fleet/eventstore/port';
import { PlacementService } from './placement.service';
import { POOL_ACCESS, PoolAccess } from './pool-access';
import { SessionCommand, sessionAggregate } from './session.decider';
import { SessionState, sessionStreamId } from './session.events';
import { CreateSessionDto, ListSessionsQuery, SessionView } from './sessions.dto';
import { SESSIONS, SessionDoc } from './sessions.projection';
import { sessionIdFor } from './step-ids';

export const SESSIONS_PROJECTION = 'projection:sessions';

const requestOf = (demand: SessionDemand, poolId: string | null): Record<string, unknown> =>
  demand.kind === 'gpu'
    ? { gpuModel: demand.gpuModel, gpuCount: demand.gpuCount, poolId }
    : { cpu: demand.cpu, memoryGiB: demand.memoryGiB, poolId };

export const viewOfDoc = (d: SessionDoc): SessionView => ({
  sessionId: d.sessionId,
  owner: d.owner,
  kind: d.kind,
  request: requestOf(d.demand, d.poolId),
  status: d.status,
  nodeId: d.nodeId,
  gpus: d.gpus,
  terminationReason: d.terminationReason,
  createdAt: d.createdAt,
});

export const viewOfState = (s: Exclude<SessionState, { status: 'absent' }>): SessionView => ({
  sessionId: s.sessionId,
  owner: s.owner,
  kind: s.demand.kind,
  request: requestOf(s.demand, s.poolId),
  status: s.status,
  // As the projection shows it: a session terminated while queued or paused held nothing.
  nodeId:
    s.status === 'running'
      ? s.placement.nodeId
      : s.status === 'terminated'
        ? (s.heldAtEnd?.nodeId ?? null)
        : null,
  gpus:
    s.status === 'running'
      ? [...s.placement.gpus]
      : s.status === 'terminated'
        ? [...(s.heldAtEnd?.gpus ?? [])]
        : [],
  terminationReason: s.status === 'terminated' ? s.reason : null,
  createdAt: s.requestedAt,
});

/** Users run their own sessions; admins run anyone's. Another user's session does not exist for you. */
@Injectable()
export class SessionsService {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(PlacementService) private readonly placement: PlacementService,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(POOL_ACCESS) private readonly pools: PoolAccess,
  ) {}

  async create(body: CreateSessionDto, caller: Caller, ctx: CommandContext): Promise<SessionView> {
    // `"owner": null` is no owner given, for every role: the session is the caller's.
    const owner = body.owner ?? caller.sub;
    if (owner !== caller.sub && !isPrivileged(caller)) {
      throw new DomainError(
        'forbidden',
        'only an admin may create a session for another owner',
        'forbidden',
      );
    }
    const demand: SessionDemand =
      body.kind === 'gpu'
        ? { kind: 'gpu', gpuModel: body.gpuModel!, gpuCount: body.gpuCount! }
        : { kind: 'cpu', cpu: body.cpu!, memoryGiB: body.memoryGiB! };
    const wrongKind = body.kind === 'gpu' ? ['cpu', 'memoryGiB'] : ['gpuModel', 'gpuCount'];
    const extra = wrongKind.filter(
      (f) => (body as unknown as Record<string, unknown>)[f] !== undefined,
    );
    if (extra.length) {
      throw validationFailed(
        extra.map((field) => ({ field, problems: [`not allowed for a ${body.kind} session`] })),
      );
    }
    const poolId = body.poolId ?? null;
    if (poolId !== null) await this.pools.admit({ poolId, owner, demand, use: 'create' });
    // The session id derives from the command id: a retried create (same Idempotency-Key) is the same session.
    const sessionId = sessionIdFor(ctx.commandId);
    const requested = await this.pipeline.handle(
      sessionAggregate,
      sessionStreamId(sessionId),
      {
        type: 'RequestSession',
        data: {
          sessionId,
          owner,
          demand,
          poolId,
          at: ctx.now.toISOString(),
        },
      },
      ctx,
    );
    return this.settled(await this.placement.tryPlace(sessionId, ctx, requested.state));
  }

  async command(
    sessionId: string,
    caller: Caller,
    ctx: CommandContext,
    make: (now: string) => SessionCommand,
  ): Promise<SessionView> {
    const before = await this.authorise(sessionId, caller);
    const command = make(ctx.now.toISOString());
    if (command.type === 'ResumeSession' && before.status === 'paused' && before.poolId !== null) {
      // Its pool may have been deleted while it was paused: queued there, it would wait forever.
      await this.pools.admit({
        poolId: before.poolId,
        owner: before.owner,
        demand: before.demand,
        use: 'resume',
      });
    }
    const result = await this.pipeline.handle(
      sessionAggregate,
      sessionStreamId(sessionId),
      command,
      ctx,
    );
    let state = result.state;
    if (
      result.appended &&
      (state.status === 'paused' || state.status === 'terminated') &&
      state.lastPlacement
    ) {
      // Release now so the queue can use the cards at once; the process reactor would do it too.
      await this.placement.release(state.lastPlacement.nodeId, sessionId, ctx);
    }
    if (state.status === 'queued') state = await this.placement.tryPlace(sessionId, ctx, state);
    return this.settled(state);
  }

  async get(sessionId: string, caller: Caller): Promise<SessionView> {
    await this.authorise(sessionId, caller, 'read');
    const doc = await this.readModels.get<SessionDoc & Doc>(SESSIONS, sessionId);
    if (doc) return viewOfDoc(doc);
    const { state } = await this.pipeline.load(sessionAggregate, sessionStreamId(sessionId));
    if (state.status === 'absent') throw notFound('session', sessionId);
    return viewOfState(state);
  }

  async list(
    query: ListSessionsQuery,
    caller: Caller,
  ): Promise<{ items: SessionView[]; nextCursor: string | null }> {
    const filter: Filter = {};
    if (!readsEveryOwner(caller)) {
      if (query.owner !== undefined && query.owner !== caller.sub) {
        throw new DomainError('forbidden', 'users list only their own sessions', 'forbidden');
      }
      filter.owner = caller.sub;
    } else if (query.owner) filter.owner = query.owner;
    if (query.nodeId) filter.nodeId = query.nodeId;
    if (query.status) filter.status = query.status;
    try {
      const page = await this.readModels.find<SessionDoc & Doc>(SESSIONS, filter, {
        sort: { createdAt: 1 },
        limit: query.limit ?? 100,
        cursor: query.cursor ?? null,
      });
      return { items: page.items.map(viewOfDoc), nextCursor: page.nextCursor };
    } catch (error) {
      if (error instanceof InvalidCursorError) {
        throw validationFailed([{ field: 'cursor', problems: ['is not a cursor of this query'] }]);
      }
      throw error;
    }
  }

  /**
   * The session as its stream has it, when the caller may act on it (`access`). Another
   * owner's session is 404 to a caller who may not read it (nothing said of its existence),
   * and 403 to one who may (an auditor who is also a user reads it, so "does not exist" to its
   * command would be false).
   */
  private async authorise(
    sessionId: string,
    caller: Caller,
    access: 'read' | 'command' = 'command',
  ): Promise<Exclude<SessionState, { status: 'absent' }>> {
    const { state } = await this.pipeline.load(sessionAggregate, sessionStreamId(sessionId));
    if (state.status === 'absent') throw notFound('session', sessionId);
    const all = access === 'read' ? readsEveryOwner(caller) : isPrivileged(caller);
    if (all || state.owner === caller.sub) return state;
    if (access === 'command' && readsEveryOwner(caller)) {
      throw new DomainError(
        'forbidden',
        `session ${sessionId} is another owner's: only its owner or an admin may change it`,
        'forbidden',
      );
    }
    throw notFound('session', sessionId);
  }

  /** The response shows the command's outcome, and a GET right after it sees the same (read your writes). */
  private async settled(state: SessionState): Promise<SessionView> {
    if (state.status === 'absent') throw new Error('a session command left no session');
    await this.runner.settle(await this.events.headPosition(), [SESSIONS_PROJECTION]);
    return viewOfState(state);
  }
}
