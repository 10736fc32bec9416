import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { GPU_MODELS, GpuModel } from '../config/config';
import { PageQuery } from '../platform/http/page-query.dto';

const OWNER = /^[A-Za-z0-9._@:-]{1,128}$/;

/** `{"kind":"gpu","gpuModel","gpuCount"}` or `{"kind":"cpu","cpu","memoryGiB"}`; the other kind's fields are refused. */
export class CreateSessionDto {
  @ApiProperty({ enum: ['gpu', 'cpu'] })
  @IsIn(['gpu', 'cpu'])
  kind!: 'gpu' | 'cpu';

  @ApiPropertyOptional({ enum: GPU_MODELS, description: 'GPU sessions only' })
  @ValidateIf((o: CreateSessionDto) => o.kind === 'gpu' || o.gpuModel !== undefined)
  @IsIn(GPU_MODELS)
  gpuModel?: GpuModel;

  @ApiPropertyOptional({ minimum: 1, maximum: 64, description: 'GPU sessions only' })
  @ValidateIf((o: CreateSessionDto) => o.kind === 'gpu' || o.gpuCount !== undefined)
  @IsInt()
  @Min(1)
  @Max(64)
  gpuCount?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1024, description: 'CPU sessions only: vCPUs' })
  @ValidateIf((o: CreateSessionDto) => o.kind === 'cpu' || o.cpu !== undefined)
  @IsInt()
  @Min(1)
  @Max(1024)
  cpu?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 16384, description: 'CPU sessions only' })
  @ValidateIf((o: CreateSessionDto) => o.kind === 'cpu' || o.memoryGiB !== undefined)
  @IsInt()
  @Min(1)
  @Max(16384)
  memoryGiB?: number;

  @ApiPropertyOptional({ description: 'Place only in this node pool' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  poolId?: string;

  @ApiPropertyOptional({ description: "Admin only: the session's owner (default: the caller)" })
  @IsOptional()
  @Matches(OWNER, { message: 'owner must be 1-128 characters of [A-Za-z0-9._@:-]' })
  owner?: string;
}

export class ListSessionsQuery extends PageQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @Matches(OWNER, { message: 'owner must be 1-128 characters of [A-Za-z0-9._@:-]' })
  owner?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(64)
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
