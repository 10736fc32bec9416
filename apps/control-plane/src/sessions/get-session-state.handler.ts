import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { Loaded } from '../platform/bus/messages';
import { sessionAggregate } from './session.decider';
import { SessionState, sessionStreamId } from './session.events';

/** The session as its stream has it now. */
export class GetSessionState extends Query<Loaded<SessionState>> {
  constructor(readonly sessionId: string) {
    super();
  }
}

@QueryHandler(GetSessionState)
export class GetSessionStateHandler implements IQueryHandler<GetSessionState> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ sessionId }: GetSessionState) {
    return this.pipeline.load(sessionAggregate, sessionStreamId(sessionId));
  }
}
