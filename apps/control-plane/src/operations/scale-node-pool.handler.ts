import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { OperationAccepted } from '../clusters';
import { OperationsService } from './operations.service';

/** An admin scales a pool to a size: an operation, refused while another runs on the pool. */
export class ScaleNodePool extends Command<OperationAccepted> {
  constructor(
    readonly poolId: string,
    readonly desiredSize: number,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(ScaleNodePool)
export class ScaleNodePoolHandler implements ICommandHandler<ScaleNodePool> {
  constructor(@Inject(OperationsService) private readonly operations: OperationsService) {}

  execute({ poolId, desiredSize, ctx }: ScaleNodePool): Promise<OperationAccepted> {
    return this.operations.scale(poolId, desiredSize, ctx);
  }
}
