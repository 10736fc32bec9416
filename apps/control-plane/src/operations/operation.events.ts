import { EventCodec } from '@fleet/kernel';

export const OPERATION_TYPES = [
  'scale_node_pool',
  'resize_node_pool',
  'delete_node_pool',
  'create_cluster',
  'upgrade_cluster',
  'repair_cluster',
  'delete_cluster',
  /** Carried out by the backups slice (Velero), which reports its steps and its end. */
  'restore_cluster',
  /** Carried out by the mesh slice's link process, which reports its step and its end. */
  'connect_mesh',
  'disconnect_mesh',
] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];
export type OperationStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'timeout';

/** What the operation works on and towards; fixed when it is requested. */
export type OperationTarget = {
  readonly clusterId: string;
  readonly poolId: string | null;
  /** Pool size when requested, and the size asked for (scale). */
  readonly fromSize: number | null;
  readonly desiredSize: number | null;
  /** Hostnames the provisioner is asked to create (scale-out), decided once so a retry asks for the same. */
  readonly addHostnames: readonly string[];
  /** Resize: the node shape to roll the pool onto (absent for other types). */
  readonly resizeTo?: { readonly cpu: number; readonly memoryGiB: number } | null;
  /** A cluster's create (and its repair): the pools made with it and their hostnames, decided once. */
  readonly clusterPools?: ReadonlyArray<{ readonly poolId: string; readonly hostnames: string[] }>;
  /** A restore: the backup restored onto the cluster. */
  readonly backupId?: string | null;
};

export const operationStreamId = (operationId: string): string => `operation-${operationId}`;

export type OperationEvent =
  | {
      type: 'OperationRequested';
      data: OperationTarget & {
        operationId: string;
        operationType: OperationType;
        reason: string | null;
        deadlineAt: string;
        at: string;
      };
    }
  | { type: 'OperationStepStarted'; data: { operationId: string; name: string; at: string } }
  | {
      type: 'OperationStepCompleted';
      data: { operationId: string; name: string; detail: string | null; at: string };
    }
  /** Scale-in and deletion: the nodes to drain and remove, chosen once. */
  | {
      type: 'OperationNodesChosen';
      data: { operationId: string; nodes: Array<{ nodeId: string; hostname: string }>; at: string };
    }
  | {
      type: 'OperationDrainStarted';
      data: { operationId: string; nodeId: string; drainId: string; at: string };
    }
  | { type: 'OperationSucceeded'; data: { operationId: string; at: string } }
  | { type: 'OperationFailed'; data: { operationId: string; error: string; at: string } }
  | {
      type: 'OperationTimedOut';
      data: { operationId: string; deadlineAt: string; step: string | null; at: string };
    };

export const operationCodec = new EventCodec<OperationEvent>({
  OperationRequested: 1,
  OperationStepStarted: 1,
  OperationStepCompleted: 1,
  OperationNodesChosen: 1,
  OperationDrainStarted: 1,
  OperationSucceeded: 1,
  OperationFailed: 1,
  OperationTimedOut: 1,
});
