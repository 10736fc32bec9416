import { Aggregate } from '../../../../libs/cqrs/src';
import { uuidFrom } from '../../../../libs/kernel/src';
import { NodeCommand, nodeDecider } from './node.decider';
import { NodeEvent, NodeState, nodeCodec } from './node.events';

export const nodeAggregate: Aggregate<NodeCommand, NodeEvent, NodeState> = {
  name: 'node',
  decider: nodeDecider,
  codec: nodeCodec,
};

/** The upsert rule: a node's id is a function of (cluster, hostname), so two first reports make one node. */
export const nodeIdOf = (clusterId: string, hostname: string): string =>
  uuidFrom('node', clusterId, hostname);
