import { uuidFrom } from '@fleet/kernel';
import { ClusterLivenessCommand, ClusterLivenessState } from '../../clusters';
import { GuardNode, isMassFailure, weighSilence } from './mass-failure';

/*
 * The mass-failure guard's verdict (pure), for the liveness workflow's due nodes: after
 * Kubernetes' zone-disruption handling, nodes of a cluster falling silent together are held,
 * not taken offline, and the stall is recorded on the cluster stream once.
 */

/** An online node of a cluster as the guard weighs it (see `lastSeen`, `silentSince`). */
export type WeighedNode = GuardNode & {
  readonly nodeId: string;
  readonly hostname: string;
  /** Its last sighting on record (`lastSeen(...).proof`). */
  readonly lastSeenAt: number;
};

export type GuardConfig = {
  readonly staleMs: number;
  readonly massFailureRatio: number;
  readonly massFailureMinNodes: number;
};

export type ClusterVerdict = {
  /** Whether a due node of the cluster is held rather than taken offline. */
  readonly holds: (nodeId: string) => boolean;
  /** The stall to mark on the cluster stream, when these nodes fell silent together. */
  readonly stall: {
    readonly commandId: string;
    readonly command: Extract<ClusterLivenessCommand, { type: 'MarkClusterReportsStalled' }>;
  } | null;
  readonly staleNodes: number;
  readonly judgedNodes: number;
};

/**
 * The mass-failure guard for one cluster: which of its due nodes are held, and whether a stall
 * begins. `revision`: the cluster stream's, so that one stall is marked once however many
 * replicas notice it.
 */
export const weighCluster = (
  clusterId: string,
  nodes: readonly WeighedNode[],
  cluster: { readonly state: ClusterLivenessState; readonly revision: number | null },
  at: number,
  config: GuardConfig,
): ClusterVerdict => {
  const { state } = cluster;
  const confirmed =
    state.status === 'reporting' && state.outageConfirmedAt
      ? Date.parse(state.outageConfirmedAt)
      : null;
  // Silence an admin confirmed as an outage is not held again, and nodes a pool operation
  // is removing are expected to fall silent: both left out (see weighSilence).
  const { judged, stale } = weighSilence(nodes, at, config.staleMs, confirmed);
  const massFailure = (count: number) =>
    isMassFailure(count, judged.length, config.massFailureRatio, config.massFailureMinNodes);
  const counts = { staleNodes: stale.length, judgedNodes: judged.length };
  if (state.status === 'stalled') {
    // The stall holds the nodes that fell silent together, not every node that falls silent
    // while it lasts: one that stops later, while others report, is a node's own failure and
    // goes offline, unless the nodes not held stop together in numbers of their own.
    const held = state.held;
    const again = massFailure(stale.filter((n) => !held.has(n.nodeId)).length);
    return { holds: (nodeId) => again || held.has(nodeId), stall: null, ...counts };
  }
  if (!massFailure(stale.length)) return { holds: () => false, stall: null, ...counts };
  // The latest real report among them, not a restarted clock (see `silentSince`).
  const lastSeenAt = stale.reduce((m, n) => Math.max(m, n.lastSeenAt), 0);
  return {
    holds: () => true,
    stall: {
      commandId: uuidFrom('cluster-stalled', clusterId, String(cluster.revision ?? -1)),
      command: {
        type: 'MarkClusterReportsStalled',
        data: {
          clusterId,
          staleNodes: stale.map((n) => ({ nodeId: n.nodeId, hostname: n.hostname })),
          onlineNodes: judged.length,
          lastSeenAt: lastSeenAt ? new Date(lastSeenAt).toISOString() : null,
          at: new Date(at).toISOString(),
        },
      },
    },
    ...counts,
  };
};
