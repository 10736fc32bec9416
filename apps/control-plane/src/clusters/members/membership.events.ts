import { EventCodec } from '@fleet/kernel';
import { ClusterRole } from '../../platform/auth/cluster-access';

export { CLUSTER_ROLES, ClusterRole } from '../../platform/auth/cluster-access';

/**
 * A cluster's members, kept on the cluster's own stream (as the liveness guard's events are):
 * the cluster document that lists, filters and guards reads both in one projection, ordered
 * by one revision. Each event names who acted (`addedBy`, `by`).
 */
export type MembershipEvent =
  | {
      type: 'MemberAdded';
      data: { clusterId: string; sub: string; role: ClusterRole; addedBy: string; at: string };
    }
  | {
      type: 'MemberRoleChanged';
      data: {
        clusterId: string;
        sub: string;
        from: ClusterRole;
        to: ClusterRole;
        by: string;
        at: string;
      };
    }
  | {
      type: 'MemberRemoved';
      data: { clusterId: string; sub: string; role: ClusterRole; by: string; at: string };
    };

export const membershipCodec = new EventCodec<MembershipEvent>({
  MemberAdded: 1,
  MemberRoleChanged: 1,
  MemberRemoved: 1,
});
