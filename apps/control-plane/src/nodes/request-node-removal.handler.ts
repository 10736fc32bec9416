import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { CommandData as Data } from '../platform/bus/messages';
import { NodeCommand } from './node.decider';
import { NodeCommands } from './nodes.commands';

/** A pool operation's last check before the provisioner is asked to remove the node. */
export class RequestNodeRemoval extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly data: Data<NodeCommand, 'RequestNodeRemoval'>,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(RequestNodeRemoval)
export class RequestNodeRemovalHandler implements ICommandHandler<RequestNodeRemoval> {
  constructor(@Inject(NodeCommands) private readonly nodes: NodeCommands) {}

  execute({ nodeId, data, ctx }: RequestNodeRemoval) {
    return this.nodes.execute(nodeId, { type: 'RequestNodeRemoval', data }, ctx);
  }
}
