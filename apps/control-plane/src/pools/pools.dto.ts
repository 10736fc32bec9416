import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { GPU_MODELS, GpuModel } from '../catalog/catalog';
import { OWNER_FORMAT, OWNER_RULE } from '../platform/auth/caller';
import { UUID } from '../platform/http/ids';
import { NestedDto } from '../platform/http/nested';

export class PoolAccessDto {
  @ApiProperty({ type: [String], description: 'Owners allowed to place sessions; empty = open' })
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @Matches(OWNER_FORMAT, { each: true, message: `each tenant ${OWNER_RULE}` })
  tenants!: string[];
}

export class AutoscalingDto {
  @ApiProperty({ minimum: 0, maximum: 1000 })
  @IsInt()
  @Min(0)
  @Max(1000)
  min!: number;

  @ApiProperty({ minimum: 0, maximum: 1000 })
  @IsInt()
  @Min(0)
  @Max(1000)
  max!: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 86400,
    default: 60,
    description: 'Scale out once fitting sessions have been queued this long',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86400)
  queueWaitSec?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 86400,
    default: 600,
    description: 'Scale in nodes idle this long',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86400)
  idleCooldownSec?: number;
}

export class CreateNodePoolDto {
  @ApiProperty({
    example: 'l40s-a',
    description:
      'unique in its cluster; 1-40 characters of [a-z0-9-], starting and ending with a letter or digit',
  })
  @IsString()
  @Matches(/^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/, {
    message:
      'name must be 1-40 characters of [a-z0-9-], starting and ending with a letter or digit',
  })
  name!: string;

  @ApiProperty({ enum: ['gpu', 'cpu'] })
  @IsIn(['gpu', 'cpu'])
  kind!: 'gpu' | 'cpu';

  @ApiPropertyOptional({
    enum: GPU_MODELS,
    description:
      'GPU pools only: L40S 16 vCPU/64 GiB, HPC_GPU 32/128, MIG_1g 4/16, MIG_2g 8/32, MIG_3g 12/48',
  })
  @ValidateIf((o: CreateNodePoolDto) => o.kind === 'gpu' || o.gpuType !== undefined)
  @IsIn(GPU_MODELS)
  gpuType?: GpuModel;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 16,
    default: 1,
    description: 'GPU pools: cards per node',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(16)
  gpusPerNode?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 1024,
    description: 'CPU pools: vCPUs per node (default 16)',
  })
  @ValidateIf((o: CreateNodePoolDto) => o.cpu !== undefined)
  @IsInt()
  @Min(1)
  @Max(1024)
  cpu?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 16384,
    description: 'CPU pools: GiB per node (default 64)',
  })
  @ValidateIf((o: CreateNodePoolDto) => o.memoryGiB !== undefined)
  @IsInt()
  @Min(1)
  @Max(16384)
  memoryGiB?: number;

  @ApiPropertyOptional({ enum: ['shared', 'dedicated'], default: 'shared' })
  @IsOptional()
  @IsIn(['shared', 'dedicated'])
  mode?: 'shared' | 'dedicated';

  @ApiPropertyOptional({ type: PoolAccessDto })
  @IsOptional()
  @IsDefined()
  @NestedDto(() => PoolAccessDto)
  access?: PoolAccessDto;

  @ApiPropertyOptional({ type: AutoscalingDto })
  @IsOptional()
  @NestedDto(() => AutoscalingDto)
  autoscaling?: AutoscalingDto;
}

export class AssignPoolDto {
  @ApiProperty({ type: String, nullable: true, description: 'A pool id, or null: out of its pool' })
  @ValidateIf((o: AssignPoolDto) => o.poolId !== null)
  @IsString()
  @Matches(UUID, { message: 'poolId must be a pool id or null' })
  poolId!: string | null;
}

export class EditAutoscalingDto {
  @ApiPropertyOptional({ description: 'Off keeps the bounds; absent: as it is (on for a new one)' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ minimum: 0, maximum: 1000, description: 'Required if the pool has none' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1000)
  min?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, description: 'Required if the pool has none' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  max?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 86400 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86400)
  queueWaitSec?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 86400 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86400)
  idleCooldownSec?: number;
}

/** PATCH /v1/node-pools/{id}: at least one of the two. */
export class EditNodePoolDto {
  @ApiPropertyOptional({ type: EditAutoscalingDto })
  @IsOptional()
  @IsDefined()
  @NestedDto(() => EditAutoscalingDto)
  autoscaling?: EditAutoscalingDto;

  @ApiPropertyOptional({ type: PoolAccessDto })
  @IsOptional()
  @IsDefined()
  @NestedDto(() => PoolAccessDto)
  access?: PoolAccessDto;
}

export class ScaleNodePoolDto {
  @ApiProperty({ minimum: 0, maximum: 1000 })
  @IsInt()
  @Min(0)
  @Max(1000)
  desiredSize!: number;
}

export class ResizeNodePoolDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 1024, description: 'vCPUs per node' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1024)
  cpu?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 16384, description: 'GiB per node' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(16384)
  memoryGiB?: number;
}

export class PoolView {
  @ApiProperty() poolId!: string;
  @ApiProperty() clusterId!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['gpu', 'cpu'] }) kind!: string;
  @ApiProperty({ enum: GPU_MODELS, nullable: true }) gpuType!: string | null;
  @ApiProperty({ enum: ['shared', 'dedicated'] }) mode!: string;
  @ApiProperty({ example: { cpu: 16, memoryGiB: 64, diskGiB: 200, gpusPerNode: 1 } })
  spec!: { cpu: number; memoryGiB: number; diskGiB: number; gpusPerNode: number };
  @ApiProperty({ example: { tenants: [] } }) access!: { tenants: string[] };
  @ApiProperty({
    nullable: true,
    example: { enabled: true, min: 1, max: 10, queueWaitSec: 60, idleCooldownSec: 600 },
  })
  autoscaling!: {
    enabled: boolean;
    min: number;
    max: number;
    queueWaitSec: number;
    idleCooldownSec: number;
  } | null;
  @ApiProperty({ enum: ['active', 'deleting', 'deleted'] }) status!: string;
  @ApiProperty({ description: 'Nodes in the pool now' }) size!: number;
  @ApiProperty({ nullable: true, example: { operationId: '…', type: 'scale_node_pool' } })
  operation!: { operationId: string; type: string } | null;
  @ApiProperty() createdAt!: string;
}
