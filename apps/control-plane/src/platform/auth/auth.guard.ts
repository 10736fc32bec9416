import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { Reflector } from '@nestjs/core';
import { DomainError } from '@fleet/kernel/errors';
import { validationFailed } from '../errors/error-envelope';
import { ADMIN, Caller, hasRole, isPrivileged, Role } from './caller';
import { IS_PUBLIC_KEY, RequestWithCaller, ROLES_KEY } from './decorators';
import { TokenService } from './token-service';

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;

/**
 * Global guard: every route needs a valid bearer token unless it is @Public(). A route
 * without @Roles is admin-only, so a forgotten decorator fails closed.
 * Admin passes every authenticated route: the contract grants it every command and query.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  /** Per handler: whether it reads a query DTO (which then refuses unknown parameters). */
  private readonly takesQuery = new WeakMap<object, boolean>();

  // Explicit @Inject: tsx/esbuild emits no decorator metadata, so don't rely on parameter types.
  constructor(
    @Inject(TokenService) private readonly tokens: TokenService,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const request = context.switchToHttp().getRequest<AdmittedRequest>();
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets)) {
      if (request.idempotencyRefusal) throw request.idempotencyRefusal;
      return true;
    }
    await admit(
      this.tokens,
      request,
      this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, targets),
    );
    refuseUnreadQuery(request.query, () => this.readsQuery(context));
    return true;
  }

  private readsQuery(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let reads = this.takesQuery.get(handler);
    if (reads === undefined) {
      reads = readsQuery(context.getClass(), handler.name);
      this.takesQuery.set(handler, reads);
    }
    return reads;
  }
}

/** What the guard reads off a request, and the caller it attaches. */
export type AdmittedRequest = RequestWithCaller & {
  idempotencyRefusal?: Error;
  query?: unknown;
};

/**
 * The caller the route's admission hook attached, for this route's roles (so not checked
 * twice), or undefined when none was: then `admit`. Throws what the Idempotency-Key's hook
 * refused, as `admit` does. Synchronous: the common request waits no turn for it.
 */
export const admitted = (request: AdmittedRequest): Caller | undefined => {
  const caller = request.caller;
  if (caller !== undefined && request.idempotencyRefusal) throw request.idempotencyRefusal;
  return caller;
};

/**
 * An authenticated route's admission, shared by the guard and the lean routes: a valid bearer
 * token (401), one of `required` (403), then what the idempotency hooks found wrong with the
 * key (400, 503), only now so that 401 and 403 keep precedence over it. The caller is
 * usually admitted already, before its body was read (admission.ts), for the same roles.
 * Attaches the caller to the request.
 */
export const admit = async (
  tokens: TokenService,
  request: AdmittedRequest,
  required: readonly Role[] | undefined,
): Promise<Caller> => {
  const caller = admitted(request) ?? authorise(await authenticate(tokens, request), required);
  request.caller = caller;
  if (request.idempotencyRefusal) throw request.idempotencyRefusal;
  return caller;
};

/** The caller a request's bearer token proves, or 401. */
export const authenticate = async (
  tokens: TokenService,
  request: AdmittedRequest,
): Promise<Caller> => {
  const token = bearerToken(request.headers['authorization']);
  return tokens.known(token) ?? (await tokens.verify(token));
};

/**
 * `caller` if it has one of `required` (a route without any is admin-only, so a forgotten
 * decorator fails closed; admin passes every route: the contract grants it every command and
 * query), or 403.
 */
export const authorise = (caller: Caller, required: readonly Role[] | undefined): Caller => {
  const allowed: readonly Role[] = required && required.length > 0 ? required : ADMIN;
  if (!isPrivileged(caller) && !hasRole(caller, allowed)) {
    throw new DomainError(
      'forbidden',
      `this action needs one of the roles: ${allowed.join(', ')}`,
      'forbidden',
    );
  }
  return caller;
};

/** Whether a controller's handler reads a query DTO (with @Query()). */
export const readsQuery = (controller: object, handlerName: string): boolean => {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handlerName) ?? {}) as Record<
    string,
    unknown
  >;
  return Object.keys(args).some((k) => k.split(':')[0] === String(RouteParamtypes.QUERY));
};

/**
 * A route without a query DTO takes no query parameter: `POST /v1/sessions/{id}/pause?x=1`
 * is 400 naming `x`, as an unknown parameter of a list route is, instead of running as if
 * the parameter were not there (its sender meant something by it). `reads` is asked only
 * when there is a parameter.
 */
export const refuseUnreadQuery = (query: unknown, reads: () => boolean): void => {
  if (!query || typeof query !== 'object') return;
  const names = Object.keys(query);
  if (names.length === 0 || reads()) return;
  throw validationFailed(
    names.map((field) => ({ field, problems: ['this route takes no query parameters'] })),
  );
};

/**
 * Headers already read into their token, by their exact text: a client sends the same header
 * with every request, and the token's text is a pure function of it. Only well-formed headers
 * are kept (a refusal is always worked out afresh); bounded (start over when full).
 */
const readHeaders = new Map<string, string>();
const READ_HEADERS_CAPACITY = 10_000;

/** The token of an `Authorization: Bearer <token>` header, or 401. */
export function bearerToken(header: unknown): string {
  if (typeof header === 'string') {
    const known = readHeaders.get(header);
    if (known !== undefined) return known;
  }
  const token = readBearer(header);
  if (readHeaders.size >= READ_HEADERS_CAPACITY) readHeaders.clear();
  readHeaders.set(header as string, token);
  return token;
}

function readBearer(header: unknown): string {
  if (header === undefined || header === '') {
    throw new DomainError('unauthenticated', 'Authorization header is missing', 'unauthenticated');
  }
  const match = typeof header === 'string' ? BEARER.exec(header) : null;
  if (!match) {
    throw new DomainError(
      'unauthenticated',
      'Authorization header must be "Bearer <token>"',
      'unauthenticated',
    );
  }
  const token = match[1];
  // base64url has one spelling per byte string, but decoders forgive padding and the unused
  // low bits of the last character, so `sig==` or a sibling last character verified as the
  // token itself. Only the spelling issued is accepted: a deny-list, a log search or a rate
  // limit keyed on the token's text cannot be sidestepped by respelling it.
  const signature = token.slice(token.lastIndexOf('.') + 1);
  if (Buffer.from(signature, 'base64url').toString('base64url') !== signature) {
    throw new DomainError('unauthenticated', 'the token is not valid', 'unauthenticated');
  }
  return token;
}
