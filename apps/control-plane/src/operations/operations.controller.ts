import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
} from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommandContext } from '@fleet/kernel';
import { Roles } from '../platform/auth/decorators';
import { ClusterScoped } from '../platform/auth/cluster-role.guard';
import { Ctx } from '../platform/http/command-context';
import { checkId } from '../platform/http/ids';
import { OperationAccepted } from '../clusters';
import { ResizeNodePoolDto, ScaleNodePoolDto } from '../pools';
import { validationFailed } from '../platform/errors/error-envelope';
import { DeleteNodePool } from './delete-node-pool.handler';
import { OperationsService } from './operations.service';
import {
  ListOperationsQuery,
  OperationPage,
  OperationViewDto,
  OperationsQueries,
} from './operations.queries';
import { ResizeNodePool } from './resize-node-pool.handler';
import { ScaleNodePool } from './scale-node-pool.handler';
import { NoBody } from '../platform/http/no-body';

@ApiTags('operations')
@ApiBearerAuth()
@Controller('v1')
export class OperationsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(OperationsService) private readonly operations: OperationsService,
    @Inject(OperationsQueries) private readonly queries: OperationsQueries,
  ) {}

  /** 202: an async operation; 409 operation_in_progress while another runs on the pool, size_out_of_range outside min/max. */
  @Post('node-pools/:poolId/scale')
  @HttpCode(202)
  @ClusterScoped('editor', 'pool')
  @ApiAcceptedResponse({ type: OperationAccepted })
  async scale(
    @Param('poolId') poolId: string,
    @Body() body: ScaleNodePoolDto,
    @Ctx() ctx: CommandContext,
  ): Promise<OperationAccepted> {
    const id = checkId('poolId', poolId);
    await this.operations.refuseOnIdleCluster(id);
    return this.commands.execute(new ScaleNodePool(id, body.desiredSize, ctx));
  }

  /** 202: rolling replacement onto the new vCPU / memory shape, one node at a time. */
  @Post('node-pools/:poolId/resize')
  @HttpCode(202)
  @ClusterScoped('editor', 'pool')
  @ApiAcceptedResponse({ type: OperationAccepted })
  async resize(
    @Param('poolId') poolId: string,
    @Body() body: ResizeNodePoolDto,
    @Ctx() ctx: CommandContext,
  ): Promise<OperationAccepted> {
    if (body.cpu == null && body.memoryGiB == null) {
      throw validationFailed([{ field: 'cpu', problems: ['give cpu, memoryGiB or both'] }]);
    }
    const id = checkId('poolId', poolId);
    await this.operations.refuseOnIdleCluster(id);
    return this.commands.execute(new ResizeNodePool(id, body, ctx));
  }

  /** 202: drains and removes the pool's nodes, then deletes it; 409 last_pool for a cluster's last pool. */
  @Delete('node-pools/:poolId')
  @NoBody()
  @HttpCode(202)
  @ClusterScoped('editor', 'pool')
  @ApiAcceptedResponse({ type: OperationAccepted })
  async remove(
    @Param('poolId') poolId: string,
    @Ctx() ctx: CommandContext,
  ): Promise<OperationAccepted> {
    const id = checkId('poolId', poolId);
    await this.operations.refuseOnIdleCluster(id);
    return this.commands.execute(new DeleteNodePool(id, ctx));
  }

  /** Newest first, in pages; filters by cluster, pool, type and status (400 on a bad one). */
  @Get('operations')
  @Roles('admin', 'auditor')
  @ApiOkResponse({ type: OperationPage })
  list(@Query() query: ListOperationsQuery): Promise<OperationPage> {
    return this.queries.list(query);
  }

  @Get('operations/:operationId')
  @ClusterScoped('viewer', 'operation')
  @ApiOkResponse({ type: OperationViewDto })
  get(@Param('operationId') operationId: string) {
    return this.queries.get(checkId('operationId', operationId));
  }
}
