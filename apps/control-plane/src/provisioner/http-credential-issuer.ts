import { CredentialIssuer, CredentialRequest, IssuedCredential } from './credential-issuer.port';

/**
 * The production adapter: `POST <PROVISIONER_URL>/v1/credentials` with the cluster, subject,
 * access and ttl; the answer is `{"token","expiresAt"}`. The request id is the
 * `Idempotency-Key`. Errors name the status only: the answer may hold the credential.
 */
export class HttpCredentialIssuer implements CredentialIssuer {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 10_000,
  ) {}

  async issueCredential(request: CredentialRequest): Promise<IssuedCredential> {
    const url = new URL(
      'v1/credentials',
      this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`,
    );
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': request.requestId },
      body: JSON.stringify({
        clusterId: request.clusterId,
        sub: request.sub,
        access: request.access,
        ttlSec: request.ttlSec,
      }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!res.ok) throw new Error(`provisioner answered ${res.status} to a credential request`);
    const body = (await res.json()) as Partial<IssuedCredential>;
    if (typeof body.token !== 'string' || typeof body.expiresAt !== 'string') {
      throw new Error('provisioner answered a credential request without token and expiresAt');
    }
    return { token: body.token, expiresAt: body.expiresAt };
  }
}
