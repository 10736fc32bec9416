import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { OperationAccepted } from '../clusters';
import { OperationsService } from './operations.service';

/** An admin rolls a pool's nodes onto a new vCPU / memory shape, one node at a time. */
export class ResizeNodePool extends Command<OperationAccepted> {
  constructor(
    readonly poolId: string,
    readonly shape: { readonly cpu?: number; readonly memoryGiB?: number },
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(ResizeNodePool)
export class ResizeNodePoolHandler implements ICommandHandler<ResizeNodePool> {
  constructor(@Inject(OperationsService) private readonly operations: OperationsService) {}

  execute({ poolId, shape, ctx }: ResizeNodePool): Promise<OperationAccepted> {
    return this.operations.resize(poolId, shape, ctx);
  }
}
