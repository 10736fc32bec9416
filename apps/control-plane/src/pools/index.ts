/** The pools slice as other slices see it: nothing else of this folder is imported elsewhere. */
export {
  AUTOSCALE_DEFAULTS,
  Autoscaling,
  autoscalingOn,
  POOL_OPERATION_TYPES,
  PoolDefinition,
  PoolEvent,
  PoolKind,
  PoolNodeSpec,
  PoolOperationType,
  poolCodec,
  poolStreamId,
} from './pool.events';
export { PoolCommand, PoolState, beginsOperation } from './pool.decider';
export { PoolAccess, PoolRequest } from './pool-access.rule';
export { PoolAccessRule } from './pool-access.service';
export { NODE_POOLS, PoolDoc } from './pools.projection';
export { POOLS_PROJECTION } from './pools.service';
export { PoolView, ResizeNodePoolDto, ScaleNodePoolDto } from './pools.dto';
export { BeginPoolOperation } from './begin-pool-operation.handler';
export { EndPoolOperation } from './end-pool-operation.handler';
export { MarkPoolDeleted } from './mark-pool-deleted.handler';
export { ChangePoolSpec } from './change-pool-spec.handler';
export { AssignNodeToPool } from './assign-node-to-pool.handler';
export { GetPoolState } from './get-pool-state.handler';
export { KeepPoolWithinBounds } from './keep-pool-within-bounds.command';
export { ListPoolMembers } from './list-pool-members.handler';
export { PoolsModule } from './pools.module';
