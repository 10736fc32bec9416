import { PoolDefinition } from '../pools';

/** A pool the provisioner makes with a cluster: its definition and the hostnames to create. */
export type ClusterPoolPlan = {
  readonly pool: PoolDefinition;
  readonly hostnames: readonly string[];
};

export type CreateClusterRequest = {
  readonly operationId: string;
  readonly clusterId: string;
  readonly name: string;
  readonly k8sVersion: string;
  readonly podCidr: string;
  readonly serviceCidr: string;
  readonly pools: readonly ClusterPoolPlan[];
};

export type UpgradeClusterRequest = {
  readonly operationId: string;
  readonly clusterId: string;
  readonly k8sVersion: string;
};

/** A failed or degraded cluster brought back; `pools` as its create asked (made if missing). */
export type RepairClusterRequest = {
  readonly operationId: string;
  readonly clusterId: string;
  readonly pools: readonly ClusterPoolPlan[];
};

export type DeleteClusterRequest = {
  readonly operationId: string;
  readonly clusterId: string;
  readonly nodes: ReadonlyArray<{ nodeId: string; hostname: string; poolId: string | null }>;
};

/**
 * The cluster's lifecycle, carried out by the provisioner. Each call is a request keyed by
 * the operation: the provisioner answers at once and reports the cluster's moves back as
 * transitions (`POST /v1/clusters/{id}/transitions`, or the TransitionCluster command in
 * process). Asked again (after a restart), it continues from the cluster's current state.
 */
export interface ClusterProvisioner {
  createCluster(request: CreateClusterRequest): Promise<void>;
  upgradeCluster(request: UpgradeClusterRequest): Promise<void>;
  repairCluster(request: RepairClusterRequest): Promise<void>;
  /** Takes every node of the cluster down; the control plane records `deleted` once they are gone. */
  deleteCluster(request: DeleteClusterRequest): Promise<void>;
}
