import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import v8 from 'node:v8';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { UnavailableError } from '@fleet/kernel';
import { Config } from './config/config';
import { AppModule } from './app.module';
import { ErrorFilter } from './platform/errors/error.filter';
import { frameworkErrors } from './platform/errors/framework-errors';
import {
  clientErrors,
  refuseExpectation,
  unsupportedVersion,
} from './platform/errors/client-errors';
import { createValidationPipe } from './platform/http/validation.pipe';
import { jsonBodyParser } from './platform/http/json-body';
import { resolveJwtSecret } from './platform/auth/jwt-secret';
import { installObservability } from './platform/observability/install';
import { setupOpenApi } from './platform/openapi/openapi';
import { IDEMPOTENCY_STORE, installIdempotency } from './platform/idempotency/idempotency.hooks';
import { IdempotencyStore } from './platform/idempotency/idempotency.store';
import { installAdmission } from './platform/auth/admission';
import { TokenService } from './platform/auth/token-service';
import { installLeanRoutes } from './platform/http/lean/lean-route';
import { writeAtEndOfTurn } from './platform/http/end-of-turn';
import { NODE_LEAN_ROUTES, INVENTORY_BODY_LIMITS, INVENTORY_LEAN_ROUTES } from './nodes';

const CORRELATION_HEADER = 'x-correlation-id';
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Bounded heap growth (HEAP_GROWTH_PERCENT): V8 reads the factor at every full GC, so setting
 * it at start works; RSS then stays near the live heap instead of up to 4x it. 0: V8's own.
 */
export const applyHeapGrowth = (percent: number): void => {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
};

/**
 * No allocation-site pretenuring (read at run time, so setting it at start works). Registering
 * nodes keeps what reports allocate (folded states, read models), so V8 learns to allocate
 * those sites' objects straight into the old generation; afterwards every unchanged report's
 * short-lived copies went there too, to be collected by full mark-compacts
 * (docs/PERFORMANCE.md). Off, they die young.
 */
export const disablePretenuring = (): void => {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
};

/** JSON bodies only, through our parser, with the larger limits of the routes that take them. */
const installJsonBodies = (fastify: FastifyInstance, bodyLimitBytes: number): void => {
  // JSON only: a text/plain body reached the DTOs as a string, and the 400 listed every
  // field as missing. Without a parser it is 415 unsupported_media_type, as any other type
  // (a form body included).
  fastify.removeContentTypeParser('text/plain');
  // An empty body labelled JSON is no body; a refused one (malformed, poisoned, nested too
  // deep) names what is wrong (json-body.ts).
  const json = jsonBodyParser(fastify.getDefaultJsonParser('error', 'error'));
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, json);
  // Routes that take larger bodies than BODY_LIMIT_BYTES (never less than it).
  fastify.addHook('onRoute', (route) => {
    const limit = INVENTORY_BODY_LIMITS.get(`${String(route.method)} ${route.url}`);
    if (limit !== undefined) route.bodyLimit = Math.max(limit, bodyLimitBytes);
  });
};

/**
 * Before any route: the request's correlation id (the caller's when it is safe, else ours),
 * then a refusal while shutting down, of an HTTP version the API does not speak, or of an
 * expectation other than 100-continue.
 */
const installRequestGate = (fastify: FastifyInstance, errors: ErrorFilter): void => {
  fastify.server.on('checkExpectation', refuseExpectation);
  // Shutting down: requests still arriving on open connections (the server takes no new
  // ones) are turned away as a store out of reach is, 503 with Retry-After, nothing done.
  const shuttingDown = new UnavailableError('the control plane (shutting down)', null);
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    const given = request.headers[CORRELATION_HEADER];
    const correlationId =
      typeof given === 'string' && SAFE_ID.test(given) ? given : String(request.id);
    (request as unknown as { correlationId: string }).correlationId = correlationId;
    void reply.header(CORRELATION_HEADER, correlationId);
    if (closing) {
      void reply.header('connection', 'close');
      void errors.send(shuttingDown, request, reply);
      return;
    }
    const refused = unsupportedVersion(request.raw);
    if (refused) {
      // Answered here, before any route runs; the connection is not reused.
      void reply.code(refused[0]).header('connection', 'close').send(refused[1]);
      return;
    }
    done();
  });
};

/** Builds the whole control plane on Fastify; `main.ts` and the e2e tests both start it here. */
export const createApp = async (
  config: Config,
  options: {
    /** false: every route through Nest (the lean path's differential test). */
    leanRoutes?: boolean;
    /** false: each socket write made at once, not at the end of the turn (the bench's comparison). */
    endOfTurnSends?: boolean;
  } = {},
): Promise<{ app: NestFastifyApplication; jwtSecret: string; generatedSecret: boolean }> => {
  applyHeapGrowth(config.heapGrowthPercent);
  disablePretenuring();
  const secret = resolveJwtSecret({ configured: config.authJwtSecret, dataDir: config.dataDir });
  const adapter = new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    // Ids of our own, so a client cannot pick the correlation id of someone else's request.
    genReqId: () => randomUUID(),
    logger: false,
    // No Nest middleware in this app: without @fastify/middie every request skips its hook.
    // (Nest refuses `app.use` and MiddlewareConsumer then, rather than ignoring them.)
    skipMiddie: true,
    // Room for the longest id the API accepts (stream ids up to 200 characters and a category).
    routerOptions: { maxParamLength: 256 },
    frameworkErrors,
    clientErrorHandler: clientErrors,
    // Fastify's own 503 while closing is a body of its own: ours (below) is the envelope.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, secret.secret),
    adapter,
    // Held until installObservability hands Nest the pino logger (which honours LOG_LEVEL).
    // A provider that cannot start (the event log held by another process, say) rejects
    // here, for main.ts to report, instead of Nest exiting the process on its own.
    // bodyParser false: the JSON parser is ours (below). Nest's built a parser per request, and
    // added a urlencoded one to an API that speaks JSON only.
    { bufferLogs: true, abortOnError: false, bodyParser: false },
  );
  installObservability(app);
  const fastify = app.getHttpAdapter().getInstance();
  installJsonBodies(fastify, config.bodyLimitBytes);
  const errors = new ErrorFilter();
  app.useGlobalFilters(errors);
  installRequestGate(fastify, errors);
  // The token and the route's roles, before the body is read (401 and 403 first).
  installAdmission(app, app.get(TokenService), errors);
  installIdempotency(app, app.get<IdempotencyStore>(IDEMPOTENCY_STORE), app.get(TokenService));
  if (options.leanRoutes !== false) {
    installLeanRoutes(
      app,
      [...NODE_LEAN_ROUTES, ...INVENTORY_LEAN_ROUTES],
      app.get(TokenService),
      errors,
    );
  }
  if (options.endOfTurnSends !== false) {
    // Each connection's writes go out together at the end of the loop's turn (end-of-turn.ts).
    const log = new Logger('http');
    writeAtEndOfTurn(fastify.server, (error) =>
      log.error(`a socket write failed: ${error instanceof Error ? error.stack : String(error)}`),
    );
  }
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();
  setupOpenApi(app);
  return { app, jwtSecret: secret.secret, generatedSecret: secret.generated };
};
