import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { NodeCommands } from './nodes.commands';

/** An admin marks a node unschedulable; cordoning a cordoned node changes nothing. */
export class CordonNode extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly reason: string | null,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(CordonNode)
export class CordonNodeHandler implements ICommandHandler<CordonNode> {
  constructor(@Inject(NodeCommands) private readonly nodes: NodeCommands) {}

  execute({ nodeId, reason, ctx }: CordonNode): Promise<void> {
    return this.nodes.execute(
      nodeId,
      { type: 'CordonNode', data: { reason, at: ctx.now.toISOString() } },
      ctx,
    );
  }
}
