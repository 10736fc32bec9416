import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { GPU_MODELS, GpuModel } from '../../catalog/catalog';
import type { DtoStatics } from '../../platform/http/fast-validation';
import { CLUSTER_ID, CLUSTER_ID_RULE } from '../../platform/http/ids';
import { NestedDto, NestedDtos } from '../../platform/http/nested';
import { NODE_ROLES, NodeRole } from '../node.events';
import {
  GPU_UUID,
  HOSTNAME,
  OBSERVED_AT,
  isPlainValidInventoryReport,
  keepLabelsAsSent,
} from './inventory-report.check';

export class CapacityDto {
  @ApiProperty({ minimum: 0, maximum: 4096 })
  @IsInt()
  @Min(0)
  @Max(4096)
  cpu!: number;

  @ApiProperty({ minimum: 0, maximum: 65536 })
  @IsInt()
  @Min(0)
  @Max(65536)
  memoryGiB!: number;

  @ApiProperty({ minimum: 0, maximum: 1048576 })
  @IsInt()
  @Min(0)
  @Max(1048576)
  diskGiB!: number;
}

export class GpuDto {
  @ApiProperty({ example: 'GPU-6f1c2d3e-0000-1111-2222-333344445555' })
  @IsString()
  @Matches(GPU_UUID, {
    message: 'uuid must be 1-128 characters of [A-Za-z0-9._:/-]',
  })
  uuid!: string;

  @ApiProperty({ enum: GPU_MODELS })
  @IsIn(GPU_MODELS)
  model!: GpuModel;

  @ApiProperty({ minimum: 1, maximum: 1024 })
  @IsInt()
  @Min(1)
  @Max(1024)
  memoryGiB!: number;
}

export class NodeReportDto {
  @ApiProperty({ example: 'gpu-a-01', description: 'RFC 1123 hostname' })
  @IsString()
  @Matches(HOSTNAME, { message: 'hostname must be an RFC 1123 hostname (lower case)' })
  hostname!: string;

  @ApiProperty({ enum: NODE_ROLES })
  @IsIn(NODE_ROLES)
  role!: NodeRole;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'fleet/mode': 'shared' },
  })
  @IsOptional()
  @IsObject()
  labels?: Record<string, string>;

  @ApiProperty({ type: CapacityDto })
  @IsDefined()
  @NestedDto(() => CapacityDto)
  capacity!: CapacityDto;

  @ApiPropertyOptional({ type: [GpuDto], maxItems: 64 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @NestedDtos(() => GpuDto)
  gpus?: GpuDto[];

  @ApiProperty()
  @IsBoolean()
  kubeletReady!: boolean;

  @ApiPropertyOptional({ description: "The Kubernetes node object's spec.unschedulable now" })
  @IsOptional()
  @IsBoolean()
  unschedulable?: boolean;

  @ApiPropertyOptional({
    description:
      'When the operator observed this state (RFC 3339 with its offset, at most 60 s ahead of the server); orders reports per node',
    example: '2026-12-02T10:00:00Z',
  })
  @IsOptional()
  @IsString()
  @IsISO8601({ strict: true })
  @Matches(OBSERVED_AT, {
    message:
      'observedAt must be an RFC 3339 date-time with its offset, such as 2026-12-02T10:00:00Z or 2026-12-02T19:00:00.123+09:00',
  })
  observedAt?: string;
}

export class InventoryReportDto {
  /** Checked by hand on the hot path (inventory-report.check.ts; its spec holds it to these rules). */
  static readonly fastPath: DtoStatics<InventoryReportDto>['fastPath'] =
    isPlainValidInventoryReport;
  static readonly keepAsSent: DtoStatics<InventoryReportDto>['keepAsSent'] = keepLabelsAsSent;

  @ApiProperty({ example: 'c1' })
  @IsString()
  @MaxLength(63)
  @Matches(CLUSTER_ID, { message: `clusterId ${CLUSTER_ID_RULE}` })
  clusterId!: string;

  @ApiProperty({ type: [NodeReportDto], minItems: 1, maxItems: 1000 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @NestedDtos(() => NodeReportDto)
  nodes!: NodeReportDto[];
}

export class ReportedNodeView {
  @ApiProperty() hostname!: string;
  @ApiProperty() nodeId!: string;
  @ApiProperty({ enum: ['ready', 'busy', 'cordoned', 'offline'] }) status!: string;
  @ApiProperty({ example: { unschedulable: false } }) desired!: { unschedulable: boolean };
}

export class InventoryReportResponse {
  @ApiProperty({ type: [ReportedNodeView] }) nodes!: ReportedNodeView[];
}
