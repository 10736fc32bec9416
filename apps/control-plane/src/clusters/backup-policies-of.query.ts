import { Query } from '@nestjs/cqrs';

/** A cluster's backup policy as its view shows it (`velero`), with its next three runs. */
export type ClusterVeleroView = {
  enabled: boolean;
  schedule: string | null;
  ttlHours: number;
  includeNamespaces: string[] | null;
  nextRuns: string[];
};

/**
 * The current backup policy of each of these clusters, by cluster id (a cluster with none set
 * answers the disabled default). Answered by the backups slice (above this one), which adopts
 * the create's `velero` as the first policy.
 */
export class BackupPoliciesOf extends Query<ReadonlyMap<string, ClusterVeleroView>> {
  constructor(readonly clusterIds: readonly string[]) {
    super();
  }
}

/**
 * The reactor (of the backups slice) that adopts a create's `velero` as the cluster's first
 * backup policy: a create with velero enabled waits for it, so the creator reads the policy
 * in its next request.
 */
export const VELERO_AT_CREATE_REACTOR = 'velero-at-create';
