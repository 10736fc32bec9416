import { Aggregate } from '@fleet/cqrs';
import { uuidFrom } from '@fleet/kernel';
import { NodeCommand, nodeDecider } from './node.decider';
import { NodeEvent, NodeState, nodeCodec, nodeStreamId } from './node.events';

export const nodeAggregate: Aggregate<NodeCommand, NodeEvent, NodeState> = {
  name: 'node',
  decider: nodeDecider,
  codec: nodeCodec,
};

/** A node's id and stream id. */
export type NodeRef = { readonly nodeId: string; readonly streamId: string };

/**
 * The upsert rule: a node's id is a function of (cluster, hostname), so two first reports
 * make one node. (The report path keeps the refs it derived: reporting/node-refs.ts.)
 */
export const nodeIdOf = (clusterId: string, hostname: string): string =>
  uuidFrom('node', clusterId, hostname);

export const nodeRefOf = (clusterId: string, hostname: string): NodeRef => {
  const nodeId = nodeIdOf(clusterId, hostname);
  return { nodeId, streamId: nodeStreamId(nodeId) };
};
