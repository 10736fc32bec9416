import { SessionDemand } from '../nodes/node.decider';
import { NodeDoc } from '../nodes/nodes.projection';

/** Free capacity of a node for a demand, from the Nodes read model (the node stream re-checks). */
export const freeFor = (node: NodeDoc, demand: SessionDemand): number => {
  if (demand.kind === 'gpu') {
    return node.gpus.filter((g) => g.model === demand.gpuModel && g.sessionId === null).length;
  }
  const held = Object.values(node.allocations);
  const cpu = node.capacity.cpu - held.reduce((s, a) => s + a.cpu, 0);
  const mem = node.capacity.memoryGiB - held.reduce((s, a) => s + a.memoryGiB, 0);
  return mem >= demand.memoryGiB ? cpu : -1;
};

const needed = (demand: SessionDemand): number =>
  demand.kind === 'gpu' ? demand.gpuCount : demand.cpu;

/** Whether a node can take the demand at all: role, liveness, cordon, drain, dedicated mode. */
export const accepts = (node: NodeDoc, demand: SessionDemand): boolean =>
  node.online &&
  !node.cordon.desired &&
  node.drain?.status !== 'running' &&
  node.role === demand.kind &&
  (node.mode !== 'dedicated' || node.runningSessions === 0) &&
  freeFor(node, demand) >= needed(demand);

/**
 * Best fit: among the nodes that can take the demand, those left with the fewest free cards
 * (or vCPUs) come first, so large requests keep finding whole nodes (less fragmentation);
 * ties go to the hostname, for a stable, explainable order.
 */
export const rankByBestFit = (nodes: readonly NodeDoc[], demand: SessionDemand): NodeDoc[] =>
  nodes
    .filter((n) => accepts(n, demand))
    .map((n) => ({ n, left: freeFor(n, demand) - needed(demand) }))
    .sort(
      (a, b) =>
        a.left - b.left || (a.n.hostname < b.n.hostname ? -1 : a.n.hostname > b.n.hostname ? 1 : 0),
    )
    .map(({ n }) => n);

/**
 * The Mongo query that narrows the candidates before ranking (written once, runs on both
 * stores): nodes of the model with enough free cards, fewest free first, which is best-fit
 * order already, so a small page holds the best candidates. Nodes with cards of several
 * models are rare and ranked exactly by rankByBestFit.
 */
export const candidateQuery = (
  demand: SessionDemand,
  poolId: string | null,
): { filter: Record<string, unknown>; sort: Record<string, 1 | -1> } => {
  const common = {
    role: demand.kind,
    online: true,
    'cordon.desired': false,
    ...(poolId ? { poolId } : {}),
  };
  if (demand.kind === 'gpu') {
    return {
      filter: {
        ...common,
        $or: [
          { gpuModel: demand.gpuModel, freeCards: { $gte: demand.gpuCount } },
          { gpuModel: 'mixed', gpus: { $elemMatch: { model: demand.gpuModel, sessionId: null } } },
        ],
      },
      sort: { freeCards: 1, hostname: 1 },
    };
  }
  return {
    filter: { ...common, freeCpu: { $gte: demand.cpu }, freeMemoryGiB: { $gte: demand.memoryGiB } },
    sort: { freeCpu: 1, hostname: 1 },
  };
};
