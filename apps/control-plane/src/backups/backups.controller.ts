import { Body, Controller, Get, HttpCode, Inject, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CommandContext } from '@fleet/kernel';
import { Caller } from '../platform/auth/caller';
import { ClusterScoped } from '../platform/auth/cluster-role.guard';
import { CurrentCaller } from '../platform/auth/decorators';
import { OperationAccepted } from '../clusters';
import { Ctx } from '../platform/http/command-context';
import { ClusterIdPipe } from '../platform/http/ids';
import {
  BackupPage,
  BackupPolicyDto,
  BackupPolicyView,
  BackupView,
  ListBackupsQuery,
  RequestBackupDto,
  RestoreDto,
} from './backups.dto';
import { RestoresService } from './restores.service';
import { BackupPoliciesService } from './backup-policies.service';
import { BackupsService } from './backups.service';

/** Velero backups of a cluster (API.md, "Clusters as tenants"). */
@ApiTags('backups')
@ApiBearerAuth()
@Controller('v1/clusters/:clusterId')
export class BackupsController {
  constructor(
    @Inject(BackupsService) private readonly backups: BackupsService,
    @Inject(BackupPoliciesService) private readonly policies: BackupPoliciesService,
    @Inject(RestoresService) private readonly restores: RestoresService,
  ) {}

  /** The schedule (a five-field cron, UTC) and retention; 200 with the next runs. */
  @Put('backup-policy')
  @HttpCode(200)
  @ClusterScoped('editor')
  @ApiOkResponse({ type: BackupPolicyView })
  setPolicy(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: BackupPolicyDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.policies.set(
      clusterId,
      {
        enabled: body.enabled,
        schedule: body.schedule ?? null,
        ttlHours: body.ttlHours,
        includeNamespaces: body.includeNamespaces ?? null,
      },
      ctx,
    );
  }

  @Get('backup-policy')
  @ClusterScoped('viewer')
  @ApiOkResponse({ type: BackupPolicyView })
  policy(@Param('clusterId', ClusterIdPipe) clusterId: string) {
    return this.policies.get(clusterId);
  }

  /** 202: the backup is `pending`; its process carries it to completed or failed. */
  @Post('backups')
  @HttpCode(202)
  @ClusterScoped('editor')
  @ApiBody({ type: RequestBackupDto, required: false })
  @ApiAcceptedResponse({ type: BackupView })
  async request(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: RequestBackupDto,
    @Ctx() ctx: CommandContext,
  ) {
    const { ttlHours } = await this.policies.get(clusterId);
    return this.backups.request(
      clusterId,
      {
        includeNamespaces: body.includeNamespaces ?? null,
        snapshotVolumes: body.snapshotVolumes ?? true,
        ttlHours,
        trigger: 'manual',
        slotAt: null,
      },
      ctx,
    );
  }

  @Get('backups')
  @ClusterScoped('viewer')
  @ApiOkResponse({ type: BackupPage })
  list(@Param('clusterId', ClusterIdPipe) clusterId: string, @Query() query: ListBackupsQuery) {
    return this.backups.list(clusterId, query.limit ?? 100, query.cursor ?? null);
  }

  /**
   * 202: a restore_cluster operation restoring a completed backup of this cluster onto it, or
   * (admin) onto `targetClusterId`; 409 operation_in_progress while that cluster is restored.
   */
  @Post('restores')
  @HttpCode(202)
  @ClusterScoped('owner')
  @ApiAcceptedResponse({ type: OperationAccepted })
  restore(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: RestoreDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    return this.restores.restore(
      clusterId,
      body.backupId,
      body.targetClusterId ?? null,
      caller,
      ctx,
    );
  }
}
