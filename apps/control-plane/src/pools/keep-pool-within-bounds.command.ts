import { Command } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';

/**
 * After an edit of a pool's autoscaling: a pool now below its min scales out to it, one above
 * its max scales in to it, at once (not at the autoscaler's next tick). Handled by the
 * operations slice, which sits above this one; answers the scale operation it opened, or null
 * (within its bounds, autoscaling off, or another operation running: the autoscaler's next
 * tick decides again once it ends).
 */
export class KeepPoolWithinBounds extends Command<{ operationId: string } | null> {
  constructor(
    readonly poolId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}
