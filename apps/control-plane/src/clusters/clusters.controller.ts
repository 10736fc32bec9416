import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommandContext } from '../../../../libs/kernel/src';
import { Roles } from '../platform/auth/decorators';
import { Ctx } from '../platform/http/command-context';
import {
  ClusterCreated,
  ClusterView,
  CreateClusterDto,
  TransitionClusterDto,
} from './clusters.dto';
import { ClustersService } from './clusters.service';

@ApiTags('clusters')
@ApiBearerAuth()
@Controller('v1/clusters')
export class ClustersController {
  constructor(@Inject(ClustersService) private readonly clusters: ClustersService) {}

  @Post()
  @HttpCode(201)
  @Roles('admin')
  @ApiCreatedResponse({ type: ClusterCreated })
  create(@Body() body: CreateClusterDto, @Ctx() ctx: CommandContext): Promise<ClusterCreated> {
    return this.clusters.create(body, ctx);
  }

  @Get(':clusterId')
  @Roles('admin', 'auditor')
  @ApiOkResponse({ type: ClusterView })
  get(@Param('clusterId') clusterId: string) {
    return this.clusters.get(clusterId);
  }

  /** The provisioner (or an admin) reports a lifecycle step; any other move is 409 invalid_transition. */
  @Post(':clusterId/transitions')
  @HttpCode(200)
  @Roles('admin')
  @ApiOkResponse({ type: ClusterView })
  transition(
    @Param('clusterId') clusterId: string,
    @Body() body: TransitionClusterDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.clusters.transition(clusterId, body.to, body.reason ?? null, ctx);
  }
}
