import { Decider, DomainError, assertNever, invalidTransition, notFound } from '@fleet/kernel';
import { AllocateOnNodeData, allocateOnNode, releaseOnNode } from './node-allocation.rules';
import { ReportNodeData, decideReport } from './node-report.rules';
import { ExistingNode, onlineStatus } from './node-status';
import {
  DrainMode,
  NodeEvent,
  NodeFacts,
  NodeState,
  evolveNode,
  initialNodeState,
  isBeingRemoved,
} from './node.events';

// The node's rules live beside it by concern (reports, allocation, status); other files import
// them from here, as they did when this file held them all.
export type { NodeReport } from './node-report.rules';
export { isOutOfOrder, modeFromLabels } from './node-report.rules';
export type { SessionDemand } from './node-allocation.rules';
export { chooseAllocation } from './node-allocation.rules';
export type { DisplayStatus } from './node-status';
export { displayStatus } from './node-status';

export type NodeCommand =
  | { type: 'ReportNode'; data: ReportNodeData }
  | { type: 'TimeOutNodeHeartbeat'; data: { lastSeenAt: string; staleSec: number; at: string } }
  | { type: 'CordonNode'; data: { reason: string | null; at: string } }
  | { type: 'UncordonNode'; data: { at: string } }
  /** The cordon-sync deadline fired for the desired state `desired` (a timeout as a command). */
  | { type: 'FlagCordonSyncOverdue'; data: { desired: boolean; at: string } }
  | { type: 'DeleteNode'; data: { at: string } }
  | { type: 'AssignNodeToPool'; data: { poolId: string | null; at: string } }
  | { type: 'AllocateOnNode'; data: AllocateOnNodeData }
  | { type: 'ReleaseOnNode'; data: { sessionId: string; at: string } }
  | {
      type: 'StartNodeDrain';
      /** `inPool`: a pool operation's drain, of a node it chose from that pool (still there). */
      data: { drainId: string; mode: DrainMode; at: string; inPool?: string };
    }
  | { type: 'EndNodeDrain'; data: { drainId: string; at: string } }
  /** A pool operation's last check before the provisioner is asked to remove the node. */
  | {
      type: 'RequestNodeRemoval';
      /** `poolId`: the pool the operation removes it from (it must still be there). */
      data: { operationId: string; poolId: string; until: string; at: string };
    };

type DataOf<T extends NodeCommand['type']> = Extract<NodeCommand, { type: T }>['data'];

const existing = (
  state: NodeState,
  // Stryker disable next-line StringLiteral: no caller passes it; nodes.commands names the node in its not_found
  nodeId = '',
): ExistingNode => {
  if (state.status === 'online' || state.status === 'offline') return state;
  throw notFound('node', state.status === 'deleted' ? state.nodeId : nodeId);
};

/**
 * A node a pool operation is removing (until its deadline) stays as the operation left it:
 * neither uncordoned (sessions would land on it) nor moved to another pool (the operation
 * would still delete it, out of that pool).
 */
const refuseWhileBeingRemoved = (node: NodeFacts, at: string): void => {
  const removal = node.removal;
  if (removal && isBeingRemoved(removal, Date.parse(at))) {
    throw new DomainError(
      'node_being_removed',
      `node ${node.hostname} is being removed by operation ${removal.operationId}`,
      'conflict',
      { operationId: removal.operationId },
    );
  }
};

/** Silent past its deadline: offline, unless it reported since the timeout was set (stale). */
const timeOutHeartbeat = (data: DataOf<'TimeOutNodeHeartbeat'>, state: NodeState): NodeEvent[] => {
  if (state.status !== 'online') return [];
  const deadline = Date.parse(data.lastSeenAt) + data.staleSec * 1000;
  if (deadline > Date.parse(data.at)) return []; // reported since: a stale timeout
  return [
    {
      type: 'NodeWentOffline',
      data: {
        nodeId: state.nodeId,
        clusterId: state.clusterId,
        hostname: state.hostname,
        reason: 'heartbeat_timeout',
        from: onlineStatus(state),
        lastSeenAt: data.lastSeenAt,
        at: data.at,
      },
    },
  ];
};

const requestRemoval = (data: DataOf<'RequestNodeRemoval'>, state: NodeState): NodeEvent[] => {
  if (state.status !== 'online' && state.status !== 'offline') return []; // gone already
  const { operationId, poolId, until, at } = data;
  if (state.removal?.operationId === operationId) return [];
  // Moved by an admin since the operation chose it: it belongs to another pool now.
  if (state.poolId !== poolId) {
    throw new DomainError(
      'node_in_use',
      `node ${state.hostname} was moved to another pool since it was chosen: not removed`,
      'conflict',
      { nodeId: state.nodeId, sessions: Object.keys(state.allocations).length },
    );
  }
  // Nothing runs on an offline node (its sessions are ended); an online one must still be
  // as its drain left it: an admin who uncordoned it took it back, and removing it would
  // end whatever was placed there since.
  const sessions = Object.keys(state.allocations).length;
  if (state.status === 'online' && (!state.cordon.desired || sessions > 0)) {
    const why = [
      ...(state.cordon.desired ? [] : ['was uncordoned']),
      ...(sessions > 0 ? [`holds ${sessions} session(s)`] : []),
    ].join(' and ');
    throw new DomainError(
      'node_in_use',
      `node ${state.hostname} ${why} since its drain: not removed`,
      'conflict',
      { nodeId: state.nodeId, sessions },
    );
  }
  return [{ type: 'NodeRemovalRequested', data: { nodeId: state.nodeId, operationId, until, at } }];
};

