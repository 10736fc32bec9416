import { EventCodec } from '@fleet/kernel';
import { GpuModel } from '../catalog/catalog';
import { NodeMode } from '../nodes';

export type PoolKind = 'gpu' | 'cpu';
export const POOL_OPERATION_TYPES = [
  'scale_node_pool',
  'resize_node_pool',
  'delete_node_pool',
] as const;
export type PoolOperationType = (typeof POOL_OPERATION_TYPES)[number];

/** What every node of the pool looks like (what the provisioner is asked for). */
export type PoolNodeSpec = {
  readonly cpu: number;
  readonly memoryGiB: number;
  readonly diskGiB: number;
  readonly gpusPerNode: number;
};

/**
 * Autoscaling bounds, and when the autoscaler acts: sessions that fit the pool queued longer
 * than `queueWaitSec` scale it out; nodes idle longer than `idleCooldownSec` scale it in.
 */
export type Autoscaling = {
  /** Absent in pools created before autoscaling could be turned off: on. */
  readonly enabled?: boolean;
  readonly min: number;
  readonly max: number;
  /** Absent in pools created before the autoscaler: AUTOSCALE_DEFAULTS apply. */
  readonly queueWaitSec?: number;
  readonly idleCooldownSec?: number;
};

export const AUTOSCALE_DEFAULTS = { queueWaitSec: 60, idleCooldownSec: 600 } as const;

/** Whether the autoscaler keeps the pool within its bounds (pools before `enabled`: on). */
export const autoscalingOn = (autoscaling: Autoscaling | null): autoscaling is Autoscaling =>
  autoscaling !== null && autoscaling.enabled !== false;

export type PoolDefinition = {
  readonly poolId: string;
  readonly clusterId: string;
  readonly name: string;
  readonly kind: PoolKind;
  readonly gpuType: GpuModel | null;
  readonly mode: NodeMode;
  readonly spec: PoolNodeSpec;
  /** Owners allowed to place sessions here; empty = open to everyone. */
  readonly tenants: readonly string[];
  readonly autoscaling: Autoscaling | null;
};

export const poolStreamId = (poolId: string): string => `pool-${poolId}`;

export type PoolEvent =
  | { type: 'NodePoolCreated'; data: PoolDefinition & { at: string } }
  | {
      type: 'NodePoolOperationStarted';
      data: { poolId: string; operationId: string; operationType: PoolOperationType; at: string };
    }
  | { type: 'NodePoolOperationEnded'; data: { poolId: string; operationId: string; at: string } }
  | { type: 'NodePoolDeleted'; data: { poolId: string; clusterId: string; at: string } }
  /** A resize finished: new nodes are made with this shape from now on. */
  | { type: 'NodePoolSpecChanged'; data: { poolId: string; spec: PoolNodeSpec; at: string } }
  /** PATCH: autoscaling turned on or off, or its bounds or timings changed (the whole new value). */
  | {
      type: 'PoolAutoscalingChanged';
      data: { poolId: string; autoscaling: Autoscaling; at: string };
    }
  /** PATCH: who may place sessions in the pool from now on (empty: everyone). */
  | { type: 'PoolAccessChanged'; data: { poolId: string; tenants: string[]; at: string } }
  /** A dedicated GPU pool whose last GPU node went away (pool_emptied). */
  | {
      type: 'NodePoolEmptied';
      data: {
        poolId: string;
        clusterId: string;
        name: string;
        nodeId: string;
        hostname: string;
        at: string;
      };
    };

export const poolCodec = new EventCodec<PoolEvent>({
  NodePoolCreated: 1,
  NodePoolOperationStarted: 1,
  NodePoolOperationEnded: 1,
  NodePoolDeleted: 1,
  NodePoolSpecChanged: 1,
  NodePoolEmptied: 1,
  PoolAutoscalingChanged: 1,
  PoolAccessChanged: 1,
});
