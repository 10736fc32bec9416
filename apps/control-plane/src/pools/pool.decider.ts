import { Aggregate } from '@fleet/cqrs';
import { Decider, DomainError, assertNever, invalidTransition, notFound } from '@fleet/kernel';
import {
  PoolDefinition,
  PoolEvent,
  PoolOperationType,
  autoscalingOn,
  poolCodec,
} from './pool.events';
import { AutoscalingChange, decideEdit } from './pool-editing.rules';

export type PoolCommand =
  | { type: 'CreateNodePool'; data: PoolDefinition & { at: string } }
  /**
   * Opens a long operation on the pool: one at a time (409 operation_in_progress). A scale
   * carries its target size, checked against the autoscaling bounds here.
   */
  | {
      type: 'BeginPoolOperation';
      data: {
        operationId: string;
        operationType: PoolOperationType;
        desiredSize: number | null;
        at: string;
      };
    }
  | { type: 'EndPoolOperation'; data: { operationId: string; at: string } }
  | { type: 'MarkPoolDeleted'; data: { at: string } }
  | { type: 'ChangePoolSpec'; data: { cpu: number; memoryGiB: number; at: string } }
  | { type: 'MarkPoolEmptied'; data: { nodeId: string; hostname: string; at: string } }
  /**
   * PATCH: autoscaling on or off with its bounds (0 ≤ min ≤ max, 1 ≤ max) and timings, and
   * the owners who may place sessions (empty: everyone); decided together, so a refused part
   * leaves the other unchanged too.
   */
  | {
      type: 'EditNodePool';
      data: { autoscaling?: AutoscalingChange; tenants?: readonly string[]; at: string };
    };

export type PoolState =
  | { readonly status: 'absent' }
  | (PoolDefinition & {
      readonly status: 'active' | 'deleting' | 'deleted';
      readonly operationId: string | null;
      readonly operationType: PoolOperationType | null;
    });

type Existing = Extract<PoolState, { poolId: string }>;

const existing = (state: PoolState, id = ''): Existing => {
  if (state.status === 'absent') throw notFound('node pool', id);
  return state;
};

const conflict = (code: string, message: string, details: Record<string, unknown> = {}) =>
  new DomainError(code, message, 'conflict', details);

/** One operation at a time; a scale stays within the autoscaling bounds. */
const beginOperation = (
  data: Extract<PoolCommand, { type: 'BeginPoolOperation' }>['data'],
  pool: Existing,
): PoolEvent[] => {
  const { operationId, operationType, desiredSize, at } = data;
  if (pool.operationId === operationId) return []; // a retry of the same request
  if (pool.operationId !== null) {
    throw conflict(
      'operation_in_progress',
      `node pool ${pool.poolId} is running operation ${pool.operationId} (${pool.operationType})`,
      { operationId: pool.operationId, operationType: pool.operationType },
    );
  }
  if (pool.status !== 'active') throw invalidTransition('node pool', pool.status, operationType);
  if (desiredSize !== null && autoscalingOn(pool.autoscaling)) {
    const { min, max } = pool.autoscaling;
    if (desiredSize < min || desiredSize > max) {
      throw conflict(
        'size_out_of_range',
        `node pool ${pool.name} scales between ${min} and ${max} nodes, not ${desiredSize}`,
        { min, max, desiredSize },
      );
    }
  }
  return [
    {
      type: 'NodePoolOperationStarted',
      data: { poolId: pool.poolId, operationId, operationType, at },
    },
  ];
};

export const decidePool = (command: PoolCommand, state: PoolState): PoolEvent[] => {
  switch (command.type) {
    case 'CreateNodePool':
      if (state.status !== 'absent') return [];
      return [{ type: 'NodePoolCreated', data: command.data }];
    case 'BeginPoolOperation':
      return beginOperation(command.data, existing(state));
    case 'EndPoolOperation': {
      if (state.status === 'absent' || state.operationId !== command.data.operationId) return [];
      return [
        {
          type: 'NodePoolOperationEnded',
          data: {
            poolId: state.poolId,
            operationId: command.data.operationId,
            at: command.data.at,
          },
        },
      ];
    }
    case 'MarkPoolDeleted': {
      const pool = existing(state);
      if (pool.status === 'deleted') return [];
      return [
        {
          type: 'NodePoolDeleted',
          data: { poolId: pool.poolId, clusterId: pool.clusterId, at: command.data.at },
        },
      ];
    }
    case 'ChangePoolSpec': {
      const pool = existing(state);
      const { cpu, memoryGiB, at } = command.data;
      if (pool.spec.cpu === cpu && pool.spec.memoryGiB === memoryGiB) return [];
      return [
        {
          type: 'NodePoolSpecChanged',
          data: { poolId: pool.poolId, spec: { ...pool.spec, cpu, memoryGiB }, at },
        },
      ];
    }
    case 'MarkPoolEmptied': {
      // Only a dedicated GPU pool still in service is "emptied"; a pool being deleted is meant to be.
      if (state.status !== 'active' || state.kind !== 'gpu' || state.mode !== 'dedicated')
        return [];
      return [
        {
          type: 'NodePoolEmptied',
          data: {
            poolId: state.poolId,
            clusterId: state.clusterId,
            name: state.name,
            ...command.data,
          },
        },
      ];
    }
    case 'EditNodePool':
      return decideEdit(existing(state), command.data);
    default:
      return assertNever(command, 'node pool command');
  }
};

/**
 * Whether beginning the operation changes the pool as read (false: a replay of the same
 * request); throws the pool's refusal. Lets an operation be refused before anything is
 * appended anywhere, on the pool as read in its turn.
 */
export const beginsOperation = (
  data: Extract<PoolCommand, { type: 'BeginPoolOperation' }>['data'],
  pool: PoolState,
): boolean => decidePool({ type: 'BeginPoolOperation', data }, pool).length > 0;

export const evolvePool = (state: PoolState, event: PoolEvent): PoolState => {
  switch (event.type) {
    case 'NodePoolCreated': {
      const { at: _at, ...definition } = event.data;
      return { ...definition, status: 'active', operationId: null, operationType: null };
    }
    case 'NodePoolOperationStarted': {
      const pool = existing(state);
      return {
        ...pool,
        status: event.data.operationType === 'delete_node_pool' ? 'deleting' : pool.status,
        operationId: event.data.operationId,
        operationType: event.data.operationType,
      };
    }
    case 'NodePoolOperationEnded': {
      const pool = existing(state);
      return {
        ...pool,
        // A deletion that did not finish leaves the pool in service again.
        status: pool.status === 'deleting' ? 'active' : pool.status,
        operationId: null,
        operationType: null,
      };
    }
    case 'NodePoolDeleted':
      return { ...existing(state), status: 'deleted' };
    case 'NodePoolSpecChanged':
      return { ...existing(state), spec: event.data.spec };
    case 'PoolAutoscalingChanged':
      return { ...existing(state), autoscaling: event.data.autoscaling };
    case 'PoolAccessChanged':
      return { ...existing(state), tenants: event.data.tenants };
    case 'NodePoolEmptied':
      return state;
    default:
      return assertNever(event, 'node pool event');
  }
};

export const poolDecider: Decider<PoolCommand, PoolEvent, PoolState> = {
  decide: decidePool,
  evolve: evolvePool,
  initialState: () => ({ status: 'absent' }),
};

export const poolAggregate: Aggregate<PoolCommand, PoolEvent, PoolState> = {
  name: 'node-pool',
  decider: poolDecider,
  codec: poolCodec,
};
