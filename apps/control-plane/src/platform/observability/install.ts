import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { PlatformRequest } from '../http/command-context';
import { PinoLoggerService } from './logger';
import { Metrics } from './metrics';

export type RegisteredRoute = { readonly method: string; readonly url: string };

const routesByApp = new WeakMap<object, RegisteredRoute[]>();

// Probes and scrapers call every few seconds; their lines would drown the API's.
const QUIET_ROUTES = new Set(['/health/live', '/health/ready', '/metrics']);

/** Every route Fastify registered (Nest's, the docs'), as it registered them: for contract tests. */
export const registeredRoutes = (app: NestFastifyApplication): readonly RegisteredRoute[] =>
  routesByApp.get(app) ?? [];

/**
 * Logs through pino, and logs and measures every request once it is answered. Call before
 * the app initialises (routes are registered on init, and the hooks must see them).
 */
export const installObservability = (app: NestFastifyApplication): void => {
  const logger = app.get(PinoLoggerService);
  app.useLogger(logger);
  const metrics = app.get(Metrics);
  const requests = logger.requests;
  const fastify = app.getHttpAdapter().getInstance();

  const routes: RegisteredRoute[] = [];
  routesByApp.set(app, routes);
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routes.push({ method: String(method), url: route.url });
  });

  // Callback hooks throughout the request path: an async hook costs a promise and a
  // microtask on every request, for work that never waits.
  fastify.addHook('onResponse', (request, reply, done) => {
    // The template, never the raw URL: ids in paths would make unbounded label sets.
    const route = request.routeOptions.url ?? 'unmatched';
    const ms = reply.elapsedTime;
    const status = reply.statusCode;
    metrics.observeRequest(request.method, route, status, ms);
    // A 503 is a store out of reach, logged (throttled) by its client: each request it turns
    // away is expected, a warning. Any other 5xx is a fault. Probes answered otherwise: debug.
    const [level, message] =
      status >= 500 && status !== 503
        ? (['error', 'request failed'] as const)
        : QUIET_ROUTES.has(route)
          ? (['debug', 'request'] as const)
          : status === 503
            ? (['warn', 'request refused: a store is unavailable'] as const)
            : (['info', 'request'] as const);
    if (requests.isLevelEnabled(level)) {
      const req = request as unknown as PlatformRequest;
      requests[level](
        {
          method: request.method,
          route,
          status,
          ms: Math.round(ms * 100) / 100,
          correlationId: req.correlationId ?? String(request.id),
          sub: req.caller?.sub,
        },
        message,
      );
    }
    done();
  });
};