const flagCordonSyncOverdue = (
  data: DataOf<'FlagCordonSyncOverdue'>,
  state: NodeState,
): NodeEvent[] => {
  if (state.status !== 'online' && state.status !== 'offline') return [];
  const { desired, since, overdue } = state.cordon;
  // Stale (the desired state changed again), never changed, already flagged, or synced: nothing.
  if (desired !== data.desired || since === null || overdue) return [];
  if (state.observedUnschedulable === desired) return [];
  return [
    {
      type: 'NodeCordonSyncWentOverdue',
      data: {
        nodeId: state.nodeId,
        clusterId: state.clusterId,
        hostname: state.hostname,
        desired,
        observed: state.observedUnschedulable,
        since,
        at: data.at,
      },
    },
  ];
};

const deleteNode = (data: DataOf<'DeleteNode'>, node: ExistingNode): NodeEvent[] => {
  if (node.status !== 'offline') {
    throw new DomainError(
      'node_not_offline',
      `node ${node.hostname} is online; only an offline node can be deleted`,
      'conflict',
    );
  }
  const sessions = Object.keys(node.allocations);
  if (sessions.length > 0) {
    throw new DomainError(
      'node_busy',
      `node ${node.hostname} still holds ${sessions.length} session(s)`,
      'conflict',
      { sessions },
    );
  }
  return [
    {
      type: 'NodeDeleted',
      data: {
        nodeId: node.nodeId,
        clusterId: node.clusterId,
        hostname: node.hostname,
        at: data.at,
      },
    },
  ];
};

const startDrain = (data: DataOf<'StartNodeDrain'>, node: ExistingNode): NodeEvent[] => {
  if (node.drainId === data.drainId) return [];
  if (node.drainId !== null) throw invalidTransition('node', 'draining', 'start another drain');
  if (node.status !== 'online') throw invalidTransition('node', 'offline', 'be drained');
  const { drainId, mode, at, inPool } = data;
  if (inPool !== undefined && node.poolId !== inPool) {
    throw new DomainError(
      'node_in_use',
      `node ${node.hostname} was moved to another pool since it was chosen: not drained`,
      'conflict',
      { nodeId: node.nodeId, sessions: Object.keys(node.allocations).length },
    );
  }
  // Cordon first: nothing new lands on the node while it is emptied.
  const cordon: NodeEvent[] = node.cordon.desired
    ? []
    : [{ type: 'NodeCordoned', data: { nodeId: node.nodeId, reason: `drain ${drainId}`, at } }];
  return [
    ...cordon,
    { type: 'NodeDrainStarted', data: { nodeId: node.nodeId, drainId, mode, at } },
  ];
};

export const decideNode = (command: NodeCommand, state: NodeState): NodeEvent[] => {
  switch (command.type) {
    case 'ReportNode':
      return decideReport(command.data, state);
    case 'TimeOutNodeHeartbeat':
      return timeOutHeartbeat(command.data, state);
    case 'CordonNode': {
      const node = existing(state);
      if (node.cordon.desired) return [];
      const { reason, at } = command.data;
      return [{ type: 'NodeCordoned', data: { nodeId: node.nodeId, reason, at } }];
    }
    case 'UncordonNode': {
      const node = existing(state);
      if (!node.cordon.desired) return [];
      refuseWhileBeingRemoved(node, command.data.at);
      return [{ type: 'NodeUncordoned', data: { nodeId: node.nodeId, at: command.data.at } }];
    }
    case 'RequestNodeRemoval':
      return requestRemoval(command.data, state);
    case 'FlagCordonSyncOverdue':
      return flagCordonSyncOverdue(command.data, state);
    case 'DeleteNode':
      return deleteNode(command.data, existing(state));
    case 'AssignNodeToPool': {
      const node = existing(state);
      const { poolId, at } = command.data;
      if (node.poolId === poolId) return [];
      refuseWhileBeingRemoved(node, at);
      return [{ type: 'NodeAssignedToPool', data: { nodeId: node.nodeId, poolId, at } }];
    }
    case 'AllocateOnNode':
      return allocateOnNode(command.data, existing(state));
    case 'ReleaseOnNode':
      return releaseOnNode(command.data, state);
    case 'StartNodeDrain':
      return startDrain(command.data, existing(state));
    case 'EndNodeDrain': {
      if (state.status !== 'online' && state.status !== 'offline') return [];
      const { drainId, at } = command.data;
      if (state.drainId !== drainId) return [];
      return [{ type: 'NodeDrainEnded', data: { nodeId: state.nodeId, drainId, at } }];
    }
    default:
      return assertNever(command, 'node command');
  }
};

export const nodeDecider: Decider<NodeCommand, NodeEvent, NodeState> = {
  decide: decideNode,
  evolve: evolveNode,
  initialState: initialNodeState,
};
