import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CLUSTER_ROLES, ClusterRole } from '../../platform/auth/cluster-access';
import { PageQuery, QueryParams } from '../../platform/http/page-query.dto';
import { ClusterView } from '../clusters.dto';
import { LIST_STATUSES } from './members.service';

export class PutMemberDto {
  @ApiProperty({ enum: CLUSTER_ROLES })
  @IsIn(CLUSTER_ROLES)
  role!: ClusterRole;
}

export class MemberView {
  @ApiProperty() sub!: string;
  @ApiProperty({ enum: CLUSTER_ROLES }) role!: string;
  @ApiProperty({ description: 'Who added the member' }) addedBy!: string;
  @ApiProperty() addedAt!: string;
}

export class MemberList {
  @ApiProperty({ type: [MemberView] }) items!: MemberView[];
}

@QueryParams()
export class ListClustersQuery extends PageQuery {
  @ApiPropertyOptional({
    enum: LIST_STATUSES,
    description: 'Without it, every cluster but the deleted ones',
  })
  @IsOptional()
  @IsIn(LIST_STATUSES)
  status?: string;
}

export class ClusterPage {
  @ApiProperty({ type: [ClusterView] }) items!: ClusterView[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}
