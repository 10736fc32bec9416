import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { sessionAggregate, SessionCommand } from './session.decider';
import { SessionEvent, SessionState, sessionStreamId } from './session.events';

/** A cold pause: the running segment closes, its node's cards are released by the reactor. */
export class PauseSession extends Command<CommandResult<SessionEvent, SessionState>> {
  constructor(
    readonly sessionId: string,
    readonly data: Data<SessionCommand, 'PauseSession'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(PauseSession)
export class PauseSessionHandler implements ICommandHandler<PauseSession> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ sessionId, data, ctx }: PauseSession) {
    const command = { type: 'PauseSession' as const, data };
    return this.pipeline.handle(sessionAggregate, sessionStreamId(sessionId), command, ctx);
  }
}
