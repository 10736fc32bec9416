import { Aggregate } from '@fleet/cqrs';
import { Decider, DomainError, assertNever } from '@fleet/kernel';
import { ClusterLivenessEvent, clusterLivenessCodec } from './cluster-liveness.events';

export type ClusterLivenessCommand =
  | {
      type: 'MarkClusterReportsStalled';
      data: {
        clusterId: string;
        staleNodes: Array<{ nodeId: string; hostname: string }>;
        onlineNodes: number;
        lastSeenAt: string | null;
        at: string;
      };
    }
  /** Nodes of the cluster reported; the stall ends when any held node is among them. */
  | {
      type: 'ResumeClusterReports';
      data: { clusterId: string; reportedNodeIds: string[]; at: string };
    }
  /** An admin: the held nodes are really down; take them offline instead of holding them. */
  | {
      type: 'ConfirmClusterOutage';
      data: { clusterId: string; reason: string | null; at: string };
    };

export type ClusterLivenessState =
  | {
      status: 'reporting';
      resumedAt: string | null;
      /** When an admin last confirmed an outage: silence from before then is not the guard's. */
      outageConfirmedAt: string | null;
    }
  | {
      status: 'stalled';
      stalledAt: string;
      held: ReadonlySet<string>;
      heldNodes: ReadonlyArray<{ nodeId: string; hostname: string }>;
    };

export const clusterNotStalled = (clusterId: string): DomainError =>
  new DomainError(
    'cluster_not_stalled',
    `cluster ${clusterId} has no stall held: its nodes go offline as their reports stop`,
    'conflict',
    { clusterId },
  );

export const clusterLivenessDecider: Decider<
  ClusterLivenessCommand,
  ClusterLivenessEvent,
  ClusterLivenessState
> = {
  initialState: () => ({ status: 'reporting', resumedAt: null, outageConfirmedAt: null }),
  evolve: (_state, event) => {
    switch (event.type) {
      case 'ClusterReportsStalled':
        return {
          status: 'stalled',
          stalledAt: event.data.at,
          held: new Set(event.data.staleNodes.map((n) => n.nodeId)),
          heldNodes: event.data.staleNodes,
        };
      case 'ClusterReportsResumed':
        return { status: 'reporting', resumedAt: event.data.at, outageConfirmedAt: null };
      case 'ClusterOutageConfirmed':
        // No restarted clocks: the silent nodes are due at once, timed from their real reports.
        return { status: 'reporting', resumedAt: null, outageConfirmedAt: event.data.at };
      default:
        return assertNever(event, 'cluster liveness event');
    }
  },
  decide: (command, state) => {
    switch (command.type) {
      case 'MarkClusterReportsStalled':
        // One notification per stall, however many timeouts notice it.
        return state.status === 'stalled'
          ? []
          : [{ type: 'ClusterReportsStalled', data: command.data }];
      case 'ResumeClusterReports': {
        // Healthy nodes keep reporting through a stall; only a held node's report ends it.
        if (state.status !== 'stalled') return [];
        const held = state.held;
        if (!command.data.reportedNodeIds.some((id) => held.has(id))) return [];
        const { clusterId, at } = command.data;
        return [
          { type: 'ClusterReportsResumed', data: { clusterId, at, stalledSince: state.stalledAt } },
        ];
      }
      case 'ConfirmClusterOutage': {
        if (state.status !== 'stalled') throw clusterNotStalled(command.data.clusterId);
        const { clusterId, reason, at } = command.data;
        return [
          {
            type: 'ClusterOutageConfirmed',
            data: {
              clusterId,
              stalledSince: state.stalledAt,
              heldNodes: [...state.heldNodes],
              reason,
              at,
            },
          },
        ];
      }
      default:
        return assertNever(command, 'cluster liveness command');
    }
  },
};

export const clusterLivenessAggregate: Aggregate<
  ClusterLivenessCommand,
  ClusterLivenessEvent,
  ClusterLivenessState
> = {
  name: 'cluster-liveness',
  decider: clusterLivenessDecider,
  codec: clusterLivenessCodec,
};
