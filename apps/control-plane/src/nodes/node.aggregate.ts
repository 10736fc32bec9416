import { Aggregate } from '../../../../libs/cqrs/src';
import { uuidFrom } from '../../../../libs/kernel/src';
import { NodeCommand, nodeDecider } from './node.decider';
import { NodeEvent, NodeState, nodeCodec, nodeStreamId } from './node.events';

export const nodeAggregate: Aggregate<NodeCommand, NodeEvent, NodeState> = {
  name: 'node',
  decider: nodeDecider,
  codec: nodeCodec,
};

/** A node's id and stream id, derived once per (cluster, hostname) and shared after that. */
export type NodeRef = { readonly nodeId: string; readonly streamId: string };

/** Refs already derived (a SHA-1 each, for every node of every report): ~200 bytes a node. */
const NODE_REFS_CAPACITY = 250_000;
const nodeRefs = new Map<string, Map<string, NodeRef>>();
let nodeRefCount = 0;

/**
 * The upsert rule: a node's id is a function of (cluster, hostname), so two first reports
 * make one node. By cluster, then hostname: no key is concatenated per lookup, and the same
 * stream id string comes back every time (its hash computed once, equal by identity in the
 * maps keyed by it).
 */
export const nodeRefOf = (clusterId: string, hostname: string): NodeRef => {
  let byHost = nodeRefs.get(clusterId);
  const known = byHost?.get(hostname);
  if (known !== undefined) return known;
  // Bounded: past the capacity everything is dropped (a ref is only recomputed).
  if (nodeRefCount >= NODE_REFS_CAPACITY) {
    nodeRefs.clear();
    nodeRefCount = 0;
    byHost = undefined;
  }
  if (byHost === undefined) nodeRefs.set(clusterId, (byHost = new Map()));
  const nodeId = uuidFrom('node', clusterId, hostname);
  const ref: NodeRef = { nodeId, streamId: nodeStreamId(nodeId) };
  byHost.set(hostname, ref);
  nodeRefCount++;
  return ref;
};

export const nodeIdOf = (clusterId: string, hostname: string): string =>
  nodeRefOf(clusterId, hostname).nodeId;
