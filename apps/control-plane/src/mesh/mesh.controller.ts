import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CommandContext } from '@fleet/kernel';
import { Roles } from '../platform/auth/decorators';
import { Ctx } from '../platform/http/command-context';
import { checkId } from '../platform/http/ids';
import {
  ListMeshRequestsQuery,
  MeshMoveDto,
  MeshRequestPage,
  MeshRequestView,
  OpenMeshRequestDto,
} from './mesh.dto';
import { MeshService } from './mesh.service';

/** Cluster Mesh requests (API.md, "Clusters as tenants"): each move checked by the decider. */
@ApiTags('mesh')
@ApiBearerAuth()
@Controller('v1/mesh-requests')
export class MeshController {
  constructor(@Inject(MeshService) private readonly mesh: MeshService) {}

  @Post()
  @HttpCode(201)
  @Roles('admin')
  @ApiCreatedResponse({ type: MeshRequestView })
  open(@Body() body: OpenMeshRequestDto, @Ctx() ctx: CommandContext) {
    return this.mesh.open(body.fromClusterId, body.toClusterId, ctx);
  }

  @Get()
  @Roles('admin', 'auditor')
  @ApiOkResponse({ type: MeshRequestPage })
  list(@Query() query: ListMeshRequestsQuery) {
    const clusterIds = query.clusterId ? [query.clusterId] : undefined;
    return this.mesh.list(
      { clusterIds, status: query.status },
      query.limit ?? 100,
      query.cursor ?? null,
    );
  }

  @Get(':meshRequestId')
  @Roles('admin', 'auditor')
  @ApiOkResponse({ type: MeshRequestView })
  get(@Param('meshRequestId') id: string) {
    return this.mesh.get(checkId('meshRequestId', id));
  }

  @Post(':meshRequestId/approve')
  @HttpCode(200)
  @Roles('admin')
  @ApiBody({ type: MeshMoveDto, required: false })
  @ApiOkResponse({ type: MeshRequestView })
  approve(
    @Param('meshRequestId') id: string,
    @Body() body: MeshMoveDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.mesh.move(
      checkId('meshRequestId', id),
      'ApproveMeshRequest',
      body.reason ?? null,
      ctx,
    );
  }

  @Post(':meshRequestId/reject')
  @HttpCode(200)
  @Roles('admin')
  @ApiBody({ type: MeshMoveDto, required: false })
  @ApiOkResponse({ type: MeshRequestView })
  reject(
    @Param('meshRequestId') id: string,
    @Body() body: MeshMoveDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.mesh.move(
      checkId('meshRequestId', id),
      'RejectMeshRequest',
      body.reason ?? null,
      ctx,
    );
  }

  @Post(':meshRequestId/cancel')
  @HttpCode(200)
  @Roles('admin')
  @ApiBody({ type: MeshMoveDto, required: false })
  @ApiOkResponse({ type: MeshRequestView })
  cancel(
    @Param('meshRequestId') id: string,
    @Body() body: MeshMoveDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.mesh.move(
      checkId('meshRequestId', id),
      'CancelMeshRequest',
      body.reason ?? null,
      ctx,
    );
  }

  @Post(':meshRequestId/disconnect')
  @HttpCode(200)
  @Roles('admin')
  @ApiBody({ type: MeshMoveDto, required: false })
  @ApiOkResponse({ type: MeshRequestView })
  disconnect(
    @Param('meshRequestId') id: string,
    @Body() body: MeshMoveDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.mesh.move(checkId('meshRequestId', id), 'DisconnectMesh', body.reason ?? null, ctx);
  }
}
