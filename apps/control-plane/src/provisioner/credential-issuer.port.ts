/** What a Kubernetes credential may do on its cluster (its RBAC cluster role). */
export type KubeAccess = 'view' | 'edit' | 'admin';

export type CredentialRequest = {
  /** Names the request: a retried one asks for nothing new (the HTTP adapter's key). */
  readonly requestId: string;
  readonly clusterId: string;
  readonly sub: string;
  readonly access: KubeAccess;
  readonly ttlSec: number;
  /** The request's time, decided at the edge: the credential expires `ttlSec` after it. */
  readonly now: Date;
};

export type IssuedCredential = {
  /** A bearer token for the cluster's API server: handed to the caller, never recorded. */
  readonly token: string;
  readonly expiresAt: string;
};

/** The provisioner's `issueCredential`: a credential for one cluster, subject and access. */
export interface CredentialIssuer {
  issueCredential(request: CredentialRequest): Promise<IssuedCredential>;
}

export const CREDENTIAL_ISSUER = Symbol('CREDENTIAL_ISSUER');
