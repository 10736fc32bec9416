import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { NodeCommands } from './nodes.commands';

/**
 * Deletes an offline node that holds no sessions (`node_busy` otherwise), at `at` (the
 * command's time unless its sender decided another).
 */
export class DeleteNode extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly ctx: CommandContext,
    readonly at: string = ctx.now.toISOString(),
  ) {
    super();
  }
}

@CommandHandler(DeleteNode)
export class DeleteNodeHandler implements ICommandHandler<DeleteNode> {
  constructor(@Inject(NodeCommands) private readonly nodes: NodeCommands) {}

  execute({ nodeId, ctx, at }: DeleteNode) {
    return this.nodes.execute(nodeId, { type: 'DeleteNode', data: { at } }, ctx);
  }
}
