import { RequestMethod, Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  PIPES_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  SSE_METADATA,
  VERSION_METADATA,
} from '@nestjs/common/constants';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { CommandContext, Made, isLater } from '@fleet/kernel';
import {
  AdmittedRequest,
  admit,
  admitted,
  readsQuery,
  refuseUnreadQuery,
} from '../../auth/auth.guard';
import { Caller, Role } from '../../auth/caller';
import { joinPath, routeAdmissions } from '../../auth/admission';
import { TokenService } from '../../auth/token-service';
import { ErrorFilter } from '../../errors/error.filter';
import { commandContextOf, PlatformRequest } from '../command-context';
import { createValidationPipe } from '../validation.pipe';

/** What a lean route's handler arguments are made from. */
export type LeanInput = {
  readonly params: Readonly<Record<string, string>>;
  /** The body as parsed, unvalidated. */
  readonly body: unknown;
  readonly caller: Caller;
  readonly ctx: CommandContext;
  /**
   * The body through the app's validation pipe as `dto`, as `@Body() body: Dto` is: at once
   * where its fast path accepts the body (fast-validation.ts), else through a promise.
   */
  validated<T extends object>(dto: Type<T>): Made<T>;
};

type Handler = (...args: never[]) => unknown;
type ArgsOf<F> = F extends (...args: infer A) => unknown ? A : never;

/**
 * A controller route served on the lean path: the same route (its path, method, roles and
 * status are the controller's decorators, so OpenAPI and the route table are unchanged) and
 * the same handler, called without Nest's per-request chain (execution context, guard and
 * pipe consumers, parameter factories, response controller; its cost: docs/PERFORMANCE.md).
 * `args` makes the handler's arguments as its parameter decorators and pipes would.
 * `lean-routes.e2e.spec.ts` holds every lean route's answers to the Nest path's.
 */
export type LeanRoute = {
  readonly controller: Type<object>;
  readonly handler: string;
  readonly args: (input: LeanInput) => Made<readonly unknown[]>;
};

export const leanRoute = <C extends object, K extends keyof C & string>(
  controller: Type<C>,
  handler: K,
  args: (input: LeanInput) => Made<Readonly<ArgsOf<C[K]>>>,
): LeanRoute => ({ controller, handler, args });

/** Decorators whose per-request work the lean path does not do: a route using one is refused. */
const NOT_ON_THE_LEAN_PATH = [
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
  EXCEPTION_FILTERS_METADATA,
  HEADERS_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  SSE_METADATA,
  VERSION_METADATA,
] as const;

type Compiled = {
  readonly key: string;
  readonly roles: readonly Role[] | undefined;
  readonly status: number;
  readonly readsQuery: () => boolean;
  readonly call: (args: readonly unknown[]) => unknown;
  readonly args: LeanRoute['args'];
  matched: number;
};

/** Reads a lean route off its controller's metadata, refusing what the lean path cannot do. */
const compile = (app: NestFastifyApplication, route: LeanRoute): Compiled => {
  const name = `${route.controller.name}.${route.handler}`;
  const handler = (route.controller.prototype as Record<string, unknown>)[route.handler];
  if (typeof handler !== 'function') throw new Error(`lean route ${name}: no such handler`);
  const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
  const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
  if (method === undefined || path === undefined) {
    throw new Error(`lean route ${name}: not a route handler`);
  }
  for (const key of NOT_ON_THE_LEAN_PATH) {
    const on = [Reflect.getMetadata(key, handler), Reflect.getMetadata(key, route.controller)];
    if (on.some((m) => m !== undefined && !(Array.isArray(m) && m.length === 0))) {
      throw new Error(`lean route ${name}: ${key} is not served on the lean path`);
    }
  }
  const key = `${RequestMethod[method]} ${joinPath(Reflect.getMetadata(PATH_METADATA, route.controller) as string, path)}`;
  // What the route asks of its caller, read as the admission hook reads it (admission.ts).
  const admission = routeAdmissions([route.controller]).get(key);
  if (admission === undefined || admission.public) {
    throw new Error(`lean route ${name}: only authenticated routes are served on the lean path`);
  }
  const instance = app.get(route.controller, { strict: false }) as Record<string, Handler>;
  return {
    key,
    roles: admission.roles,
    // Nest's default: 201 for POST, 200 otherwise.
    status:
      (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ??
      (method === RequestMethod.POST ? 201 : 200),
    readsQuery: readsQuery(route.controller, route.handler) ? () => true : () => false,
    call: (args) => (instance[route.handler] as (...a: unknown[]) => unknown)(...args),
    args: route.args,
    matched: 0,
  };
};

const routesByApp = new WeakMap<object, readonly string[]>();

/** The routes the app serves on the lean path, as `METHOD /path` (for tests). */
export const leanRoutesOf = (app: NestFastifyApplication): readonly string[] =>
  routesByApp.get(app) ?? [];

/**
 * Serves `routes` on the lean path: when Nest registers each with Fastify, its handler is
 * replaced by one doing the same work in the same order. The app's Fastify hooks (correlation
 * id, body parser and depth limit, Idempotency-Key, metrics and the request log) run as for
 * any route. Then: an empty path parameter is not found (as Nest's adapter has it); the
 * caller is admitted as the AuthGuard admits (token, roles, the key's refusal), a query
 * parameter the handler does not read is refused; the arguments are made (pipes); the handler
 * runs and its result is sent with the route's status. Any error is answered by the app's
 * ErrorFilter. Call before the app initialises; a route that matches nothing stops the start.
 */
export const installLeanRoutes = (
  app: NestFastifyApplication,
  routes: readonly LeanRoute[],
  tokens: TokenService,
  filter: ErrorFilter,
): void => {
  const pipe = createValidationPipe();
  const compiled = new Map<string, Compiled>();
  for (const route of routes) {
    const c = compile(app, route);
    compiled.set(c.key, c);
  }
  routesByApp.set(app, [...compiled.keys()]);
  const fastify = app.getHttpAdapter().getInstance();

  const serve =
    (c: Compiled): RouteHandlerMethod =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const params = request.params as Record<string, string>;
      for (const name in params) {
        if (params[name] === '') return reply.callNotFound();
      }
      try {
        const req = request as unknown as AdmittedRequest & PlatformRequest;
        const caller = admitted(req) ?? (await admit(tokens, req, c.roles));
        refuseUnreadQuery(request.query, c.readsQuery);
        const ctx = commandContextOf(req);
        const made = c.args({
          params,
          body: request.body,
          caller,
          ctx,
          validated: <T extends object>(dto: Type<T>): Made<T> => {
            const metadata = { type: 'body', metatype: dto, data: undefined } as const;
            const now = pipe.validateNow(request.body, metadata);
            return now !== undefined
              ? (now as T)
              : (pipe.transform(request.body, metadata) as Promise<T>);
          },
        });
        // A route whose arguments need no waiting costs no turn of the loop.
        const args = isLater(made) ? await made : made;
        const result = await c.call(args);
        return reply.code(c.status).send(c.status === 204 ? undefined : result);
      } catch (error) {
        return filter.send(error, request, reply);
      }
    };

  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.length !== 1) return;
    const c = compiled.get(`${String(methods[0])} ${route.url}`);
    if (!c) return;
    c.matched++;
    route.handler = serve(c);
  });
  fastify.addHook('onReady', async () => {
    const unmatched = [...compiled.values()].filter((c) => c.matched !== 1);
    if (unmatched.length > 0) {
      throw new Error(
        `lean routes not registered exactly once: ${unmatched.map((c) => c.key).join(', ')}`,
      );
    }
  });
};
