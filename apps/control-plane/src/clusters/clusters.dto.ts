import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { NestedDto } from '../platform/http/nested';
import { CIDR_RULE } from '../catalog/cidr';
import { CLUSTER_STATUSES, ClusterStatus } from './cluster.events';
import { CLUSTER_ROLES, ClusterRole } from '../platform/auth/cluster-access';
import { OWNER_FORMAT, OWNER_RULE } from '../platform/auth/caller';

const CIDR = /^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/;

/** Velero on create: becomes the cluster's first backup policy (the backups slice adopts it). */
export class VeleroDto {
  @ApiProperty() @IsBoolean() enabled!: boolean;

  @ApiPropertyOptional({
    example: '0 3 * * *',
    description: 'Five-field cron, UTC; required when enabled (400 naming velero.schedule)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  schedule?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 87600 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(87600)
  ttlHours?: number;
}

export class CreateClusterDto {
  @ApiProperty({ example: 'gpu-prod-kr1', description: '1-63 characters of [A-Za-z0-9._-]' })
  @IsString()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, {
    message: 'name must be 1-63 characters of [A-Za-z0-9._-]',
  })
  name!: string;

  @ApiProperty({ example: '1.30.4', description: 'Kubernetes version (major.minor[.patch])' })
  @IsString()
  @Matches(/^v?\d+\.\d+(\.\d+)?$/, { message: 'k8sVersion must look like 1.30 or 1.30.4' })
  k8sVersion!: string;

  @ApiProperty({ example: '10.244.0.0/16', description: 'IPv4 CIDR, no host bits set' })
  @IsString()
  @Matches(CIDR, { message: `podCidr must be ${CIDR_RULE}` })
  podCidr!: string;

  @ApiProperty({ example: '10.96.0.0/12', description: 'IPv4 CIDR, not overlapping podCidr' })
  @IsString()
  @Matches(CIDR, { message: `serviceCidr must be ${CIDR_RULE}` })
  serviceCidr!: string;

  @ApiPropertyOptional({
    type: 'array',
    maxItems: 20,
    items: { $ref: '#/components/schemas/ClusterPoolSpecDto' },
    description:
      'Node pools made with the cluster: each the node-pool create body (POST /v1/clusters/{id}/node-pools) plus an optional `size`. Checked before anything is recorded; a bad one is 400 naming nodePools[i].<field>',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsObject({ each: true })
  nodePools?: Array<Record<string, unknown>>;

  @ApiPropertyOptional({ type: VeleroDto })
  @IsOptional()
  @NestedDto(() => VeleroDto)
  velero?: VeleroDto;

  @ApiPropertyOptional({
    description:
      "The cluster's first owner: an admin may name anyone (default: the admin); a user only itself",
  })
  @IsOptional()
  @IsString()
  @Matches(OWNER_FORMAT, { message: `owner ${OWNER_RULE}` })
  owner?: string;
}

export class TransitionClusterDto {
  @ApiProperty({ enum: CLUSTER_STATUSES })
  @IsIn(CLUSTER_STATUSES)
  to!: ClusterStatus;

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;

  @ApiPropertyOptional({
    example: 'https://c1.k8s.example:6443',
    description: 'On → running: where the cluster API server answers',
  })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  @Matches(/^https:\/\/[^\s/]+(:\d+)?(\/\S*)?$/, { message: 'apiEndpoint must be an https URL' })
  apiEndpoint?: string;

  @ApiPropertyOptional({
    description: "On → running: the API server's CA certificate (PEM, public)",
  })
  @IsOptional()
  @IsString()
  @MaxLength(20_000)
  @Matches(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n?$/, {
    message: 'caCertificate must be a PEM certificate',
  })
  caCertificate?: string;
}

export class ConfirmOutageDto {
  @ApiPropertyOptional({ maxLength: 500, example: 'rack power lost in zone b' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

export class UpgradeClusterDto {
  @ApiProperty({ example: '1.31.1' })
  @IsString()
  @Matches(/^v?\d+\.\d+(\.\d+)?$/, { message: 'k8sVersion must look like 1.31 or 1.31.1' })
  k8sVersion!: string;
}

/** The answer of a command that opened an operation (clusters' and pools' alike). */
export class OperationAccepted {
  @ApiProperty() operationId!: string;
}

export class ClusterCreated {
  @ApiProperty() clusterId!: string;
  @ApiProperty({ enum: CLUSTER_STATUSES }) status!: string;
  @ApiProperty({ description: 'The create_cluster operation' }) operationId!: string;
}

class HeldNode {
  @ApiProperty() nodeId!: string;
  @ApiProperty() hostname!: string;
}

export class ClusterReportsView {
  @ApiProperty({
    enum: ['reporting', 'stalled'],
    description:
      'stalled: the mass-failure guard holds the silent nodes instead of taking them offline',
  })
  status!: string;
  @ApiProperty({ nullable: true, type: String }) stalledSince!: string | null;
  @ApiProperty({ type: [HeldNode] }) heldNodes!: HeldNode[];
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When an admin last confirmed an outage of held nodes',
  })
  outageConfirmedAt!: string | null;
}

export class ClusterPoolView {
  @ApiProperty() poolId!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['gpu', 'cpu'] }) kind!: string;
  @ApiProperty({ nullable: true, type: String, example: 'L40S' }) gpuType!: string | null;
  @ApiProperty({ description: 'Nodes in the pool now (as GET /v1/node-pools/{id} shows)' })
  size!: number;
}

export class ClusterVeleroPolicyView {
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ nullable: true, type: String, example: '0 3 * * *' }) schedule!: string | null;
  @ApiProperty() ttlHours!: number;
  @ApiProperty({ nullable: true, type: [String] }) includeNamespaces!: string[] | null;
  @ApiProperty({ type: [String], description: 'The next three runs (UTC); none while disabled' })
  nextRuns!: string[];
}

