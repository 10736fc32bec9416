import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { sessionAggregate, SessionCommand } from './session.decider';
import { SessionEvent, SessionState, sessionStreamId } from './session.events';

export class TerminateSession extends Command<CommandResult<SessionEvent, SessionState>> {
  constructor(
    readonly sessionId: string,
    readonly data: Data<SessionCommand, 'TerminateSession'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(TerminateSession)
export class TerminateSessionHandler implements ICommandHandler<TerminateSession> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ sessionId, data, ctx }: TerminateSession) {
    const command = { type: 'TerminateSession' as const, data };
    return this.pipeline.handle(sessionAggregate, sessionStreamId(sessionId), command, ctx);
  }
}
