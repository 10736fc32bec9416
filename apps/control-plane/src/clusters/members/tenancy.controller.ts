import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommandContext } from '@fleet/kernel';
import { Caller, OWNER_RULE, isOwner } from '../../platform/auth/caller';
import { ClusterScoped } from '../../platform/auth/cluster-role.guard';
import { CurrentCaller, Roles } from '../../platform/auth/decorators';
import { validationFailed } from '../../platform/errors/error-envelope';
import { Ctx } from '../../platform/http/command-context';
import { ClusterIdPipe } from '../../platform/http/ids';
import { NoBody } from '../../platform/http/no-body';
import {
  ClusterPage,
  ListClustersQuery,
  MemberList,
  MemberView,
  PutMemberDto,
} from './members.dto';
import { MembersService } from './members.service';

const checkSub = (sub: string): string => {
  if (!isOwner(sub)) throw validationFailed([{ field: 'sub', problems: [`sub ${OWNER_RULE}`] }]);
  return sub;
};

/** Clusters as tenants: the list each caller sees, and each cluster's members. */
@ApiTags('clusters')
@ApiBearerAuth()
@Controller('v1/clusters')
export class TenancyController {
  constructor(@Inject(MembersService) private readonly members: MembersService) {}

  @Get()
  @Roles('admin', 'auditor', 'user')
  @ApiOkResponse({ type: ClusterPage })
  list(@Query() query: ListClustersQuery, @CurrentCaller() caller: Caller) {
    return this.members.clustersOf(caller, query);
  }

  @Get(':clusterId/members')
  @ClusterScoped('viewer')
  @ApiOkResponse({ type: MemberList })
  listMembers(@Param('clusterId', ClusterIdPipe) clusterId: string) {
    return this.members.list(clusterId);
  }

  /** Adds a member or changes its role; 409 last_owner for the last owner's demotion. */
  @Put(':clusterId/members/:sub')
  @HttpCode(200)
  @ClusterScoped('owner')
  @ApiOkResponse({ type: MemberView })
  put(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Param('sub') sub: string,
    @Body() body: PutMemberDto,
    @Ctx() ctx: CommandContext,
  ) {
    return this.members.put(clusterId, checkSub(sub), body.role, ctx);
  }

  /** 204 (also when it was no member); 409 last_owner for the last owner. */
  @Delete(':clusterId/members/:sub')
  @NoBody()
  @HttpCode(204)
  @ClusterScoped('owner')
  @ApiNoContentResponse()
  async remove(
    @Param('clusterId', ClusterIdPipe) clusterId: string,
    @Param('sub') sub: string,
    @Ctx() ctx: CommandContext,
  ): Promise<void> {
    await this.members.remove(clusterId, checkSub(sub), ctx);
  }
}
