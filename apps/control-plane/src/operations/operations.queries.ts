import { Inject, Injectable } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { notFound } from '@fleet/kernel';
import { Doc, Filter, InvalidCursorError, ReadModelStore } from '@fleet/readmodels/port';
import { validationFailed } from '../platform/errors/error-envelope';
import { CLUSTER_ID, CLUSTER_ID_RULE, UUID } from '../platform/http/ids';
import { PageQuery, QueryParams } from '../platform/http/page-query.dto';
import { READ_MODELS } from '../platform/runtime/tokens';
import { OPERATION_TYPES } from './operation.events';
import { OperationView, operationView } from './operation.view';
import { OPERATIONS, OperationDoc } from './operations.projection';

export const OPERATION_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'timeout'] as const;

@QueryParams()
export class ListOperationsQuery extends PageQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(CLUSTER_ID, { message: `clusterId ${CLUSTER_ID_RULE}` })
  clusterId?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(UUID, { message: 'poolId must be a pool id' })
  poolId?: string;

  @ApiPropertyOptional({ enum: OPERATION_TYPES })
  @IsOptional()
  @IsIn(OPERATION_TYPES)
  type?: string;

  @ApiPropertyOptional({ enum: OPERATION_STATUSES })
  @IsOptional()
  @IsIn(OPERATION_STATUSES)
  status?: string;
}

export class OperationStepDto {
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['running', 'succeeded', 'failed'] }) status!: string;
  @ApiProperty() at!: string;
  @ApiProperty() startedAt!: string;
  @ApiProperty({ type: String, nullable: true }) detail!: string | null;
}

/** GET /v1/operations/{id} and the list's items (operation.view.ts). */
export class OperationViewDto implements OperationView {
  @ApiProperty() operationId!: string;
  @ApiProperty({ enum: OPERATION_TYPES }) type!: string;
  @ApiProperty({ enum: OPERATION_STATUSES }) status!: string;
  @ApiProperty({ type: [OperationStepDto] }) steps!: OperationStepDto[];
  @ApiProperty({ type: String, nullable: true }) error!: string | null;
  @ApiProperty() clusterId!: string;
  @ApiProperty({ type: String, nullable: true }) poolId!: string | null;
  @ApiProperty({ type: Number, nullable: true }) fromSize!: number | null;
  @ApiProperty({ type: Number, nullable: true }) desiredSize!: number | null;
  @ApiProperty({ example: [{ nodeId: '…', hostname: 'l40s-a-1' }] })
  nodes!: Array<{ nodeId: string; hostname: string }>;
  @ApiProperty({ type: String, nullable: true }) reason!: string | null;
  @ApiProperty() createdAt!: string;
  @ApiProperty() deadlineAt!: string;
  @ApiProperty({ type: String, nullable: true }) endedAt!: string | null;
}

export class OperationPage {
  @ApiProperty({ type: [OperationViewDto], description: 'Operations, newest first' })
  items!: OperationView[];
  @ApiProperty({ type: String, nullable: true, description: 'The next page, or null' })
  nextCursor!: string | null;
}

/** The Operations screen: pages of the read model, newest first. */
@Injectable()
export class OperationsQueries {
  constructor(@Inject(READ_MODELS) private readonly readModels: ReadModelStore) {}

  async list(query: ListOperationsQuery): Promise<OperationPage> {
    const filter: Filter = {};
    if (query.poolId) filter.poolId = query.poolId;
    if (query.clusterId) filter.clusterId = query.clusterId;
    if (query.type) filter.operationType = query.type;
    if (query.status) filter.status = query.status;
    try {
      // Newest first; ties (one instant) by id, so a page boundary never splits or repeats.
      const page = await this.readModels.find<OperationDoc & Doc>(OPERATIONS, filter, {
        sort: { requestedAt: -1 },
        limit: query.limit ?? 100,
        cursor: query.cursor ?? null,
      });
      return { items: page.items.map(operationView), nextCursor: page.nextCursor };
    } catch (error) {
      if (error instanceof InvalidCursorError) {
        throw validationFailed([{ field: 'cursor', problems: ['is not a cursor of this query'] }]);
      }
      throw error;
    }
  }

  async get(operationId: string): Promise<OperationView> {
    const doc = await this.readModels.get<OperationDoc & Doc>(OPERATIONS, operationId);
    if (!doc) throw notFound('operation', operationId);
    return operationView(doc);
  }
}
