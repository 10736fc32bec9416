import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { nodeAggregate } from './node.aggregate';
import { NodeCommand } from './node.decider';
import { NodeEvent, NodeState, nodeStreamId } from './node.events';

/** The node lets go of a session's cards (a no-op once it holds none for it). */
export class ReleaseNodeCapacity extends Command<CommandResult<NodeEvent, NodeState>> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'ReleaseOnNode'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(ReleaseNodeCapacity)
export class ReleaseNodeCapacityHandler implements ICommandHandler<ReleaseNodeCapacity> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ nodeId, data, ctx }: ReleaseNodeCapacity) {
    const command = { type: 'ReleaseOnNode' as const, data };
    return this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
  }
}
