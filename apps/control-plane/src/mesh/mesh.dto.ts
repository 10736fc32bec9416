import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { CLUSTER_ID, CLUSTER_ID_RULE } from '../platform/http/ids';
import { PageQuery, QueryParams } from '../platform/http/page-query.dto';
import { MESH_STATUSES, MeshStatus } from './mesh.events';

export class OpenMeshRequestDto {
  @ApiProperty({ example: 'gpu-prod-kr1' })
  @IsString()
  @Matches(CLUSTER_ID, { message: `fromClusterId ${CLUSTER_ID_RULE}` })
  fromClusterId!: string;

  @ApiProperty({ example: 'gpu-prod-kr2' })
  @IsString()
  @Matches(CLUSTER_ID, { message: `toClusterId ${CLUSTER_ID_RULE}` })
  toClusterId!: string;
}

export class MeshMoveDto {
  @ApiPropertyOptional({ maxLength: 500, example: 'approved for the shared inference project' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

@QueryParams()
export class ListMeshRequestsQuery extends PageQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(CLUSTER_ID, { message: `clusterId ${CLUSTER_ID_RULE}` })
  clusterId?: string;

  @ApiPropertyOptional({ enum: MESH_STATUSES })
  @IsOptional()
  @IsIn(MESH_STATUSES)
  status?: MeshStatus;
}

class MeshHistoryEntry {
  @ApiProperty({ enum: MESH_STATUSES }) status!: string;
  @ApiProperty() at!: string;
  @ApiProperty({ description: 'Who moved it (`system` for the connect operation)' }) by!: string;
  @ApiProperty({ nullable: true, type: String }) reason!: string | null;
}

export class MeshRequestView {
  @ApiProperty() meshRequestId!: string;
  @ApiProperty() fromClusterId!: string;
  @ApiProperty() toClusterId!: string;
  @ApiProperty({ enum: MESH_STATUSES }) status!: string;
  @ApiProperty() requestedBy!: string;
  @ApiProperty({ type: [MeshHistoryEntry] }) history!: MeshHistoryEntry[];
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
}

export class MeshRequestPage {
  @ApiProperty({ type: [MeshRequestView] }) items!: MeshRequestView[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}
