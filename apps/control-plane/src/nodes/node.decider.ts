import {
  Decider,
  DomainError,
  assertNever,
  invalidTransition,
  notFound,
} from '../../../../libs/kernel/src';
import { GpuModel } from '../catalog/catalog';
import {
  Capacity,
  DrainMode,
  GpuCard,
  NodeEvent,
  NodeFacts,
  NodeMode,
  NodeRole,
  NodeState,
  evolveNode,
  initialNodeState,
  isBeingRemoved,
} from './node.events';

/** One node as the operator reports it (normalised at the edge: times are ISO strings). */
export type NodeReport = {
  readonly clusterId: string;
  readonly hostname: string;
  readonly role: NodeRole;
  readonly labels: Readonly<Record<string, string>>;
  readonly capacity: Capacity;
  readonly gpus: readonly GpuCard[];
  readonly kubeletReady: boolean;
  /** What the Kubernetes node object says now; null when the operator did not say. */
  readonly unschedulable: boolean | null;
  readonly observedAt: string | null;
};

export type SessionDemand =
  | { readonly kind: 'gpu'; readonly gpuModel: GpuModel; readonly gpuCount: number }
  | { readonly kind: 'cpu'; readonly cpu: number; readonly memoryGiB: number };

export type NodeCommand =
  | {
      type: 'ReportNode';
      data: {
        nodeId: string;
        report: NodeReport;
        receivedAt: string;
        /** The newest `observedAt` seen for this node by the heartbeat store (reports that changed nothing). */
        newestObservedAt: string | null;
      };
    }
  | { type: 'TimeOutNodeHeartbeat'; data: { lastSeenAt: string; staleSec: number; at: string } }
  | { type: 'CordonNode'; data: { reason: string | null; at: string } }
  | { type: 'UncordonNode'; data: { at: string } }
  /** The cordon-sync deadline fired for the desired state `desired` (a timeout as a command). */
  | { type: 'FlagCordonSyncOverdue'; data: { desired: boolean; at: string } }
  | { type: 'DeleteNode'; data: { at: string } }
  | { type: 'AssignNodeToPool'; data: { poolId: string | null; at: string } }
  | {
      type: 'AllocateOnNode';
      data: { sessionId: string; owner: string; demand: SessionDemand; at: string };
    }
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

export const modeFromLabels = (labels: Readonly<Record<string, string>>): NodeMode =>
  labels['fleet/mode'] === 'dedicated' ? 'dedicated' : 'shared';

export type DisplayStatus = 'ready' | 'busy' | 'cordoned' | 'offline';

/** The Nodes screen's status: offline > cordoned > busy (holds sessions) > ready. */
export const displayStatus = (state: NodeState): DisplayStatus | null => {
  if (state.status !== 'online' && state.status !== 'offline') return null;
  if (state.status === 'offline') return 'offline';
  if (state.cordon.desired) return 'cordoned';
  return Object.keys(state.allocations).length > 0 ? 'busy' : 'ready';
};

/** The status a node shows while online (or would show once back online). */
const onlineStatus = (node: NodeFacts): 'ready' | 'busy' | 'cordoned' =>
  node.cordon.desired ? 'cordoned' : Object.keys(node.allocations).length > 0 ? 'busy' : 'ready';

/** Whether `observedAt` is before the later of `applied` and `newest` (null: not a time yet). */
const observedBefore = (
  observedAt: string | null,
  applied: string | null,
  newest: string | null,
): boolean => {
  // Stryker disable next-line ConditionalExpression: an early exit, the test below answers false for these too
  if (observedAt === null || (applied === null && newest === null)) return false;
  // Each time parsed once: the common report is in order, and is checked on every report.
  const at = Date.parse(observedAt);
  return (
    (applied !== null && at < Date.parse(applied)) || (newest !== null && at < Date.parse(newest))
  );
};

/** A report older (by the operator's observedAt) than the newest one applied changes nothing. */
export const isOutOfOrder = (
  report: Pick<NodeReport, 'observedAt'>,
  state: NodeState,
  newestObservedAt: string | null,
): boolean =>
  observedBefore(
    report.observedAt,
    state.status === 'online' || state.status === 'offline' ? state.observedAt : null,
    newestObservedAt,
  );

const sameRecord = (
  a: Readonly<Record<string, unknown>>,
  b: Readonly<Record<string, unknown>>,
): boolean => {
  // Object.keys(a) and (b) of the same length, every a[k] === b[k]; without the key arrays.
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    n++;
  }
  for (const _k in b) n--;
  return n === 0;
};

