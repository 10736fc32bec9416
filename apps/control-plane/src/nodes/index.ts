/** The nodes slice as other slices see it: nothing else of this folder is imported elsewhere. */
export {
  Allocation,
  Capacity,
  DrainMode,
  GpuCard,
  NODE_ROLES,
  NodeEvent,
  NodeMode,
  NodeRole,
  NodeState,
  OfflineReason,
  nodeCodec,
  nodeStreamId,
} from './node.events';
export { NodeCommand, NodeReport, SessionDemand } from './node.decider';
export { nodeIdOf } from './node.aggregate';
export { POOL_LABEL, PROVISIONER_LABEL } from './node-labels';
export { NODES, NodeDoc, NodeGpuView, nodesProjection } from './nodes.projection';
export { NODES_PROJECTION } from './nodes.commands';
export { NodeView } from './nodes.dto';
export { NodesQueries } from './nodes.queries';
export { HEARTBEATS, HeartbeatModule } from './heartbeat/heartbeat.module';
export { Heartbeat, HeartbeatStore } from './heartbeat/heartbeat.store';
export { ReportedNode } from './reporting/inventory.service';
export { AllocateOnNode } from './allocate-on-node.handler';
export { ReleaseNodeCapacity } from './release-node-capacity.handler';
export { StartNodeDrain } from './start-node-drain.handler';
export { EndNodeDrain } from './end-node-drain.handler';
export { SetNodePool } from './set-node-pool.handler';
export { RequestNodeRemoval } from './request-node-removal.handler';
export { DeleteNode } from './delete-node.handler';
export { ReportInventory } from './reporting/report-inventory.handler';
export { GetNodeState } from './get-node-state.handler';
export { NODE_LEAN_ROUTES } from './nodes.controller';
export { INVENTORY_BODY_LIMITS, INVENTORY_LEAN_ROUTES } from './reporting/inventory.controller';
export { NodesModule } from './nodes.module';
