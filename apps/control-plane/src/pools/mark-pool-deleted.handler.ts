import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { poolAggregate, PoolCommand, PoolState } from './pool.decider';
import { PoolEvent, poolStreamId } from './pool.events';

/** A delete operation's last step. */
export class MarkPoolDeleted extends Command<CommandResult<PoolEvent, PoolState>> {
  constructor(
    readonly poolId: string,
    readonly data: Data<PoolCommand, 'MarkPoolDeleted'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(MarkPoolDeleted)
export class MarkPoolDeletedHandler implements ICommandHandler<MarkPoolDeleted> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ poolId, data, ctx }: MarkPoolDeleted) {
    const command = { type: 'MarkPoolDeleted' as const, data };
    return this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
  }
}
