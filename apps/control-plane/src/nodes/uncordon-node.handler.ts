import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { NodeCommands } from './nodes.commands';

/** An admin makes a cordoned node schedulable again; uncordoning any other changes nothing. */
export class UncordonNode extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(UncordonNode)
export class UncordonNodeHandler implements ICommandHandler<UncordonNode> {
  constructor(@Inject(NodeCommands) private readonly nodes: NodeCommands) {}

  execute({ nodeId, ctx }: UncordonNode): Promise<void> {
    return this.nodes.execute(
      nodeId,
      { type: 'UncordonNode', data: { at: ctx.now.toISOString() } },
      ctx,
    );
  }
}
