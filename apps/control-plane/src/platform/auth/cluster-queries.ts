import { ClusterRole } from './cluster-access';

/*
 * The questions the cluster-role guard asks on the QueryBus. Declared here, in the lowest
 * layer, so the guard needs no slice; each is answered by the slice that owns the answer
 * (clusters the role, pools a pool's cluster, operations an operation's).
 */

/** The caller's role on a cluster: null for a non-member or an unknown cluster. */
export class ClusterRoleOf {
  constructor(
    readonly sub: string,
    readonly clusterId: string,
  ) {}
}
export type ClusterRoleAnswer = ClusterRole | null;

/** The cluster a node pool belongs to, or null when there is no such pool. */
export class ClusterOfPool {
  constructor(readonly poolId: string) {}
}

/** The cluster an operation belongs to, or null when there is none (or no such operation). */
export class ClusterOfOperation {
  constructor(readonly operationId: string) {}
}

export type ClusterOfAnswer = string | null;
