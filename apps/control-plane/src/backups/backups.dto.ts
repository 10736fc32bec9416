import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { CLUSTER_ID, CLUSTER_ID_RULE, UUID } from '../platform/http/ids';
import { PageQuery, QueryParams } from '../platform/http/page-query.dto';
import { BACKUP_STATUSES } from './backup.events';

/** A Kubernetes namespace name (RFC 1123 label). */
const NAMESPACE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export class RequestBackupDto {
  @ApiPropertyOptional({
    type: [String],
    example: ['inference', 'training'],
    description: 'Default: every namespace',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(NAMESPACE, { each: true, message: 'includeNamespaces must hold namespace names' })
  includeNamespaces?: string[];

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  snapshotVolumes?: boolean;
}

export class BackupPolicyDto {
  @ApiProperty() @IsBoolean() enabled!: boolean;

  @ApiPropertyOptional({
    example: '0 3 * * *',
    description: 'Five-field cron, UTC; required when enabled',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  schedule?: string;

  @ApiProperty({ minimum: 1, maximum: 87600, example: 168 })
  @IsInt()
  @Min(1)
  @Max(87_600)
  ttlHours!: number;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(NAMESPACE, { each: true, message: 'includeNamespaces must hold namespace names' })
  includeNamespaces?: string[];
}

export class BackupPolicyView {
  @ApiProperty() clusterId!: string;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ nullable: true, type: String }) schedule!: string | null;
  @ApiProperty() ttlHours!: number;
  @ApiProperty({ nullable: true, type: [String] }) includeNamespaces!: string[] | null;
  @ApiProperty({ type: [String], description: 'The next three runs (UTC)' }) nextRuns!: string[];
  @ApiProperty({ nullable: true, type: String }) updatedBy!: string | null;
  @ApiProperty({ nullable: true, type: String }) updatedAt!: string | null;
}

export class RestoreDto {
  @ApiProperty({ description: 'A completed backup of this cluster' })
  @IsString()
  @Matches(UUID, { message: 'backupId must be a backup id' })
  backupId!: string;

  @ApiPropertyOptional({ description: 'Admin only: another running cluster to restore onto' })
  @IsOptional()
  @IsString()
  @Matches(CLUSTER_ID, { message: `targetClusterId ${CLUSTER_ID_RULE}` })
  targetClusterId?: string;
}

@QueryParams()
export class ListBackupsQuery extends PageQuery {}

export class BackupView {
  @ApiProperty() backupId!: string;
  @ApiProperty() clusterId!: string;
  @ApiProperty({ enum: ['schedule', 'manual'] }) trigger!: string;
  @ApiProperty({ enum: BACKUP_STATUSES }) status!: string;
  @ApiProperty({ description: 'BACKUP_BUCKET/<tenant prefix>/<clusterId>/<backupId>' })
  location!: string;
  @ApiProperty({ nullable: true, type: String }) startedAt!: string | null;
  @ApiProperty({ nullable: true, type: String }) completedAt!: string | null;
  @ApiProperty() expiresAt!: string;
  @ApiProperty({ nullable: true, type: [String] }) includeNamespaces!: string[] | null;
  @ApiProperty() snapshotVolumes!: boolean;
  @ApiProperty() requestedBy!: string;
  @ApiProperty() requestedAt!: string;
  @ApiProperty({ nullable: true, type: String, description: 'Why it failed' }) error!:
    string | null;
}

export class BackupPage {
  @ApiProperty({ type: [BackupView] }) items!: BackupView[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}
