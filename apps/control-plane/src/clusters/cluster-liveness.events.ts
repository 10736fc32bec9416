import { EventCodec } from '@fleet/kernel';

/**
 * The mass-failure guard's record on the cluster stream: while a cluster's reports are
 * stalled, its stale nodes are not taken offline (the likelier fault is the operator or our
 * ingest, not the nodes), and when reports return every clock restarts from then.
 */
export type ClusterLivenessEvent =
  | {
      type: 'ClusterReportsStalled';
      data: {
        clusterId: string;
        staleNodes: Array<{ nodeId: string; hostname: string }>;
        onlineNodes: number;
        lastSeenAt: string | null;
        at: string;
      };
    }
  | {
      type: 'ClusterReportsResumed';
      data: { clusterId: string; stalledSince: string; at: string };
    }
  /**
   * An admin confirmed that the held nodes are really down (a power or network loss of the
   * whole cluster, not the reporting): the hold ends, and every node silent for a full window
   * goes offline at its real last report. Silence from before this moment no longer counts
   * towards the guard.
   */
  | {
      type: 'ClusterOutageConfirmed';
      data: {
        clusterId: string;
        stalledSince: string;
        heldNodes: Array<{ nodeId: string; hostname: string }>;
        reason: string | null;
        at: string;
      };
    };

export const clusterLivenessCodec = new EventCodec<ClusterLivenessEvent>({
  ClusterReportsStalled: 1,
  ClusterReportsResumed: 1,
  ClusterOutageConfirmed: 1,
});
