import { createHmac, createSecretKey, KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { CredentialIssuer, CredentialRequest, IssuedCredential } from './credential-issuer.port';

/** The audience of a simulated cluster's credential: never the control plane's. */
export const kubeAudience = (clusterId: string): string => `kubernetes:${clusterId}`;
export const SIMULATED_ISSUER = 'fleet-simulated-provisioner';

/**
 * The key a simulated cluster signs credentials with: derived from AUTH_JWT_SECRET and the
 * cluster id, so one cluster's credential is no other's, and none is a control-plane token
 * (those are signed with the secret itself, and carry no audience).
 */
export const clusterCredentialKey = (secret: string, clusterId: string): KeyObject =>
  createSecretKey(createHmac('sha256', secret).update(`fleet/kubeconfig/v1/${clusterId}`).digest());

/** The in-process provisioner's credentials: a signed, expiring token naming cluster, subject and access. */
export class SimulatedCredentialIssuer implements CredentialIssuer {
  constructor(private readonly secret: string) {}

  async issueCredential(request: CredentialRequest): Promise<IssuedCredential> {
    const issuedAt = Math.floor(request.now.getTime() / 1000);
    const exp = issuedAt + request.ttlSec;
    const token = await new SignJWT({ cluster: request.clusterId, access: request.access })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(SIMULATED_ISSUER)
      .setAudience(kubeAudience(request.clusterId))
      .setSubject(request.sub)
      .setIssuedAt(issuedAt)
      .setExpirationTime(exp)
      .sign(clusterCredentialKey(this.secret, request.clusterId));
    return { token, expiresAt: new Date(exp * 1000).toISOString() };
  }
}
