import { Body, Controller, HttpCode, Inject, Param, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { CommandContext, notFound } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { CIDR_RULE, checkCidr, cidrsOverlap } from '../catalog/cidr';
import { CLUSTERS, ClusterDoc, SetClusterNetwork } from '../clusters';
import { Roles } from '../platform/auth/decorators';
import { validationFailed } from '../platform/errors/error-envelope';
import { Ctx } from '../platform/http/command-context';
import { ClusterIdPipe } from '../platform/http/ids';
import { READ_MODELS } from '../platform/runtime/tokens';
import { ClusterBlocks, networkRefusal } from './mesh-cidr.rule';
import { MESHED_STATUSES } from './mesh.events';
import { MESH_REQUESTS, MeshRequestDoc } from './mesh.projection';

const CIDR = /^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/;

export class ClusterNetworkDto {
  @ApiProperty({ example: '10.244.0.0/16' })
  @IsString()
  @Matches(CIDR, { message: `podCidr must be ${CIDR_RULE}` })
  podCidr!: string;

  @ApiProperty({ example: '10.96.0.0/12' })
  @IsString()
  @Matches(CIDR, { message: `serviceCidr must be ${CIDR_RULE}` })
  serviceCidr!: string;
}

export class ClusterNetworkView extends ClusterNetworkDto {
  @ApiProperty() clusterId!: string;
}

/**
 * A cluster's pod and service blocks set by an admin (a cluster adopted from reports has none,
 * and no mesh until then: 409 cidrs_unknown). Here, beside the mesh rule it must keep: new
 * blocks overlapping a cluster meshed with it are 409 cidr_overlap.
 */
@ApiTags('clusters')
@ApiBearerAuth()
@Controller('v1/clusters/:clusterId/network')
export class ClusterNetworkController {
  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(CommandBus) private readonly commands: CommandBus,
  ) {}

  @Put()
  @HttpCode(200)
  @Roles('admin')
  @ApiOkResponse({ type: ClusterNetworkView })
  async set(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: ClusterNetworkDto,
    @Ctx() ctx: CommandContext,
  ): Promise<ClusterNetworkView> {
    const pod = checkCidr(body.podCidr);
    const service = checkCidr(body.serviceCidr);
    const problems: Array<{ field: string; problems: string[] }> = [];
    if ('problem' in pod) problems.push({ field: 'podCidr', problems: [pod.problem] });
    if ('problem' in service) problems.push({ field: 'serviceCidr', problems: [service.problem] });
    if ('cidr' in pod && 'cidr' in service && cidrsOverlap(pod.cidr, service.cidr)) {
      problems.push({ field: 'serviceCidr', problems: [`overlaps podCidr ${body.podCidr}`] });
    }
    if (problems.length) throw validationFailed(problems);
    if (!(await this.readModels.get(CLUSTERS, clusterId))) throw notFound('cluster', clusterId);
    const links = await findAll<MeshRequestDoc & Doc>(this.readModels, MESH_REQUESTS, {
      clusterIds: clusterId,
      status: { $in: MESHED_STATUSES },
    });
    const clusters = new Map<string, ClusterBlocks>();
    for (const link of links) {
      for (const id of link.clusterIds) {
        const doc = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, id);
        if (doc) clusters.set(id, doc);
      }
    }
    const refusal = networkRefusal({ clusterId, ...body }, links, clusters);
    if (refusal) throw refusal;
    const at = ctx.now.toISOString();
    await this.commands.execute(new SetClusterNetwork({ clusterId, ...body, at }, ctx));
    return { clusterId, podCidr: body.podCidr, serviceCidr: body.serviceCidr };
  }
}
