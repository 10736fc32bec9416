import { NodeFacts, NodeState } from './node.events';

export type DisplayStatus = 'ready' | 'busy' | 'cordoned' | 'offline';

/** The Nodes screen's status: offline > cordoned > busy (holds sessions) > ready. */
export const displayStatus = (state: NodeState): DisplayStatus | null => {
  if (state.status !== 'online' && state.status !== 'offline') return null;
  if (state.status === 'offline') return 'offline';
  if (state.cordon.desired) return 'cordoned';
  return Object.keys(state.allocations).length > 0 ? 'busy' : 'ready';
};

/** The status a node shows while online (or would show once back online). */
export const onlineStatus = (node: NodeFacts): 'ready' | 'busy' | 'cordoned' =>
  node.cordon.desired ? 'cordoned' : Object.keys(node.allocations).length > 0 ? 'busy' : 'ready';

/** A node that exists: reporting (online) or silent (offline). */
export type ExistingNode = Extract<NodeState, { status: 'online' | 'offline' }>;
