import { Controller, Get, Header, Inject, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiProduces,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { CommandContext } from '@fleet/kernel';
import { Caller } from '../platform/auth/caller';
import { ClusterScoped } from '../platform/auth/cluster-role.guard';
import { CurrentCaller } from '../platform/auth/decorators';
import { Ctx } from '../platform/http/command-context';
import { ClusterIdPipe } from '../platform/http/ids';
import { QUERY_INT, QueryInt, QueryParams } from '../platform/http/page-query.dto';
import { KubeconfigService } from './kubeconfig.service';

export const KUBECONFIG_TTL = { default: 3600, max: 86_400 } as const;

@QueryParams()
export class KubeconfigQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: KUBECONFIG_TTL.max, default: KUBECONFIG_TTL.default })
  @IsOptional()
  @QueryInt()
  @IsInt(QUERY_INT)
  @Min(1)
  @Max(KUBECONFIG_TTL.max)
  ttlSec?: number;
}

@ApiTags('clusters')
@ApiBearerAuth()
@Controller('v1/clusters')
export class KubeconfigController {
  constructor(@Inject(KubeconfigService) private readonly kubeconfigs: KubeconfigService) {}

  /** 409 cluster_not_running unless running, upgrading or degraded with an API endpoint. */
  @Get(':clusterId/kubeconfig')
  @ClusterScoped('viewer')
  @Header('cache-control', 'no-store')
  @ApiProduces('application/yaml')
  @ApiOkResponse({
    description: 'A kubeconfig with a credential scoped to the caller’s role on the cluster',
    schema: { type: 'string' },
  })
  async issue(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Query() query: KubeconfigQuery,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const ttlSec = query.ttlSec ?? KUBECONFIG_TTL.default;
    const text = await this.kubeconfigs.issue(clusterId, caller, ttlSec, ctx);
    // Only the kubeconfig is YAML: a refusal keeps the JSON error envelope.
    void reply.header('content-type', 'application/yaml; charset=utf-8');
    return text;
  }
}
