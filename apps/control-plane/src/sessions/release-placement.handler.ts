import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { PlacementService } from './placement.service';

/** The node lets go of what it holds for the session (placement's compensation step). */
export class ReleasePlacement extends Command<void> {
  constructor(
    readonly nodeId: string,
    readonly sessionId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(ReleasePlacement)
export class ReleasePlacementHandler implements ICommandHandler<ReleasePlacement> {
  constructor(@Inject(PlacementService) private readonly placement: PlacementService) {}

  execute({ nodeId, sessionId, ctx }: ReleasePlacement) {
    return this.placement.release(nodeId, sessionId, ctx);
  }
}