const sameCard = (a: GpuCard, b: GpuCard): boolean =>
  a.model === b.model && a.memoryGiB === b.memoryGiB;

/**
 * The same cards in the same order, each uuid once: the comparison by uuid below would find
 * nothing added or removed. (With a uuid twice it could: it keeps the last card of a uuid.)
 */
const sameCardList = (a: readonly GpuCard[], b: readonly GpuCard[]): boolean => {
  // A false answer only sends the lists to the comparison by uuid, which finds the same: the
  // mutants that answer false more often are equivalent (the spec holds the two paths equal).
  // Stryker disable next-line ConditionalExpression: equivalent, see above
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    // Stryker disable next-line ConditionalExpression: equivalent, see above
    if (a[i].uuid !== b[i].uuid || !sameCard(a[i], b[i])) return false;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, see above
    for (let j = 0; j < i; j++) if (b[j].uuid === b[i].uuid) return false;
  }
  // Stryker disable next-line BooleanLiteral: equivalent, see above
  return true;
};

type ReportData = Extract<NodeCommand, { type: 'ReportNode' }>['data'];

/** What every event of a report carries. */
const stampOf = (data: ReportData) => ({
  nodeId: data.nodeId,
  observedAt: data.report.observedAt,
  at: data.receivedAt,
});

/** Which node an offline or online event is about. */
const whoOf = (nodeId: string, state: NodeFacts) => ({
  nodeId,
  clusterId: state.clusterId,
  hostname: state.hostname,
});

const decideReport = (data: ReportData, state: NodeState): NodeEvent[] => {
  const { report, receivedAt, nodeId } = data;
  if (state.status === 'absent' || state.status === 'deleted') {
    return [
      {
        type: 'NodeRegistered',
        data: {
          nodeId,
          clusterId: report.clusterId,
          hostname: report.hostname,
          role: report.role,
          labels: report.labels,
          mode: modeFromLabels(report.labels),
          capacity: report.capacity,
          gpus: report.gpus,
          kubeletReady: report.kubeletReady,
          unschedulable: report.unschedulable,
          observedAt: report.observedAt,
          registeredAt: receivedAt,
        },
      },
    ];
  }
  if (observedBefore(report.observedAt, state.observedAt, data.newestObservedAt)) {
    // An older report than one already applied: out of order, its content changes nothing.
    // But it arrived: a node offline only for silence, Ready as the newest report said, is
    // back (staleness goes by receive time; an operator whose clock stepped back still reports).
    if (
      state.status === 'offline' &&
      // Stryker disable next-line ConditionalExpression: equivalent, kubelet_not_ready always comes with kubeletReady false
      state.offlineReason === 'heartbeat_timeout' &&
      state.kubeletReady
    ) {
      return [
        {
          type: 'NodeCameOnline',
          data: {
            nodeId,
            clusterId: state.clusterId,
            hostname: state.hostname,
            offlineSince: state.offlineSince,
            to: onlineStatus(state),
            at: receivedAt,
          },
        },
      ];
    }
    return [];
  }
  const events: NodeEvent[] = [];
  // The common report changes nothing: nothing is made for it beyond the empty list (it is
  // decided for every report of every node), so the events' common fields are made per event.
  const mode = modeFromLabels(report.labels);
  const roleChanged = report.role !== state.role;
  const labelsChanged = !sameRecord(report.labels, state.labels);
  const modeChanged = mode !== state.mode;
  const capacityChanged = !sameRecord(report.capacity, state.capacity);
  if (roleChanged || labelsChanged || modeChanged || capacityChanged) {
    const changed: { -readonly [K in 'role' | 'labels' | 'mode' | 'capacity']?: NodeFacts[K] } = {};
    if (roleChanged) changed.role = report.role;
    if (labelsChanged) changed.labels = report.labels;
    if (modeChanged) changed.mode = mode;
    if (capacityChanged) changed.capacity = report.capacity;
    events.push({ type: 'NodeInventoryChanged', data: { ...changed, ...stampOf(data) } });
  }

  // The common report lists the same cards in the same order: nothing to compare by uuid.
  // Stryker disable next-line ConditionalExpression: equivalent, the comparison by uuid finds the same
  if (!sameCardList(state.gpus, report.gpus)) {
    const before = new Map(state.gpus.map((g) => [g.uuid, g]));
    const after = new Map(report.gpus.map((g) => [g.uuid, g]));
    const removed = [...before.keys()].filter(
      (u) => !after.has(u) || !sameCard(before.get(u)!, after.get(u)!),
    );
    const added = report.gpus.filter(
      (g) => !before.has(g.uuid) || !sameCard(before.get(g.uuid)!, g),
    );
    if (removed.length > 0 || added.length > 0) {
      events.push({ type: 'NodeGpusChanged', data: { ...stampOf(data), added, removed } });
    }
  }
  if (report.unschedulable !== null && report.unschedulable !== state.observedUnschedulable) {
    events.push({
      type: 'NodeUnschedulableObserved',
      data: { ...stampOf(data), unschedulable: report.unschedulable },
    });
  }
  if (state.status === 'online' && !report.kubeletReady) {
    events.push({
      type: 'NodeWentOffline',
      data: {
        ...whoOf(nodeId, state),
        reason: 'kubelet_not_ready',
        from: onlineStatus(state),
        lastSeenAt: receivedAt,
        at: receivedAt,
      },
    });
  } else if (state.status === 'offline' && report.kubeletReady) {
    events.push({
      type: 'NodeCameOnline',
      data: {
        ...whoOf(nodeId, state),
        offlineSince: state.offlineSince,
        to: onlineStatus(state),
        at: receivedAt,
      },
    });
  } else if (state.status === 'offline' && state.kubeletReady) {
    // Offline for silence, now reporting NotReady: still offline, for its kubelet now.
    events.push({ type: 'NodeReadinessObserved', data: { ...stampOf(data), kubeletReady: false } });
  }
  return events;
};

