import { SessionDemand } from '../nodes/node.decider';
import { NodeDoc } from '../nodes/nodes.projection';

/**
 * What placement needs to know of a node, taken from its Nodes read-model document: small,
 * so the placement index can keep one per node of the fleet (the node stream re-checks all).
 */
export type NodeFit = Pick<
  NodeDoc,
  'nodeId' | 'hostname' | 'clusterId' | 'poolId' | 'role' | 'mode' | 'online' | 'runningSessions'
> & {
  readonly cordoned: boolean;
  readonly draining: boolean;
  /** Free cards per model (a node with cards of several models has several entries). */
  readonly freeCards: Readonly<Record<string, number>>;
  readonly freeCpu: number;
  readonly freeMemoryGiB: number;
};

export const fitOf = (doc: NodeDoc): NodeFit => {
  const freeCards: Record<string, number> = {};
  for (const g of doc.gpus) {
    freeCards[g.model] = (freeCards[g.model] ?? 0) + (g.sessionId === null ? 1 : 0);
  }
  const held = Object.values(doc.allocations);
  return {
    nodeId: doc.nodeId,
    hostname: doc.hostname,
    clusterId: doc.clusterId,
    poolId: doc.poolId,
    role: doc.role,
    mode: doc.mode,
    online: doc.online,
    runningSessions: doc.runningSessions,
    cordoned: doc.cordon.desired,
    draining: doc.drain?.status === 'running',
    freeCards,
    freeCpu: doc.capacity.cpu - held.reduce((s, a) => s + a.cpu, 0),
    freeMemoryGiB: doc.capacity.memoryGiB - held.reduce((s, a) => s + a.memoryGiB, 0),
  };
};

/** Free capacity of a node for a demand, from the Nodes read model (the node stream re-checks). */
export const freeFor = (node: NodeFit, demand: SessionDemand): number => {
  if (demand.kind === 'gpu') return node.freeCards[demand.gpuModel] ?? 0;
  return node.freeMemoryGiB >= demand.memoryGiB ? node.freeCpu : -1;
};

const needed = (demand: SessionDemand): number =>
  demand.kind === 'gpu' ? demand.gpuCount : demand.cpu;

/** Whether a node can take the demand at all: role, liveness, cordon, drain, dedicated mode. */
export const accepts = (node: NodeFit, demand: SessionDemand): boolean =>
  node.online &&
  !node.cordoned &&
  !node.draining &&
  node.role === demand.kind &&
  (node.mode !== 'dedicated' || node.runningSessions === 0) &&
  freeFor(node, demand) >= needed(demand);

/** Best-fit order: fewest free left after the demand first, then the hostname. */
const before = (a: NodeFit, aLeft: number, b: NodeFit, bLeft: number): boolean =>
  aLeft < bLeft || (aLeft === bLeft && a.hostname < b.hostname);

/**
 * Best fit: among the nodes that can take the demand (of the pool, when one is asked for),
 * the `limit` left with the fewest free cards (or vCPUs) come first, so large requests keep
 * finding whole nodes (less fragmentation); ties go to the hostname, for a stable,
 * explainable order. One pass, no sort of the whole fleet.
 */
export const rankByBestFit = (
  nodes: Iterable<NodeFit>,
  demand: SessionDemand,
  poolId: string | null = null,
  limit = Infinity,
): NodeFit[] => {
  const need = needed(demand);
  const best: NodeFit[] = [];
  const left: number[] = [];
  for (const n of nodes) {
    if ((poolId !== null && n.poolId !== poolId) || !accepts(n, demand)) continue;
    const l = freeFor(n, demand) - need;
    if (best.length >= limit && !before(n, l, best[best.length - 1], left[left.length - 1])) {
      continue;
    }
    let i = best.length;
    while (i > 0 && before(n, l, best[i - 1], left[i - 1])) i--;
    best.splice(i, 0, n);
    left.splice(i, 0, l);
    if (best.length > limit) {
      best.pop();
      left.pop();
    }
  }
  return best;
};
