import { createSecretKey, KeyObject } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { DomainError } from '@fleet/kernel/errors';
import { Caller, isOwner, isRole, OWNER_RULE, Role } from './caller';

export type TokenClaims = { sub: string; roles: Role[]; clusters?: string[] };

const DAY_SEC = 3600 * 24;

const unauthenticated = (message: string): DomainError =>
  new DomainError('unauthenticated', message, 'unauthenticated');

/** How many verified tokens are remembered (a client reuses its token for every request). */
const VERIFIED_CAPACITY = 10_000;

type Verified = { readonly caller: Caller; readonly exp: number };

/** Issues and checks the API's HS256 bearer tokens. */
export class TokenService {
  /** Built once: given bytes, jose would import a KeyObject on every sign and verify. */
  private readonly key: KeyObject;
  /**
   * Tokens already verified, by their exact text, until their `exp`: the signature, algorithm
   * and claims of a given text never change, and the key is fixed for this service's life.
   * Bounded (the oldest entry goes first); only successes are kept, so a refusal is always
   * checked afresh.
   */
  private readonly verified = new Map<string, Verified>();

  constructor(secret: string) {
    if (!secret) throw new Error('TokenService needs a non-empty secret');
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  async sign(claims: TokenClaims, ttlSec: number = DAY_SEC): Promise<string> {
    if (!isOwner(claims.sub)) throw new Error(`a token's sub ${OWNER_RULE}`);
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
    const known = this.known(token);
    if (known !== undefined) return known;
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
    const caller = toCaller(payload);
    // requiredClaims made jose check that exp is a number in the future.
    this.remember(token, { caller: copyOf(caller), exp: payload.exp as number });
    return caller;
  }

  /**
   * The caller of a token this service verified before and that has not expired since, or
   * undefined (then `verify` it). Synchronous: the request path does not wait a turn for the
   * common case, a client sending the token it sent before.
   */
  known(token: string): Caller | undefined {
    const hit = this.verified.get(token);
    if (hit === undefined) return undefined;
    // jose's rule: expired once exp <= now (whole seconds, no clock tolerance).
    if (hit.exp > Math.floor(Date.now() / 1000)) return copyOf(hit.caller);
    this.verified.delete(token);
    return undefined;
  }

  private remember(token: string, entry: Verified): void {
    this.verified.delete(token);
    this.verified.set(token, entry);
    if (this.verified.size > VERIFIED_CAPACITY) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
  }
}

/** Each request gets a caller of its own: nothing a handler does to one reaches the cache. */
const copyOf = (c: Caller): Caller => ({
  sub: c.sub,
  roles: [...c.roles],
  clusters: [...c.clusters],
});

// Messages name the failure, never the token or the claims' values.
function describe(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'token has expired';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'token algorithm is not allowed';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return 'token signature is invalid';
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    // A well-formed nbf still in the future (jose's reason check_failed): not yet valid.
    if (err.claim === 'nbf' && err.reason === 'check_failed') return 'token is not valid yet (nbf)';
    return `token claim ${err.claim} is invalid or missing`;
  }
  return 'token is malformed';
}

function toCaller(payload: Record<string, unknown>): Caller {
  const { sub, roles, clusters } = payload;
  if (typeof sub !== 'string' || sub.length === 0) {
    throw unauthenticated('token claim sub is invalid or missing');
  }
  // The subject becomes the owner of what the caller creates: one format everywhere.
  if (!isOwner(sub)) throw unauthenticated(`token claim sub ${OWNER_RULE}`);
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
