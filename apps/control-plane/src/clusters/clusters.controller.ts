import { ClusterIdPipe } from '../platform/http/ids';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CommandContext, invalidTransition } from '@fleet/kernel';
import { CommandBus } from '@nestjs/cqrs';
import { CurrentCaller, Roles } from '../platform/auth/decorators';
import { Caller } from '../platform/auth/caller';
import { ClusterScoped } from '../platform/auth/cluster-role.guard';
import { MembersService, firstOwner } from './members/members.service';
import { Ctx } from '../platform/http/command-context';
import {
  ClusterCreated,
  ClusterView,
  ConfirmOutageDto,
  CreateClusterDto,
  OperationAccepted,
  TransitionClusterDto,
  UpgradeClusterDto,
} from './clusters.dto';
import { ClusterPoolSpec, OpenClusterOperation } from './open-cluster-operation.command';
import { CheckNodePools } from './check-node-pools.command';
import { CONFIG } from '../platform/runtime/tokens';
import { Config } from '../config/config';
import { ClustersService } from './clusters.service';
import { NoBody } from '../platform/http/no-body';

@ApiTags('clusters')
@ApiBearerAuth()
@Controller('v1/clusters')
export class ClustersController {
  constructor(
    @Inject(ClustersService) private readonly clusters: ClustersService,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(MembersService) private readonly members: MembersService,
  ) {}

  /** A user creator is the first owner; an admin may name one (default: itself). */
  @Post()
  @HttpCode(201)
  @Roles('admin', 'user')
  @ApiCreatedResponse({ type: ClusterCreated })
  async create(
    @Body() { owner: named, ...body }: CreateClusterDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ): Promise<ClusterCreated> {
    // Every refusal before anything is recorded: the owner, the cluster's fields, its pools'.
    const owner = firstOwner(caller, named);
    this.clusters.check(body);
    const pools = (body.nodePools ?? []) as ClusterPoolSpec[];
    await this.commands.execute(new CheckNodePools(pools));
    const created = await this.clusters.create(body, ctx);
    await this.members.addFirstOwner(created.clusterId, owner, ctx);
    // The create_cluster operation makes the pools, asks the provisioner and follows the lifecycle.
    const { operationId } = await this.commands.execute(
      new OpenClusterOperation(created.clusterId, 'create_cluster', null, ctx, pools),
    );
    return { ...created, operationId };
  }

  /**
   * → deleting at once (409 cluster_in_use while sessions run on its nodes); the operation
   * removes its nodes and pools and ends it `deleted`. Deleting one being deleted answers the
   * running operation; a deleted one is 409 invalid_transition.
   */
  @Delete(':clusterId')
  @HttpCode(202)
  @ClusterScoped('owner')
  @ApiAcceptedResponse({ type: OperationAccepted })
  remove(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Ctx() ctx: CommandContext,
  ): Promise<OperationAccepted> {
    return this.commands.execute(
      new OpenClusterOperation(clusterId, 'delete_cluster', 'delete requested', ctx),
    );
  }

  /**
   * running → upgrading at once (409 invalid_transition otherwise; version_skew unless one
   * minor forward within K8S_VERSIONS); the operation ends when it is running again.
   */
  @Post(':clusterId/upgrade')
  @HttpCode(202)
  @ClusterScoped('editor')
  @ApiAcceptedResponse({ type: OperationAccepted })
  async upgrade(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: UpgradeClusterDto,
    @Ctx() ctx: CommandContext,
  ): Promise<OperationAccepted> {
    await this.clusters.execute(
      clusterId,
      {
        type: 'UpgradeCluster',
        data: {
          clusterId,
          k8sVersion: body.k8sVersion,
          catalog: this.config.k8sVersions,
          at: ctx.now.toISOString(),
        },
      },
      ctx,
    );
    return this.commands.execute(
      new OpenClusterOperation(clusterId, 'upgrade_cluster', `upgrade to ${body.k8sVersion}`, ctx),
    );
  }

  /** For a degraded or failed cluster (409 invalid_transition otherwise): ends when it is running again. */
  @Post(':clusterId/repair')
  @NoBody()
  @HttpCode(202)
  @ClusterScoped('editor')
  @ApiAcceptedResponse({ type: OperationAccepted })
  async repair(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Ctx() ctx: CommandContext,
  ): Promise<OperationAccepted> {
    const cluster = await this.clusters.get(clusterId);
    if (cluster.status !== 'degraded' && cluster.status !== 'failed') {
      throw invalidTransition('cluster', cluster.status, 'be repaired');
    }
    return this.commands.execute(
      new OpenClusterOperation(clusterId, 'repair_cluster', `repair from ${cluster.status}`, ctx),
    );
  }

  /** The guard holds silent nodes (cluster_reports_stalled) and they are really down: offline now. */
  @Post(':clusterId/confirm-outage')
  @HttpCode(200)
  @Roles('admin')
  @ApiOkResponse({ type: ClusterView })
  @ApiBody({ type: ConfirmOutageDto, required: false })
  confirmOutage(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: ConfirmOutageDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.clusters.confirmOutage(clusterId, body.reason ?? null, ctx);
  }

  @Get(':clusterId')
  @ClusterScoped('viewer')
  @ApiOkResponse({ type: ClusterView })
  get(@Param('clusterId', ClusterIdPipe) clusterId: string, @CurrentCaller() caller: Caller) {
    return this.clusters.get(clusterId, caller.sub);
  }

  /** The provisioner (or an admin) reports a lifecycle step; any other move is 409 invalid_transition. */
  @Post(':clusterId/transitions')
  @HttpCode(200)
  @Roles('admin')
  @ApiOkResponse({ type: ClusterView })
  transition(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Body() body: TransitionClusterDto,
    @Ctx() ctx: CommandContext,
  ) {
    const { to, reason, apiEndpoint, caCertificate } = body;
    return this.clusters.transition(
      clusterId,
      { to, reason: reason ?? null, apiEndpoint, caCertificate },
      ctx,
    );
  }
}
