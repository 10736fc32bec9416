import { SessionDemand, NodeDoc } from '../nodes';

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

type Ranked = { readonly fit: NodeFit; readonly free: number };

const rankedBefore = (a: Ranked, b: Ranked): boolean =>
  a.free < b.free ||
  (a.free === b.free &&
    (a.fit.hostname < b.fit.hostname ||
      (a.fit.hostname === b.fit.hostname && a.fit.nodeId < b.fit.nodeId)));

/**
 * The nodes of one kind of demand (`gpu:<model>` or `cpu`) kept in best-fit order (free cards
 * of the model, or free vCPUs, then hostname), so the best few are read from the front
 * instead of ranking the whole fleet per placement. An update is two binary searches.
 */
export class FitList {
  private readonly items: Ranked[] = [];
  private readonly byNode = new Map<string, Ranked>();

  constructor(private readonly freeOf: (fit: NodeFit) => number) {}

  get size(): number {
    return this.items.length;
  }

  put(fit: NodeFit): void {
    this.remove(fit.nodeId);
    const entry = { fit, free: this.freeOf(fit) };
    this.items.splice(this.lowerBound(entry), 0, entry);
    this.byNode.set(fit.nodeId, entry);
  }

  remove(nodeId: string): void {
    const entry = this.byNode.get(nodeId);
    if (!entry) return;
    this.byNode.delete(nodeId);
    this.items.splice(this.lowerBound(entry), 1);
  }

  /** What rankByBestFit(all, demand, poolId, limit) returns, reading only from the front. */
  best(demand: SessionDemand, poolId: string | null, limit: number): NodeFit[] {
    const out: NodeFit[] = [];
    let i = this.firstWithFree(needed(demand));
    for (; i < this.items.length && out.length < limit; i++) {
      const n = this.items[i].fit;
      if ((poolId === null || n.poolId === poolId) && accepts(n, demand)) out.push(n);
    }
    return out;
  }

  private lowerBound(entry: Ranked): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rankedBefore(this.items[mid], entry)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private firstWithFree(need: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.items[mid].free < need) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
