import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline, CommandResult } from '@fleet/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { nodeAggregate } from './node.aggregate';
import { NodeCommand } from './node.decider';
import { NodeEvent, NodeState, nodeStreamId } from './node.events';

/** Placement, step 1: cards (or vCPUs) for a session, on the node's stream (one owner per card). */
export class AllocateOnNode extends Command<CommandResult<NodeEvent, NodeState>> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'AllocateOnNode'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(AllocateOnNode)
export class AllocateOnNodeHandler implements ICommandHandler<AllocateOnNode> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ nodeId, data, ctx }: AllocateOnNode) {
    const command = { type: 'AllocateOnNode' as const, data };
    return this.pipeline.handle(nodeAggregate, nodeStreamId(nodeId), command, ctx);
  }
}
