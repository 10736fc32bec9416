import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { Reflector } from '@nestjs/core';
import { DomainError } from '../../../../../libs/kernel/src/errors';
import { validationFailed } from '../errors/error-envelope';
import { hasRole, Role } from './caller';
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
    const request = context
      .switchToHttp()
      .getRequest<RequestWithCaller & { idempotencyRefusal?: Error; query?: unknown }>();
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC_KEY, targets)) {
      if (request.idempotencyRefusal) throw request.idempotencyRefusal;
      return true;
    }

    const caller = await this.tokens.verify(bearerToken(request.headers['authorization']));

    const required = this.reflector.getAllAndOverride<Role[] | undefined>(ROLES_KEY, targets);
    const allowed: Role[] = required && required.length > 0 ? required : ['admin'];
    if (!hasRole(caller, 'admin', ...allowed)) {
      throw new DomainError(
        'forbidden',
        `this action needs one of the roles: ${allowed.join(', ')}`,
        'forbidden',
      );
    }
    request.caller = caller;
    // A malformed Idempotency-Key, or a key store that is down (found by the idempotency
    // hooks), is refused only now, so that 401 and 403 keep precedence over it.
    if (request.idempotencyRefusal) throw request.idempotencyRefusal;
    this.refuseUnreadQuery(context, request.query);
    return true;
  }

  /**
   * A route without a query DTO takes no query parameter: `POST /v1/sessions/{id}/pause?x=1`
   * is 400 naming `x`, as an unknown parameter of a list route is, instead of running as if
   * the parameter were not there (its sender meant something by it).
   */
  private refuseUnreadQuery(context: ExecutionContext, query: unknown): void {
    if (!query || typeof query !== 'object') return;
    const names = Object.keys(query);
    if (names.length === 0) return;
    const handler = context.getHandler();
    let reads = this.takesQuery.get(handler);
    if (reads === undefined) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ??
        {}) as Record<string, unknown>;
      reads = Object.keys(args).some((k) => k.split(':')[0] === String(RouteParamtypes.QUERY));
      this.takesQuery.set(handler, reads);
    }
    if (reads) return;
    throw validationFailed(
      names.map((field) => ({ field, problems: ['this route takes no query parameters'] })),
    );
  }
}

/** The token of an `Authorization: Bearer <token>` header, or 401. */
export function bearerToken(header: unknown): string {
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
