import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CommandContext, notFound } from '@fleet/kernel';
import { Caller, hasRole } from '../platform/auth/caller';
import { ClusterRole } from '../platform/auth/cluster-access';
import { ClusterRoles } from '../platform/auth/cluster-roles.service';
import { CurrentCaller, Roles } from '../platform/auth/decorators';
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
  constructor(
    @Inject(MeshService) private readonly mesh: MeshService,
    @Inject(ClusterRoles) private readonly roles: ClusterRoles,
  ) {}

  /** Editor of `from`; a user of no such cluster gets its 404. */
  @Post()
  @HttpCode(201)
  @Roles('admin', 'user')
  @ApiCreatedResponse({ type: MeshRequestView })
  async open(
    @Body() body: OpenMeshRequestDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    const from = [body.fromClusterId];
    await this.roles.check(caller, from, () => notFound('cluster', body.fromClusterId), {
      needs: 'editor',
      clusters: from,
    });
    return this.mesh.open(body.fromClusterId, body.toClusterId, ctx);
  }

  /** A member sees the requests of its clusters; admin and auditor all. */
  @Get()
  @Roles('admin', 'auditor', 'user')
  @ApiOkResponse({ type: MeshRequestPage })
  async list(@Query() query: ListMeshRequestsQuery, @CurrentCaller() caller: Caller) {
    let clusterIds = query.clusterId ? [query.clusterId] : undefined;
    if (!hasRole(caller, ['admin', 'auditor'])) {
      const mine = await this.mesh.clustersOfMember(caller.sub);
      clusterIds = (clusterIds ?? mine).filter((c) => mine.includes(c));
    }
    return this.mesh.list(
      { clusterIds, status: query.status },
      query.limit ?? 100,
      query.cursor ?? null,
    );
  }

  @Get(':meshRequestId')
  @Roles('admin', 'auditor', 'user')
  @ApiOkResponse({ type: MeshRequestView })
  async get(@Param('meshRequestId') id: string, @CurrentCaller() caller: Caller) {
    const mesh = await this.mesh.get(checkId('meshRequestId', id));
    await this.allowed(caller, mesh);
    return mesh;
  }

  /**
   * A member of either cluster reads a request (else 404, as for none); to move it, it needs
   * `needs` on `side`'s cluster (else 403).
   */
  private async allowed(
    caller: Caller,
    mesh: { meshRequestId: string; fromClusterId: string; toClusterId: string },
    act?: { needs: ClusterRole; side: 'from' | 'to' | 'either' },
  ): Promise<void> {
    const both = [mesh.fromClusterId, mesh.toClusterId];
    const side =
      act?.side === 'from' ? [mesh.fromClusterId] : act?.side === 'to' ? [mesh.toClusterId] : both;
    await this.roles.check(
      caller,
      both,
      () => notFound('mesh request', mesh.meshRequestId),
      act && { needs: act.needs, clusters: side },
    );
  }

  /** The request after the caller's role on its clusters allowed the move. */
  private async movable(
    id: string,
    caller: Caller,
    needs: ClusterRole,
    side: 'from' | 'to' | 'either',
  ): Promise<string> {
    const meshRequestId = checkId('meshRequestId', id);
    await this.allowed(caller, await this.mesh.get(meshRequestId), { needs, side });
    return meshRequestId;
  }

  @Post(':meshRequestId/approve')
  @HttpCode(200)
  @Roles('admin', 'user')
  @ApiBody({ type: MeshMoveDto, required: false })
  @ApiOkResponse({ type: MeshRequestView })
  async approve(
    @Param('meshRequestId') id: string,
    @Body() body: MeshMoveDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    const meshRequestId = await this.movable(id, caller, 'owner', 'to');
    return this.mesh.move(meshRequestId, 'ApproveMeshRequest', body.reason ?? null, ctx);
  }

  @Post(':meshRequestId/reject')
  @HttpCode(200)
  @Roles('admin', 'user')
  @ApiBody({ type: MeshMoveDto, required: false })
  @ApiOkResponse({ type: MeshRequestView })
  async reject(
    @Param('meshRequestId') id: string,
    @Body() body: MeshMoveDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    const meshRequestId = await this.movable(id, caller, 'owner', 'to');
    return this.mesh.move(meshRequestId, 'RejectMeshRequest', body.reason ?? null, ctx);
  }

  @Post(':meshRequestId/cancel')
  @HttpCode(200)
  @Roles('admin', 'user')
  @ApiBody({ type: MeshMoveDto, required: false })
  @ApiOkResponse({ type: MeshRequestView })
  async cancel(
    @Param('meshRequestId') id: string,
    @Body() body: MeshMoveDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    const meshRequestId = await this.movable(id, caller, 'editor', 'from');
    return this.mesh.move(meshRequestId, 'CancelMeshRequest', body.reason ?? null, ctx);
  }

  @Post(':meshRequestId/disconnect')
  @HttpCode(200)
  @Roles('admin', 'user')
  @ApiBody({ type: MeshMoveDto, required: false })
  @ApiOkResponse({ type: MeshRequestView })
  async disconnect(
    @Param('meshRequestId') id: string,
    @Body() body: MeshMoveDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ) {
    const meshRequestId = await this.movable(id, caller, 'owner', 'either');
    return this.mesh.move(meshRequestId, 'DisconnectMesh', body.reason ?? null, ctx);
  }
}
