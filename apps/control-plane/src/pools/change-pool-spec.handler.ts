import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { poolAggregate, PoolCommand, PoolState } from './pool.decider';
import { PoolEvent, poolStreamId } from './pool.events';

/** A resize operation's last step: the pool's nodes have the new shape. */
export class ChangePoolSpec extends Command<CommandResult<PoolEvent, PoolState>> {
  constructor(
    readonly poolId: string,
    readonly data: Data<PoolCommand, 'ChangePoolSpec'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(ChangePoolSpec)
export class ChangePoolSpecHandler implements ICommandHandler<ChangePoolSpec> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ poolId, data, ctx }: ChangePoolSpec) {
    const command = { type: 'ChangePoolSpec' as const, data };
    return this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
  }
}
