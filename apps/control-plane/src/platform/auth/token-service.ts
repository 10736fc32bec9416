import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { DomainError } from '../../../../../libs/kernel/src/errors';
import { Caller, isRole, Role } from './caller';

export type TokenClaims = { sub: string; roles: Role[]; clusters?: string[] };

const DAY_SEC = 3600 * 24;

const unauthenticated = (message: string): DomainError =>
  new DomainError('unauthenticated', message, 'unauthenticated');

/** Issues and checks the API's HS256 bearer tokens. */
export class TokenService {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    if (!secret) throw new Error('TokenService needs a non-empty secret');
    this.key = new TextEncoder().encode(secret);
  }

  async sign(claims: TokenClaims, ttlSec: number = DAY_SEC): Promise<string> {
    if (!claims.sub) throw new Error('a token needs a sub');
    if (claims.roles.length === 0 || !claims.roles.every(isRole)) {
      throw new Error(`a token needs at least one known role (${claims.roles.join(', ')})`);
    }
    if (!Number.isInteger(ttlSec) || ttlSec <= 0)
      throw new Error('ttlSec must be a positive integer');
    return new SignJWT({ roles: claims.roles, clusters: claims.clusters ?? [] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSec)
      .sign(this.key);
  }

  async verify(token: string): Promise<Caller> {
    let payload: Record<string, unknown>;
    try {
      // Pinning the algorithm refuses `alg: none` and asymmetric tokens signed with our secret as a "public key".
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      throw unauthenticated(describe(err));
    }
    return toCaller(payload);
  }
}

// Messages name the failure, never the token or the claims' values.
function describe(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'token has expired';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'token algorithm is not allowed';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return 'token signature is invalid';
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    return `token claim ${err.claim} is invalid or missing`;
  }
  return 'token is malformed';
}

function toCaller(payload: Record<string, unknown>): Caller {
  const { sub, roles, clusters } = payload;
  if (typeof sub !== 'string' || sub.length === 0) {
    throw unauthenticated('token claim sub is invalid or missing');
  }
  if (!Array.isArray(roles) || roles.length === 0) {
    throw unauthenticated('token claim roles must be a non-empty array');
  }
  if (!roles.every(isRole)) throw unauthenticated('token claim roles holds an unknown role');
  if (clusters !== undefined) {
    if (!Array.isArray(clusters) || !clusters.every((c) => typeof c === 'string')) {
      throw unauthenticated('token claim clusters must be an array of strings');
    }
  }
  return { sub, roles: [...roles], clusters: clusters ? [...(clusters as string[])] : [] };
}
