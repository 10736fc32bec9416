import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import type { DrainMode } from '../nodes';
import { DrainsService } from './drains.service';

/**
 * Drains a node: marks it (cordoned first; one drain per node), opens the drain and kicks its
 * first step; answers the drain's id (the running drain's, for a node draining already).
 * `inPool`: a pool operation's drain, refused (`node_in_use`) once the node left that pool.
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

  execute({ nodeId, mode, ctx, inPool }: DrainNode) {
    return this.drains.start(nodeId, mode, ctx, inPool);
  }
}
