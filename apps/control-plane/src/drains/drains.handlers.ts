import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DrainNode } from './drains.messages';
import { DrainsService } from './drains.service';

@CommandHandler(DrainNode)
export class DrainNodeHandler implements ICommandHandler<DrainNode> {
  constructor(@Inject(DrainsService) private readonly drains: DrainsService) {}

  execute({ nodeId, mode, ctx, inPool }: DrainNode) {
    return this.drains.start(nodeId, mode, ctx, inPool);
  }
}

export const DRAIN_HANDLERS = [DrainNodeHandler];
