import {
  ClusterPoolPlan,
  CreateClusterRequest,
  DeleteClusterRequest,
  RepairClusterRequest,
  UpgradeClusterRequest,
} from './cluster-provisioner.port';
import { CreateNodesRequest, Provisioner, RemoveNodesRequest } from './provisioner.port';
import { PoolDefinition } from '../pools';

/** A node as the provisioner is asked to make it: the pool's shape and its labels. */
const nodeOf = (pool: PoolDefinition) => ({
  role: pool.kind,
  gpuType: pool.gpuType,
  mode: pool.mode,
  ...pool.spec,
  labels: { 'fleet/pool': pool.poolId, 'fleet/mode': pool.mode },
});

const poolsOf = (pools: readonly ClusterPoolPlan[]) =>
  pools.map(({ pool, hostnames }) => ({
    poolId: pool.poolId,
    name: pool.name,
    hostnames,
    node: nodeOf(pool),
  }));

/**
 * The production adapter: one POST per request to PROVISIONER_URL (docs/PROVISIONER.md).
 * `Idempotency-Key` is the operation and action, so a retried step asks for nothing new; the
 * cluster's moves come back through `POST /v1/clusters/{id}/transitions`.
 */
export class HttpProvisioner implements Provisioner {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  createNodes(request: CreateNodesRequest): Promise<void> {
    const { pool } = request;
    return this.post('v1/node-requests/create', `${request.operationId}:create`, {
      operationId: request.operationId,
      clusterId: pool.clusterId,
      poolId: pool.poolId,
      hostnames: request.hostnames,
      node: nodeOf(pool),
    });
  }

  removeNodes(request: RemoveNodesRequest): Promise<void> {
    return this.post('v1/node-requests/remove', `${request.operationId}:remove`, request);
  }

  createCluster(request: CreateClusterRequest): Promise<void> {
    return this.cluster('create', request.operationId, {
      ...request,
      pools: poolsOf(request.pools),
    });
  }

  upgradeCluster(request: UpgradeClusterRequest): Promise<void> {
    return this.cluster('upgrade', request.operationId, request);
  }

  repairCluster(request: RepairClusterRequest): Promise<void> {
    return this.cluster('repair', request.operationId, {
      ...request,
      pools: poolsOf(request.pools),
    });
  }

  deleteCluster(request: DeleteClusterRequest): Promise<void> {
    return this.cluster('delete', request.operationId, request);
  }

  private cluster(action: string, operationId: string, body: unknown): Promise<void> {
    return this.post(`v1/cluster-requests/${action}`, `${operationId}:cluster-${action}`, body);
  }

  private async post(path: string, key: string, body: unknown): Promise<void> {
    const url = new URL(path, this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!res.ok) throw new Error(`provisioner answered ${res.status} to ${path}`);
  }
}