const existing = (
  state: NodeState,
  // Stryker disable next-line StringLiteral: no caller passes it; nodes.commands names the node in its not_found
  nodeId = '',
): Extract<NodeState, { status: 'online' | 'offline' }> => {
  if (state.status === 'online' || state.status === 'offline') return state;
  throw notFound('node', state.status === 'deleted' ? state.nodeId : nodeId);
};

const refuse = (code: string, message: string, details: Record<string, unknown> = {}): never => {
  throw new DomainError(code, message, 'conflict', details);
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

/** Picks the cards (or vCPUs) a session takes on this node, or refuses with the reason. */
export const chooseAllocation = (
  node: NodeFacts & { status: 'online' | 'offline' },
  demand: SessionDemand,
): { gpus: string[]; cpu: number; memoryGiB: number } => {
  if (node.status !== 'online') refuse('node_unavailable', `node ${node.hostname} is offline`);
  if (node.cordon.desired) refuse('node_unavailable', `node ${node.hostname} is cordoned`);
  if (node.drainId !== null) refuse('node_unavailable', `node ${node.hostname} is draining`);
  const held = Object.values(node.allocations);
  if (node.mode === 'dedicated' && held.length > 0) {
    refuse('node_unavailable', `node ${node.hostname} is dedicated and already holds a session`);
  }
  if (demand.kind === 'gpu') {
    if (node.role !== 'gpu') refuse('node_unavailable', `node ${node.hostname} is not a GPU node`);
    const taken = new Set(held.flatMap((a) => a.gpus));
    const free = node.gpus
      .filter((g) => g.model === demand.gpuModel && !taken.has(g.uuid))
      .map((g) => g.uuid)
      .sort();
    if (free.length < demand.gpuCount) {
      refuse(
        'insufficient_capacity',
        `node ${node.hostname} has ${free.length} free ${demand.gpuModel} cards`,
        {
          free: free.length,
        },
      );
    }
    return { gpus: free.slice(0, demand.gpuCount), cpu: 0, memoryGiB: 0 };
  }
  if (node.role !== 'cpu') refuse('node_unavailable', `node ${node.hostname} is not a CPU node`);
  const usedCpu = held.reduce((s, a) => s + a.cpu, 0);
  const usedMem = held.reduce((s, a) => s + a.memoryGiB, 0);
  if (
    usedCpu + demand.cpu > node.capacity.cpu ||
    usedMem + demand.memoryGiB > node.capacity.memoryGiB
  ) {
    refuse(
      'insufficient_capacity',
      `node ${node.hostname} lacks ${demand.cpu} vCPU / ${demand.memoryGiB} GiB`,
    );
  }
  return { gpus: [], cpu: demand.cpu, memoryGiB: demand.memoryGiB };
};

export const decideNode = (command: NodeCommand, state: NodeState): NodeEvent[] => {
  switch (command.type) {
    case 'ReportNode':
      return decideReport(command.data, state);
    case 'TimeOutNodeHeartbeat': {
      if (state.status !== 'online') return [];
      const deadline = Date.parse(command.data.lastSeenAt) + command.data.staleSec * 1000;
      if (deadline > Date.parse(command.data.at)) return []; // reported since: a stale timeout
      return [
        {
          type: 'NodeWentOffline',
          data: {
            nodeId: state.nodeId,
            clusterId: state.clusterId,
            hostname: state.hostname,
            reason: 'heartbeat_timeout',
            from: onlineStatus(state),
            lastSeenAt: command.data.lastSeenAt,
            at: command.data.at,
          },
        },
      ];
    }
    case 'CordonNode': {
      const node = existing(state);
      if (node.cordon.desired) return [];
      return [
        {
          type: 'NodeCordoned',
          data: { nodeId: node.nodeId, reason: command.data.reason, at: command.data.at },
        },
      ];
    }
    case 'UncordonNode': {
      const node = existing(state);
      if (!node.cordon.desired) return [];
      refuseWhileBeingRemoved(node, command.data.at);
      return [{ type: 'NodeUncordoned', data: { nodeId: node.nodeId, at: command.data.at } }];
    }
    case 'RequestNodeRemoval': {
      if (state.status !== 'online' && state.status !== 'offline') return []; // gone already
      const { operationId, poolId, until, at } = command.data;
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
      return [
        { type: 'NodeRemovalRequested', data: { nodeId: state.nodeId, operationId, until, at } },
      ];
    }
    case 'FlagCordonSyncOverdue': {
      if (state.status !== 'online' && state.status !== 'offline') return [];
      const { desired, since, overdue } = state.cordon;
      // Stale (the desired state changed again), never changed, already flagged, or synced: nothing.
      if (desired !== command.data.desired || since === null || overdue) return [];
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
            at: command.data.at,
          },
        },
      ];
    }
    case 'DeleteNode': {
      const node = existing(state);
      if (node.status !== 'offline') {
        refuse(
          'node_not_offline',
          `node ${node.hostname} is online; only an offline node can be deleted`,
        );
      }
      const sessions = Object.keys(node.allocations);
      if (sessions.length > 0) {
        refuse('node_busy', `node ${node.hostname} still holds ${sessions.length} session(s)`, {
          sessions,
        });
      }
      return [
        {
          type: 'NodeDeleted',
          data: {
            nodeId: node.nodeId,
            clusterId: node.clusterId,
            hostname: node.hostname,
            at: command.data.at,
          },
        },
      ];
    }
    case 'AssignNodeToPool': {
      const node = existing(state);
      if (node.poolId === command.data.poolId) return [];
      refuseWhileBeingRemoved(node, command.data.at);
      return [
        {
          type: 'NodeAssignedToPool',
          data: { nodeId: node.nodeId, poolId: command.data.poolId, at: command.data.at },
        },
      ];
    }
    case 'AllocateOnNode': {
      const node = existing(state);
      if (node.allocations[command.data.sessionId]) return []; // already placed here: a retry
      const chosen = chooseAllocation(node, command.data.demand);
      return [
        {
          type: 'NodeCapacityAllocated',
          data: {
            nodeId: node.nodeId,
            sessionId: command.data.sessionId,
            owner: command.data.owner,
            ...chosen,
            at: command.data.at,
          },
        },
      ];
    }
    case 'ReleaseOnNode': {
      if (state.status !== 'online' && state.status !== 'offline') return [];
      if (!state.allocations[command.data.sessionId]) return [];
      return [
        {
          type: 'NodeCapacityReleased',
          data: { nodeId: state.nodeId, sessionId: command.data.sessionId, at: command.data.at },
        },
      ];
    }
    case 'StartNodeDrain': {
      const node = existing(state);
      if (node.drainId === command.data.drainId) return [];
      if (node.drainId !== null) throw invalidTransition('node', 'draining', 'start another drain');
      if (node.status !== 'online') throw invalidTransition('node', 'offline', 'be drained');
      const { drainId, mode, at, inPool } = command.data;
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
    }
    case 'EndNodeDrain': {
      if (state.status !== 'online' && state.status !== 'offline') return [];
      if (state.drainId !== command.data.drainId) return [];
      return [
        {
          type: 'NodeDrainEnded',
          data: { nodeId: state.nodeId, drainId: command.data.drainId, at: command.data.at },
        },
      ];
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
