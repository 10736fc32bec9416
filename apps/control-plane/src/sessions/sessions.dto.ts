import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateBy,
  buildMessage,
  isIn,
  isInt,
  max,
  min,
} from 'class-validator';
import { GPU_MODELS, GpuModel } from '../catalog/catalog';
import { OWNER_FORMAT, OWNER_RULE } from '../platform/auth/caller';
import { UUID } from '../platform/http/ids';
import { PageQuery, QueryParams } from '../platform/http/page-query.dto';

/**
 * One check of a field of one kind of session, applied when the session is of that kind or the
 * field is given: what `@ValidateIf(o => o.kind === kind || o.field !== undefined)` over the
 * built-in check does (same constraint name, same message), as one plain synchronous constraint.
 * The HTTP layer's fast validation path compiles DTOs made of plain constraints only, so a
 * valid create skips class-transformer and class-validator (docs/PERFORMANCE.md).
 */
const ofKind = (
  kind: 'gpu' | 'cpu',
  name: string,
  test: (value: unknown) => boolean,
  message: string,
  constraints: unknown[] = [],
): PropertyDecorator =>
  ValidateBy({
    name,
    constraints,
    validator: {
      validate: (value, args) =>
        ((args?.object as { kind?: unknown } | undefined)?.kind !== kind && value === undefined) ||
        test(value),
      defaultMessage: buildMessage((each) => each + message),
    },
  });

const isIntOf = (kind: 'gpu' | 'cpu') =>
  ofKind(kind, 'isInt', (v) => isInt(v), '$property must be an integer number');
const minOf = (kind: 'gpu' | 'cpu', bound: number) =>
  ofKind(kind, 'min', (v) => min(v, bound), '$property must not be less than $constraint1', [
    bound,
  ]);
const maxOf = (kind: 'gpu' | 'cpu', bound: number) =>
  ofKind(kind, 'max', (v) => max(v, bound), '$property must not be greater than $constraint1', [
    bound,
  ]);

/** `{"kind":"gpu","gpuModel","gpuCount"}` or `{"kind":"cpu","cpu","memoryGiB"}`; the other kind's fields are refused. */
export class CreateSessionDto {
  @ApiProperty({ enum: ['gpu', 'cpu'] })
  @IsIn(['gpu', 'cpu'])
  kind!: 'gpu' | 'cpu';

  @ApiPropertyOptional({ enum: GPU_MODELS, description: 'GPU sessions only' })
  @ofKind(
    'gpu',
    'isIn',
    (v) => isIn(v, GPU_MODELS),
    '$property must be one of the following values: $constraint1',
    [GPU_MODELS],
  )
  gpuModel?: GpuModel;

  @ApiPropertyOptional({ minimum: 1, maximum: 64, description: 'GPU sessions only' })
  @isIntOf('gpu')
  @minOf('gpu', 1)
  @maxOf('gpu', 64)
  gpuCount?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1024, description: 'CPU sessions only: vCPUs' })
  @isIntOf('cpu')
  @minOf('cpu', 1)
  @maxOf('cpu', 1024)
  cpu?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 16384, description: 'CPU sessions only' })
  @isIntOf('cpu')
  @minOf('cpu', 1)
  @maxOf('cpu', 16384)
  memoryGiB?: number;

  @ApiPropertyOptional({
    description:
      'Place only in this node pool: an active pool of the kind (and GPU model) open to the owner',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(128)
  poolId?: string;

  @ApiPropertyOptional({
    description: "Admin only: the session's owner (default, and when null: the caller)",
  })
  @IsOptional()
  @IsString()
  @Matches(OWNER_FORMAT, { message: `owner ${OWNER_RULE}` })
  owner?: string;
}

@QueryParams()
export class ListSessionsQuery extends PageQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(OWNER_FORMAT, { message: `owner ${OWNER_RULE}` })
  owner?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(UUID, { message: 'nodeId must be a node id' })
  nodeId?: string;

  @ApiPropertyOptional({ enum: ['queued', 'running', 'paused', 'terminated'] })
  @IsOptional()
  @IsIn(['queued', 'running', 'paused', 'terminated'])
  status?: 'queued' | 'running' | 'paused' | 'terminated';
}

export class SessionView {
  @ApiProperty() sessionId!: string;
  @ApiProperty() owner!: string;
  @ApiProperty({ enum: ['gpu', 'cpu'] }) kind!: string;
  @ApiProperty({ example: { gpuModel: 'L40S', gpuCount: 2, poolId: null } }) request!: Record<
    string,
    unknown
  >;
  @ApiProperty({ enum: ['queued', 'running', 'paused', 'terminated'] }) status!: string;
  @ApiProperty({ nullable: true, type: String }) nodeId!: string | null;
  @ApiProperty({ type: [String] }) gpus!: string[];
  @ApiProperty({ nullable: true, enum: ['user', 'admin_force', 'drain_force', 'node_offline'] })
  terminationReason!: string | null;
  @ApiProperty() createdAt!: string;
}

export class SessionPage {
  @ApiProperty({ type: [SessionView] }) items!: SessionView[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}
