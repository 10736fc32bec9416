import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '../../../../libs/kernel/src';
import { DrainMode } from '../nodes/node.events';
import { DrainsService } from './drains.service';

/**
 * Cordons a node, then relocates (or force-terminates) its sessions; draining a draining node
 * answers the running drain's id. `inPool`: a pool operation's drain, refused once the node
 * has left that pool.
 */
export class DrainNode extends Command<string> {
  constructor(
    readonly nodeId: string,
    readonly mode: DrainMode,
    readonly ctx: CommandContext,
    readonly inPool?: string,
  ) {
    super();
  }
}

@CommandHandler(DrainNode)
export class DrainNodeHandler implements ICommandHandler<DrainNode> {
  constructor(@Inject(DrainsService) private readonly drains: DrainsService) {}

  /** The drain's id. */
  execute({ nodeId, mode, ctx, inPool }: DrainNode): Promise<string> {
    return this.drains.start(nodeId, mode, ctx, inPool);
  }
}
