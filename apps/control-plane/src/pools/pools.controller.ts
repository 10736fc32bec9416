import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommandContext } from '@fleet/kernel';
import { NodeView } from '../nodes';
import { Roles } from '../platform/auth/decorators';
import { ClusterScoped } from '../platform/auth/cluster-role.guard';
import { checkId, ClusterIdPipe } from '../platform/http/ids';
import { Ctx } from '../platform/http/command-context';
import { CreateNodePool } from './create-node-pool.handler';
import { AssignPoolDto, CreateNodePoolDto, EditNodePoolDto, PoolView } from './pools.dto';
import { EditNodePool } from './edit-node-pool.handler';
import { AssignNodeToPool } from './assign-node-to-pool.handler';
import { PoolsService } from './pools.service';

@ApiTags('node-pools')
@ApiBearerAuth()
@Controller('v1')
export class PoolsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(PoolsService) private readonly pools: PoolsService,
  ) {}

  @Post('clusters/:clusterId/node-pools')
  @HttpCode(201)
  @ClusterScoped('editor')
  @ApiCreatedResponse({ type: PoolView })
  create(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: CreateNodePoolDto,
    @Ctx() ctx: CommandContext,
  ): Promise<PoolView> {
    return this.commands.execute(new CreateNodePool(clusterId, body, ctx));
  }

  @Get('clusters/:clusterId/node-pools')
  @ClusterScoped('viewer')
  list(@Param('clusterId', ClusterIdPipe) clusterId: string): Promise<{ items: PoolView[] }> {
    return this.pools.list(clusterId);
  }

  @Get('node-pools/:poolId')
  @ClusterScoped('viewer', 'pool')
  @ApiOkResponse({ type: PoolView })
  get(@Param('poolId') poolId: string): Promise<PoolView> {
    return this.pools.get(checkId('poolId', poolId));
  }

  /**
   * Autoscaling (on/off, min, max, timings) and access; 409 pool_not_active while it is being
   * deleted, cluster_not_running unless its cluster runs. Raising min above the size (or
   * lowering max below it) starts a scale operation at once: `operation` in the answer.
   */
  @Patch('node-pools/:poolId')
  @HttpCode(200)
  @ClusterScoped('editor', 'pool')
  @ApiOkResponse({ type: PoolView })
  edit(
    @Param('poolId') poolId: string,
    @Body() body: EditNodePoolDto,
    @Ctx() ctx: CommandContext,
  ): Promise<PoolView> {
    return this.commands.execute(new EditNodePool(checkId('poolId', poolId), body, ctx));
  }

  /** Moves a node into a pool at once (same cluster, kind and GPU model), or out (`null`). */
  @Put('nodes/:nodeId/pool')
  @HttpCode(200)
  @Roles('admin')
  @ApiOkResponse({ type: NodeView })
  assign(@Param('nodeId') nodeId: string, @Body() body: AssignPoolDto, @Ctx() ctx: CommandContext) {
    return this.commands.execute(new AssignNodeToPool(checkId('nodeId', nodeId), body.poolId, ctx));
  }
}
