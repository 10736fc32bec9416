import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { NodeCommand } from './node.decider';
import { NodeCommands } from './nodes.commands';

/** Records the node's pool (or none: `poolId` null); the pools slice checks the pool first. */
export class SetNodePool extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'AssignNodeToPool'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(SetNodePool)
export class SetNodePoolHandler implements ICommandHandler<SetNodePool> {
  constructor(@Inject(NodeCommands) private readonly nodes: NodeCommands) {}

  execute({ nodeId, data, ctx }: SetNodePool) {
    return this.nodes.execute(nodeId, { type: 'AssignNodeToPool', data }, ctx);
  }
}
