import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { OperationAccepted } from '../clusters';
import { OperationsService } from './operations.service';

/** An admin deletes a pool: its nodes drained and removed, then the pool (not a cluster's last). */
export class DeleteNodePool extends Command<OperationAccepted> {
  constructor(
    readonly poolId: string,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(DeleteNodePool)
export class DeleteNodePoolHandler implements ICommandHandler<DeleteNodePool> {
  constructor(@Inject(OperationsService) private readonly operations: OperationsService) {}

  execute({ poolId, ctx }: DeleteNodePool): Promise<OperationAccepted> {
    return this.operations.delete(poolId, ctx);
  }
}
