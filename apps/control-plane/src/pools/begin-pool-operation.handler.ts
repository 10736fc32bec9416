import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { poolAggregate, PoolCommand, PoolState } from './pool.decider';
import { PoolEvent, poolStreamId } from './pool.events';

/** Locks the pool for a long operation: one at a time (`operation_in_progress`). */
export class BeginPoolOperation extends Command<CommandResult<PoolEvent, PoolState>> {
  constructor(
    readonly poolId: string,
    readonly data: Data<PoolCommand, 'BeginPoolOperation'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(BeginPoolOperation)
export class BeginPoolOperationHandler implements ICommandHandler<BeginPoolOperation> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ poolId, data, ctx }: BeginPoolOperation) {
    const command = { type: 'BeginPoolOperation' as const, data };
    return this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
  }
}
