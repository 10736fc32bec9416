import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { KeepPoolWithinBounds } from '../pools';
import { AutoscalerService } from './autoscaler.service';

/** The pools slice's PATCH asks for its new bounds to hold at once. */
@CommandHandler(KeepPoolWithinBounds)
export class KeepPoolWithinBoundsHandler implements ICommandHandler<KeepPoolWithinBounds> {
  constructor(@Inject(AutoscalerService) private readonly autoscaler: AutoscalerService) {}

  execute({ poolId, ctx }: KeepPoolWithinBounds) {
    return this.autoscaler.enforceBounds(poolId, ctx);
  }
}
