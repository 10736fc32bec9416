import { CreateNodesRequest, Provisioner, RemoveNodesRequest } from './provisioner.port';

/**
 * The production adapter: POSTs node requests to PROVISIONER_URL. `Idempotency-Key` is the
 * operation and action, so a retried step asks for nothing new.
 */
export class HttpProvisioner implements Provisioner {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  createNodes(request: CreateNodesRequest): Promise<void> {
    const { pool } = request;
    return this.post('create', request.operationId, {
      operationId: request.operationId,
      clusterId: pool.clusterId,
      poolId: pool.poolId,
      hostnames: request.hostnames,
      node: {
        role: pool.kind,
        gpuType: pool.gpuType,
        mode: pool.mode,
        ...pool.spec,
        labels: { 'fleet/pool': pool.poolId, 'fleet/mode': pool.mode },
      },
    });
  }

  removeNodes(request: RemoveNodesRequest): Promise<void> {
    return this.post('remove', request.operationId, request);
  }

  private async post(action: string, operationId: string, body: unknown): Promise<void> {
    const url = new URL(
      `v1/node-requests/${action}`,
      this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`,
    );
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `${operationId}:${action}`,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!res.ok) throw new Error(`provisioner answered ${res.status} to ${action}`);
  }
}
