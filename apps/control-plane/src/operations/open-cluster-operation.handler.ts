import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { OpenClusterOperation } from '../clusters';
import { OperationsService } from './operations.service';

/** The clusters slice's create, upgrade and repair each open an operation that follows them. */
@CommandHandler(OpenClusterOperation)
export class OpenClusterOperationHandler implements ICommandHandler<OpenClusterOperation> {
  constructor(@Inject(OperationsService) private readonly operations: OperationsService) {}

  execute({ clusterId, operationType, reason, ctx }: OpenClusterOperation) {
    return this.operations.openCluster(clusterId, operationType, reason, ctx);
  }
}
