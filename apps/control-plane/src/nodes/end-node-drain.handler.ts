import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { nodeAggregate } from './node.aggregate';
import { NodeCommand } from './node.decider';
import { NodeEvent, NodeState, nodeStreamId } from './node.events';

/** The node's side of a drain's end. */
export class EndNodeDrain extends Command<CommandResult<NodeEvent, NodeState>> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'EndNodeDrain'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(EndNodeDrain)
export class EndNodeDrainHandler implements ICommandHandler<EndNodeDrain> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ nodeId, data, ctx }: EndNodeDrain) {
    const command = { type: 'EndNodeDrain' as const, data };
    return this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
  }
}
