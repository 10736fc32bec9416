import { DomainError } from '@fleet/kernel';
import { GpuModel } from '../catalog/catalog';
import { NodeEvent, NodeFacts, NodeState } from './node.events';
import { ExistingNode } from './node-status';

/** What a session asks of a node: cards of one model, or vCPUs and memory. */
export type SessionDemand =
  | { readonly kind: 'gpu'; readonly gpuModel: GpuModel; readonly gpuCount: number }
  | { readonly kind: 'cpu'; readonly cpu: number; readonly memoryGiB: number };

const refuse = (code: string, message: string, details: Record<string, unknown> = {}): never => {
  throw new DomainError(code, message, 'conflict', details);
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

export type AllocateOnNodeData = {
  sessionId: string;
  owner: string;
  demand: SessionDemand;
  at: string;
};

/** A session placed on the node: the capacity it takes, once (a retry allocates nothing). */
export const allocateOnNode = (data: AllocateOnNodeData, node: ExistingNode): NodeEvent[] => {
  if (node.allocations[data.sessionId]) return []; // already placed here: a retry
  const chosen = chooseAllocation(node, data.demand);
  return [
    {
      type: 'NodeCapacityAllocated',
      data: {
        nodeId: node.nodeId,
        sessionId: data.sessionId,
        owner: data.owner,
        ...chosen,
        at: data.at,
      },
    },
  ];
};

/** A session's capacity given back; nothing for a session the node does not hold. */
export const releaseOnNode = (
  data: { sessionId: string; at: string },
  state: NodeState,
): NodeEvent[] => {
  if (state.status !== 'online' && state.status !== 'offline') return [];
  if (!state.allocations[data.sessionId]) return [];
  return [
    {
      type: 'NodeCapacityReleased',
      data: { nodeId: state.nodeId, sessionId: data.sessionId, at: data.at },
    },
  ];
};
