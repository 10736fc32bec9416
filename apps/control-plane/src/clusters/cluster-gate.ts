import { DomainError } from '@fleet/kernel';
import type { ClusterState } from './cluster.decider';

/** The statuses in which a cluster takes pool changes and new sessions (API.md, v1.1). */
export const WORKING_CLUSTER_STATUSES: readonly string[] = ['running', 'upgrading', 'degraded'];

/**
 * Refuses API work on a cluster that is not running, upgrading or degraded: 409
 * cluster_not_running naming the cluster and its status. Only commands from the API are
 * gated; an operation's own steps (a delete removing pools on a deleting cluster) are not.
 * An absent cluster is left to the caller (404 there).
 */
export const refuseUnlessWorking = (clusterId: string, state: ClusterState): void => {
  if (state.status === 'absent' || WORKING_CLUSTER_STATUSES.includes(state.status)) return;
  throw new DomainError(
    'cluster_not_running',
    `cluster ${clusterId} is ${state.status}: it takes this only when running, upgrading or degraded`,
    'conflict',
    { clusterId, status: state.status },
  );
};

/**
 * Whether placement may put a session on a node of a cluster in this state. A cluster with no
 * stream yet is one an operator's first report is being adopted from (adopted clusters are
 * running), so its nodes stay candidates.
 */
export const takesPlacements = (state: ClusterState): boolean =>
  state.status === 'absent' || WORKING_CLUSTER_STATUSES.includes(state.status);
