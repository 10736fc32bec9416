import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { sessionAggregate, SessionCommand } from './session.decider';
import { SessionEvent, SessionState, sessionStreamId } from './session.events';

/** A paused session back into the queue (placed at once when something fits). */
export class ResumeSession extends Command<CommandResult<SessionEvent, SessionState>> {
  constructor(
    readonly sessionId: string,
    readonly data: Data<SessionCommand, 'ResumeSession'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(ResumeSession)
export class ResumeSessionHandler implements ICommandHandler<ResumeSession> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ sessionId, data, ctx }: ResumeSession) {
    const command = { type: 'ResumeSession' as const, data };
    return this.pipeline.handle(sessionAggregate, sessionStreamId(sessionId), command, ctx);
  }
}
