import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { poolAggregate, PoolCommand, PoolState } from './pool.decider';
import { PoolEvent, poolStreamId } from './pool.events';

/** Unlocks the pool (a no-op unless this operation holds it). */
export class EndPoolOperation extends Command<CommandResult<PoolEvent, PoolState>> {
  constructor(
    readonly poolId: string,
    readonly data: Data<PoolCommand, 'EndPoolOperation'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(EndPoolOperation)
export class EndPoolOperationHandler implements ICommandHandler<EndPoolOperation> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ poolId, data, ctx }: EndPoolOperation) {
    const command = { type: 'EndPoolOperation' as const, data };
    return this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
  }
}
