import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { PlacementService } from './placement.service';
import { SessionState } from './session.events';

/**
 * Tries to place a queued session now (placement's steps: allocate on a node, start the
 * session there); answers its state afterwards, running or still queued.
 */
export class TryPlaceSession extends Command<SessionState> {
  constructor(
    readonly sessionId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(TryPlaceSession)
export class TryPlaceSessionHandler implements ICommandHandler<TryPlaceSession> {
  constructor(@Inject(PlacementService) private readonly placement: PlacementService) {}

  execute({ sessionId, ctx }: TryPlaceSession) {
    return this.placement.tryPlace(sessionId, ctx);
  }
}
