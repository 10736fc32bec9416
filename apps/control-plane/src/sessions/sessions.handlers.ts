import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../../libs/cqrs/src';
import { PlacementService } from './placement.service';
import { sessionAggregate } from './session.decider';
import { sessionStreamId } from './session.events';
import {
  GetSessionState,
  PauseSession,
  ReleasePlacement,
  ResumeSession,
  TerminateSession,
  TryPlaceSession,
} from './sessions.messages';

/** Each runs the one command path on the session's stream: load, decide, append. */
abstract class OnSession {
  constructor(@Inject(CommandPipeline) protected readonly pipeline: CommandPipeline) {}
}

@CommandHandler(PauseSession)
export class PauseSessionHandler extends OnSession implements ICommandHandler<PauseSession> {
  execute({ sessionId, data, ctx }: PauseSession) {
    const command = { type: 'PauseSession' as const, data };
    return this.pipeline.handle(sessionAggregate, sessionStreamId(sessionId), command, ctx);
  }
}

@CommandHandler(ResumeSession)
export class ResumeSessionHandler extends OnSession implements ICommandHandler<ResumeSession> {
  execute({ sessionId, data, ctx }: ResumeSession) {
    const command = { type: 'ResumeSession' as const, data };
    return this.pipeline.handle(sessionAggregate, sessionStreamId(sessionId), command, ctx);
  }
}

@CommandHandler(TerminateSession)
export class TerminateSessionHandler
  extends OnSession
  implements ICommandHandler<TerminateSession>
{
  execute({ sessionId, data, ctx }: TerminateSession) {
    const command = { type: 'TerminateSession' as const, data };
    return this.pipeline.handle(sessionAggregate, sessionStreamId(sessionId), command, ctx);
  }
}

@QueryHandler(GetSessionState)
export class GetSessionStateHandler extends OnSession implements IQueryHandler<GetSessionState> {
  execute({ sessionId }: GetSessionState) {
    return this.pipeline.load(sessionAggregate, sessionStreamId(sessionId));
  }
}

/** Placement's steps, with its per-process bookkeeping (placements in flight, claimed cards). */
abstract class ByPlacement {
  constructor(@Inject(PlacementService) protected readonly placement: PlacementService) {}
}

@CommandHandler(TryPlaceSession)
export class TryPlaceSessionHandler
  extends ByPlacement
  implements ICommandHandler<TryPlaceSession>
{
  execute({ sessionId, ctx }: TryPlaceSession) {
    return this.placement.tryPlace(sessionId, ctx);
  }
}

@CommandHandler(ReleasePlacement)
export class ReleasePlacementHandler
  extends ByPlacement
  implements ICommandHandler<ReleasePlacement>
{
  execute({ nodeId, sessionId, ctx }: ReleasePlacement) {
    return this.placement.release(nodeId, sessionId, ctx);
  }
}

export const SESSION_HANDLERS = [
  PauseSessionHandler,
  ResumeSessionHandler,
  TerminateSessionHandler,
  GetSessionStateHandler,
  TryPlaceSessionHandler,
  ReleasePlacementHandler,
];
