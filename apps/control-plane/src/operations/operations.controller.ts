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
import { ApiAcceptedResponse, ApiBearerAuth, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { CommandContext } from '@fleet/kernel';
import { Roles } from '../platform/auth/decorators';
import { ClusterScoped } from '../platform/auth/cluster-role.guard';
import { Ctx } from '../platform/http/command-context';
import { QueryParams } from '../platform/http/page-query.dto';
import { CLUSTER_ID, CLUSTER_ID_RULE, UUID, checkId } from '../platform/http/ids';
import { OperationAccepted } from '../clusters';
import { ResizeNodePoolDto, ScaleNodePoolDto } from '../pools';
import { validationFailed } from '../platform/errors/error-envelope';
import { DeleteNodePool } from './delete-node-pool.handler';
import { OperationsService } from './operations.service';
import { ResizeNodePool } from './resize-node-pool.handler';
import { ScaleNodePool } from './scale-node-pool.handler';
import { NoBody } from '../platform/http/no-body';

@QueryParams()
export class ListOperationsQuery {
  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(UUID, { message: 'poolId must be a pool id' })
  poolId?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Matches(CLUSTER_ID, { message: `clusterId ${CLUSTER_ID_RULE}` })
  clusterId?: string;

  @ApiPropertyOptional({ enum: ['pending', 'running', 'succeeded', 'failed', 'timeout'] })
  @IsOptional()
  @IsIn(['pending', 'running', 'succeeded', 'failed', 'timeout'])
  status?: string;
}

@ApiTags('operations')
@ApiBearerAuth()
@Controller('v1')
export class OperationsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(OperationsService) private readonly operations: OperationsService,
  ) {}

  /** 202: an async operation; 409 operation_in_progress while another runs on the pool, size_out_of_range outside min/max. */
  @Post('node-pools/:poolId/scale')
  @HttpCode(202)
  @ClusterScoped('editor', 'pool')
  @ApiAcceptedResponse({ type: OperationAccepted })
  scale(
    @Param('poolId') poolId: string,
    @Body() body: ScaleNodePoolDto,
    @Ctx() ctx: CommandContext,
  ): Promise<OperationAccepted> {
    return this.commands.execute(
      new ScaleNodePool(checkId('poolId', poolId), body.desiredSize, ctx),
    );
  }

  /** 202: rolling replacement onto the new vCPU / memory shape, one node at a time. */
  @Post('node-pools/:poolId/resize')
  @HttpCode(202)
  @ClusterScoped('editor', 'pool')
  @ApiAcceptedResponse({ type: OperationAccepted })
  resize(
    @Param('poolId') poolId: string,
    @Body() body: ResizeNodePoolDto,
    @Ctx() ctx: CommandContext,
  ): Promise<OperationAccepted> {
    if (body.cpu == null && body.memoryGiB == null) {
      throw validationFailed([{ field: 'cpu', problems: ['give cpu, memoryGiB or both'] }]);
    }
    return this.commands.execute(new ResizeNodePool(checkId('poolId', poolId), body, ctx));
  }

  /** 202: drains and removes the pool's nodes, then deletes it; 409 last_pool for a cluster's last pool. */
  @Delete('node-pools/:poolId')
  @NoBody()
  @HttpCode(202)
  @ClusterScoped('editor', 'pool')
  @ApiAcceptedResponse({ type: OperationAccepted })
  remove(@Param('poolId') poolId: string, @Ctx() ctx: CommandContext): Promise<OperationAccepted> {
    return this.commands.execute(new DeleteNodePool(checkId('poolId', poolId), ctx));
  }

  @Get('operations')
  @Roles('admin', 'auditor')
  list(@Query() query: ListOperationsQuery) {
    return this.operations.list(query);
  }

  @Get('operations/:operationId')
  @ClusterScoped('viewer', 'operation')
  get(@Param('operationId') operationId: string) {
    return this.operations.get(checkId('operationId', operationId));
  }
}
