import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CommandContext } from '@fleet/kernel';
import { Roles } from '../platform/auth/decorators';
import { Ctx } from '../platform/http/command-context';
import { ClusterIdPipe } from '../platform/http/ids';
import { BackupPage, BackupView, ListBackupsQuery, RequestBackupDto } from './backups.dto';
import { BackupsService, DEFAULT_TTL_HOURS } from './backups.service';

/** Velero backups of a cluster (API.md, "Clusters as tenants"). */
@ApiTags('backups')
@ApiBearerAuth()
@Controller('v1/clusters/:clusterId')
export class BackupsController {
  constructor(@Inject(BackupsService) private readonly backups: BackupsService) {}

  /** 202: the backup is `pending`; its process carries it to completed or failed. */
  @Post('backups')
  @HttpCode(202)
  @Roles('admin')
  @ApiBody({ type: RequestBackupDto, required: false })
  @ApiAcceptedResponse({ type: BackupView })
  request(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: RequestBackupDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.backups.request(
      clusterId,
      {
        includeNamespaces: body.includeNamespaces ?? null,
        snapshotVolumes: body.snapshotVolumes ?? true,
        ttlHours: DEFAULT_TTL_HOURS,
        trigger: 'manual',
        slotAt: null,
      },
      ctx,
    );
  }

  @Get('backups')
  @Roles('admin', 'auditor')
  @ApiOkResponse({ type: BackupPage })
  list(@Param('clusterId', ClusterIdPipe) clusterId: string, @Query() query: ListBackupsQuery) {
    return this.backups.list(clusterId, query.limit ?? 100, query.cursor ?? null);
  }
}
