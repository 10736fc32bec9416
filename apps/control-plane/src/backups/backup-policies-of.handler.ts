import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { BackupPoliciesOf, ClusterVeleroView } from '../clusters';
import { BackupPoliciesService } from './backup-policies.service';

/** The clusters slice's question for its view's `velero`: each cluster's policy now. */
@QueryHandler(BackupPoliciesOf)
export class BackupPoliciesOfHandler implements IQueryHandler<BackupPoliciesOf> {
  constructor(@Inject(BackupPoliciesService) private readonly policies: BackupPoliciesService) {}

  async execute({ clusterIds }: BackupPoliciesOf): Promise<Map<string, ClusterVeleroView>> {
    const views = await this.policies.viewsOf(clusterIds);
    return new Map(
      [...views].map(
        ([clusterId, { enabled, schedule, ttlHours, includeNamespaces, nextRuns }]) => [
          clusterId,
          { enabled, schedule, ttlHours, includeNamespaces, nextRuns },
        ],
      ),
    );
  }
}
