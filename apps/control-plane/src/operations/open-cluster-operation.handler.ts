import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { OpenClusterOperation } from '../clusters';
import { ClusterOperationsService } from './cluster-operations.service';

/** The clusters slice's create, upgrade, repair and delete each open an operation that carries them out. */
@CommandHandler(OpenClusterOperation)
export class OpenClusterOperationHandler implements ICommandHandler<OpenClusterOperation> {
  constructor(
    @Inject(ClusterOperationsService) private readonly operations: ClusterOperationsService,
  ) {}

  execute({ clusterId, operationType, reason, ctx, pools }: OpenClusterOperation) {
    return this.operations.open(clusterId, operationType, reason, ctx, pools);
  }
}
