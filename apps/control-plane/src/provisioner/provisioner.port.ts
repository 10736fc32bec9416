import { PoolDefinition } from '../pools';
import { ClusterProvisioner } from './cluster-provisioner.port';

export type CreateNodesRequest = {
  readonly operationId: string;
  readonly pool: PoolDefinition;
  readonly hostnames: readonly string[];
};

export type RemoveNodesRequest = {
  readonly operationId: string;
  readonly clusterId: string;
  readonly poolId: string;
  readonly nodes: ReadonlyArray<{ nodeId: string; hostname: string }>;
};

/**
 * The machine that makes and destroys nodes. Both calls are requests: nodes appear when their
 * operator reports them, and go away when they stop reporting. Both are idempotent per
 * operation (asked again after a crash, the same hostnames are meant).
 */
export interface NodeProvisioner {
  createNodes(request: CreateNodesRequest): Promise<void>;
  removeNodes(request: RemoveNodesRequest): Promise<void>;
}

/** Every part of the provisioner (node requests, the cluster lifecycle, …), each in its own interface. */
export interface Provisioner extends NodeProvisioner, ClusterProvisioner {}

export const PROVISIONER = Symbol('PROVISIONER');
