import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { Caller, Role } from './caller';

export const IS_PUBLIC_KEY = 'auth:isPublic';
export const ROLES_KEY = 'auth:roles';

/** Served without a token (health, metrics, docs). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC_KEY, true);

/** The caller needs at least one of these roles; a handler's list overrides its class's. */
export const Roles = (...roles: Role[]): MethodDecorator & ClassDecorator =>
  SetMetadata(ROLES_KEY, roles);

export type RequestWithCaller = { caller?: Caller; headers: Record<string, unknown> };

/** The verified caller the AuthGuard attached to the request. */
export const CurrentCaller = createParamDecorator((_data: unknown, ctx: ExecutionContext) => {
  const caller = ctx.switchToHttp().getRequest<RequestWithCaller>().caller;
  // Only reachable on a @Public() route, where asking for a caller is a wiring mistake.
  if (!caller)
    throw new Error('@CurrentCaller() used on a route the AuthGuard did not authenticate');
  return caller;
});
