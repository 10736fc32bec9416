import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { ClusterRoleAnswer, ClusterRoleOf } from '../../platform/auth/cluster-queries';
import { MembersService } from './members.service';

/** The cluster-role guard's question, answered from the clusters read model. */
@QueryHandler(ClusterRoleOf)
export class ClusterRoleOfHandler implements IQueryHandler<ClusterRoleOf, ClusterRoleAnswer> {
  constructor(@Inject(MembersService) private readonly members: MembersService) {}

  execute({ sub, clusterId }: ClusterRoleOf): Promise<ClusterRoleAnswer> {
    return this.members.roleOf(sub, clusterId);
  }
}
