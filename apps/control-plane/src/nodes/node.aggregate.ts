import { Aggregate } from '../../../../libs/cqrs/src';
import { uuidFrom } from '../../../../libs/kernel/src';
import { NodeCommand, nodeDecider } from './node.decider';
import { NodeEvent, NodeState, nodeCodec } from './node.events';

export const nodeAggregate: Aggregate<NodeCommand, NodeEvent, NodeState> = {
  name: 'node',
  decider: nodeDecider,
  codec: nodeCodec,
};

/** Node ids already derived (a SHA-1 each, for every node of every report): ~130 bytes a node. */
const NODE_IDS_CAPACITY = 250_000;
const nodeIds = new Map<string, string>();

/** The upsert rule: a node's id is a function of (cluster, hostname), so two first reports make one node. */
export const nodeIdOf = (clusterId: string, hostname: string): string => {
  const key = `${clusterId}\u0000${hostname}`;
  let id = nodeIds.get(key);
  if (id === undefined) {
    id = uuidFrom('node', clusterId, hostname);
    // Bounded: past the capacity the oldest derivation is dropped (it is only recomputed).
    if (nodeIds.size >= NODE_IDS_CAPACITY) nodeIds.delete(nodeIds.keys().next().value!);
    nodeIds.set(key, id);
  }
  return id;
};
