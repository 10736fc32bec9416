import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { NODE_ROLES, NodeRole } from './node.events';
import { CLUSTER_ID, CLUSTER_ID_RULE, UUID } from '../platform/http/ids';
import { PageQuery, QueryParams } from '../platform/http/page-query.dto';

const POOL_FILTER = new RegExp(`^(none|${UUID.source.slice(1, -1)})$`);

export const NODE_STATUSES = ['ready', 'busy', 'cordoned', 'offline'] as const;

@QueryParams()
export class ListNodesQuery extends PageQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(CLUSTER_ID, { message: `clusterId ${CLUSTER_ID_RULE}` })
  clusterId?: string;

  @ApiPropertyOptional({ description: 'A pool id, or `none` for nodes in no pool' })
  @IsOptional()
  @IsString()
  @Matches(POOL_FILTER, { message: 'poolId must be a pool id or none' })
  poolId?: string;

  @ApiPropertyOptional({ enum: NODE_ROLES })
  @IsOptional()
  @IsIn(NODE_ROLES)
  role?: NodeRole;

  @ApiPropertyOptional({ enum: NODE_STATUSES })
  @IsOptional()
  @IsIn(NODE_STATUSES)
  status?: (typeof NODE_STATUSES)[number];

  @ApiPropertyOptional({ enum: ['shared', 'dedicated'] })
  @IsOptional()
  @IsIn(['shared', 'dedicated'])
  mode?: 'shared' | 'dedicated';
}

export class CordonNodeDto {
  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

export class NodeView {
  @ApiProperty() nodeId!: string;
  @ApiProperty() clusterId!: string;
  @ApiProperty() hostname!: string;
  @ApiProperty({ enum: NODE_ROLES }) role!: string;
  @ApiProperty({ nullable: true, type: String }) poolId!: string | null;
  @ApiProperty({ enum: ['shared', 'dedicated'] }) mode!: string;
  @ApiProperty({ enum: NODE_STATUSES }) status!: string;
  @ApiProperty({ nullable: true, enum: ['heartbeat_timeout', 'kubelet_not_ready'] })
  offlineReason!: string | null;
  @ApiProperty() gpuCount!: number;
  @ApiProperty() runningSessions!: number;
  @ApiProperty({ example: { cpu: 64, memoryGiB: 512, diskGiB: 2000 } })
  capacity!: { cpu: number; memoryGiB: number; diskGiB: number };
  @ApiProperty() lastSeenAt!: string;
  @ApiProperty() heartbeatAgeSec!: number;
  @ApiProperty({ example: { desired: false, observed: false } }) cordon!: {
    desired: boolean;
    observed: boolean | null;
  };
  @ApiProperty({ nullable: true, example: { drainId: 'd1', status: 'running' } })
  drain!: { drainId: string; status: string } | null;
}

export class NodePage {
  @ApiProperty({ type: [NodeView] }) items!: NodeView[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}
