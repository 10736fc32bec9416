import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { nodeAggregate } from './node.aggregate';
import { NodeCommand } from './node.decider';
import { NodeEvent, NodeState, nodeStreamId } from './node.events';

/** Marks the node for a drain (cordoned first; one drain per node, the serialisation point). */
export class StartNodeDrain extends Command<CommandResult<NodeEvent, NodeState>> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'StartNodeDrain'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(StartNodeDrain)
export class StartNodeDrainHandler implements ICommandHandler<StartNodeDrain> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ nodeId, data, ctx }: StartNodeDrain) {
    const command = { type: 'StartNodeDrain' as const, data };
    return this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
  }
}