export class ClusterView {
  @ApiProperty() clusterId!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ nullable: true, type: String }) k8sVersion!: string | null;
  @ApiProperty({ nullable: true, type: String }) podCidr!: string | null;
  @ApiProperty({ nullable: true, type: String }) serviceCidr!: string | null;
  @ApiProperty({ enum: CLUSTER_STATUSES }) status!: string;
  @ApiProperty({ description: 'First seen in an operator report, not created here' })
  adopted!: boolean;
  @ApiProperty({
    type: [ClusterPoolView],
    description: 'Its node pools, each with its node count now',
  })
  pools!: ClusterPoolView[];
  @ApiProperty({
    example: [{ from: 'requested', to: 'provisioning', reason: null, at: '2026-12-02T10:00:00Z' }],
  })
  history!: Array<{ from: string | null; to: string; reason: string | null; at: string }>;
  @ApiProperty() createdAt!: string;
  @ApiProperty() updatedAt!: string;
  @ApiProperty({ type: ClusterReportsView }) reports!: ClusterReportsView;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Reported by the provisioner on → running',
  })
  apiEndpoint!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The API server CA (PEM, public)' })
  caCertificate!: string | null;
  @ApiProperty({
    nullable: true,
    type: ClusterVeleroPolicyView,
    description:
      'The backup policy now (PUT /v1/clusters/{id}/backup-policy; first from velero at create)',
  })
  velero!: ClusterVeleroPolicyView | null;
  @ApiProperty({
    enum: CLUSTER_ROLES,
    nullable: true,
    type: String,
    description: "The caller's role on the cluster; null for an admin or auditor who is no member",
  })
  myRole!: ClusterRole | null;
}

class KubernetesVersion {
  @ApiProperty({ example: '1.30' }) version!: string;
  @ApiProperty() default!: boolean;
}

export class KubernetesVersionsView {
  @ApiProperty({ type: [KubernetesVersion] }) items!: KubernetesVersion[];
}
