import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '../../../../libs/kernel/src';
import { NodeCommands } from './nodes.commands';

/** An admin removes an offline node from the fleet (refused for a node still online). */
export class DeleteNode extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(DeleteNode)
export class DeleteNodeHandler implements ICommandHandler<DeleteNode> {
  constructor(@Inject(NodeCommands) private readonly nodes: NodeCommands) {}

  execute({ nodeId, ctx }: DeleteNode): Promise<void> {
    return this.nodes.execute(
      nodeId,
      { type: 'DeleteNode', data: { at: ctx.now.toISOString() } },
      ctx,
    );
  }
}
