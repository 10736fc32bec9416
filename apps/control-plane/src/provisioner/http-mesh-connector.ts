import { MeshConnector, MeshLinkRequest } from './mesh-connector.port';

/**
 * The production mesh adapter: `POST {PROVISIONER_URL}/v1/mesh/connect` or `/disconnect` with
 * the request; 2xx when the link is up (down), anything else a failure naming the status.
 * `Idempotency-Key` is the request and action, so a call asked again after a restart is the
 * same call (docs/PROVISIONER.md).
 */
export class HttpMeshConnector implements MeshConnector {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 120_000,
  ) {}

  connectMesh(request: MeshLinkRequest): Promise<void> {
    return this.post('connect', request);
  }

  disconnectMesh(request: MeshLinkRequest): Promise<void> {
    return this.post('disconnect', request);
  }

  private async post(action: string, request: MeshLinkRequest): Promise<void> {
    const base = this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`;
    const res = await fetch(new URL(`v1/mesh/${action}`, base), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `${request.meshRequestId}:${action}`,
      },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!res.ok) throw new Error(`provisioner answered ${res.status} to mesh ${action}`);
  }
}
