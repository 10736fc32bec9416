import { RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ErrorFilter } from '../errors/error.filter';
import { AdmittedRequest, authorise, bearerToken } from './auth.guard';
import { Caller, Role } from './caller';
import { IS_PUBLIC_KEY, ROLES_KEY } from './decorators';
import { TokenService } from './token-service';

/** What a controller route asks of its caller, read off its decorators. */
export type RouteAdmission = {
  readonly public: boolean;
  readonly roles: readonly Role[] | undefined;
};

export const joinPath = (...parts: Array<string | undefined>): string =>
  `/${parts
    .map((p) => (p ?? '').replace(/^\/+|\/+$/g, ''))
    .filter((p) => p !== '')
    .join('/')}`;

const pathsOf = (metadata: unknown): string[] =>
  Array.isArray(metadata) ? (metadata as string[]) : [(metadata as string | undefined) ?? ''];

/** Every route of `controllers`, as `METHOD /path` → its admission (handler's over class's). */
export const routeAdmissions = (
  controllers: Iterable<Type<object>>,
): ReadonlyMap<string, RouteAdmission> => {
  const out = new Map<string, RouteAdmission>();
  for (const controller of controllers) {
    const prefixes = pathsOf(Reflect.getMetadata(PATH_METADATA, controller));
    const proto = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = Object.getOwnPropertyDescriptor(proto, name)?.value as unknown;
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      const paths = Reflect.getMetadata(PATH_METADATA, handler) as unknown;
      if (method === undefined || paths === undefined) continue;
      const read = <T>(key: string): T | undefined =>
        (Reflect.getMetadata(key, handler) ?? Reflect.getMetadata(key, controller)) as
          T | undefined;
      const admission = {
        public: read<boolean>(IS_PUBLIC_KEY) === true,
        roles: read<Role[]>(ROLES_KEY),
      };
      for (const prefix of prefixes) {
        for (const path of pathsOf(paths)) {
          out.set(`${RequestMethod[method]} ${joinPath(prefix, path)}`, admission);
        }
      }
    }
  }
  return out;
};

const controllersOf = (app: NestFastifyApplication): Array<Type<object>> => {
  const out: Array<Type<object>> = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      if (wrapper.metatype) out.push(wrapper.metatype as Type<object>);
    }
  }
  return out;
};

/**
 * The caller is admitted before the body is read: every authenticated route gets a route
 * `onRequest` hook that checks the bearer token and the route's roles (401, 403) as the
 * AuthGuard does, and attaches the caller. So a caller without a valid token, or with the
 * wrong role, is turned away before its body (up to a route's body limit) is received and
 * parsed, and learns nothing from how that body would have been judged (400, 413, 415).
 * What needs the body (an operator's cluster in a report) or the route's other hooks (the
 * Idempotency-Key's refusal) is still decided later; the guard and the lean path find the
 * caller attached, admitted for that route's roles. A route the scan does not find (none in this
 * app) falls back to the guard alone. Call before the app initialises.
 */
export const installAdmission = (
  app: NestFastifyApplication,
  tokens: TokenService,
  filter: ErrorFilter,
): void => {
  const admissions = routeAdmissions(controllersOf(app));
  const refuse = (error: unknown, request: FastifyRequest, reply: FastifyReply): void => {
    // Turned away before its body was read: the connection closes after the answer, so the
    // unread body (an anonymous one, perhaps large or malformed) is neither read nor parsed
    // as the next request.
    const headers = request.headers;
    const content = headers['content-length'];
    if (headers['transfer-encoding'] !== undefined || (content !== undefined && content !== '0')) {
      void reply.header('connection', 'close');
    }
    void filter.send(error, request, reply);
  };
  // A callback hook: a token seen before (nearly every request) is admitted without a promise.
  const hookFor =
    (roles: readonly Role[] | undefined): onRequestHookHandler =>
    (request, reply, done) => {
      const params = request.params as Record<string, string> | undefined;
      // An empty path parameter is not found (the route answers 404), token or none.
      for (const name in params) if (params[name] === '') return done();
      const req = request as unknown as AdmittedRequest;
      let token: string;
      let known: Caller | undefined;
      try {
        token = bearerToken(request.headers.authorization);
        known = tokens.known(token);
        if (known !== undefined) req.caller = authorise(known, roles);
      } catch (error) {
        return refuse(error, request, reply);
      }
      // Outside the try: the rest of the request may run within done().
      if (known !== undefined) return done();
      tokens.verify(token).then(
        (caller) => {
          try {
            req.caller = authorise(caller, roles);
          } catch (error) {
            return refuse(error, request, reply);
          }
          done();
        },
        (error: unknown) => refuse(error, request, reply),
      );
    };

  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.length !== 1) return;
    // Fastify answers HEAD on a GET route with a route of its own.
    const method = methods[0] === 'HEAD' ? 'GET' : String(methods[0]);
    const admission = admissions.get(`${method} ${route.url}`);
    if (!admission || admission.public) return;
    const own = route.onRequest;
    const hooks = own === undefined ? [] : Array.isArray(own) ? own : [own];
    if (hooks.some((h) => ADMITS in h)) return;
    const hook = Object.assign(hookFor(admission.roles), { [ADMITS]: true });
    route.onRequest = [...hooks, hook];
  });
};

/** Marks the admission hook (a HEAD route may copy its GET route's hooks). */
const ADMITS = Symbol('admits');
