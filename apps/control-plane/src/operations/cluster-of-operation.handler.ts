import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { ClusterOfAnswer, ClusterOfOperation } from '../platform/auth/cluster-queries';
import { READ_MODELS } from '../platform/runtime/tokens';
import { OPERATIONS, OperationDoc } from './operations.projection';

/** For the cluster-role guard: an operation's cluster (none: admin and auditor only). */
@QueryHandler(ClusterOfOperation)
export class ClusterOfOperationHandler implements IQueryHandler<
  ClusterOfOperation,
  ClusterOfAnswer
> {
  constructor(@Inject(READ_MODELS) private readonly readModels: ReadModelStore) {}

  async execute({ operationId }: ClusterOfOperation): Promise<ClusterOfAnswer> {
    const doc = await this.readModels.get<OperationDoc & Doc>(OPERATIONS, operationId);
    return doc?.clusterId ?? null;
  }
}
