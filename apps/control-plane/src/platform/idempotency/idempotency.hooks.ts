import { createHash } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from '@nestjs/common';
import { DomainError, UnavailableError, uuidFrom } from '@fleet/kernel';
import { bearerToken } from '../auth/auth.guard';
import { Caller } from '../auth/caller';
import { TokenService } from '../auth/token-service';
import { validationFailed } from '../errors/error-envelope';
import { PlatformRequest } from '../http/command-context';
import { IDEMPOTENCY_TTL_MS, IdempotencyStore, KeyClaim } from './idempotency.store';

export const IDEMPOTENCY_STORE = Symbol('IDEMPOTENCY_STORE');
const logger = new Logger('idempotency');

const KEY = /^[\x21-\x7e]{1,255}$/;
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** JSON with object keys sorted, so equal bodies hash equal whatever their key order. */
export const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
};

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * What "the same request" means under one key: the body and, when there is one, the query
 * string (`?x=1` is another request, refused as such). A request without a query hashes its
 * body alone, as keys kept before the query counted did.
 */
const fingerprint = (body: unknown, query: unknown): string => {
  const q = isEmpty(query) ? null : query;
  // No body and an empty object say the same thing (`{}` is what a client sends for "no
  // options"): a retry that adds or drops it is the same request.
  const b = isEmpty(body) ? null : body;
  return sha256(q === null ? canonical(b) : `${canonical(b)}\n?${canonical(q)}`);
};

const isEmpty = (value: unknown): boolean =>
  value === undefined ||
  value === null ||
  (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);

/**
 * Whose key this is: the subject and everything its token authorises. A stored response was
 * produced after the guard let exactly this authority through, so replaying it (or refusing
 * another body under it) needs no second authorisation; a token with other roles or clusters
 * is another scope and goes through the guard like any request.
 */
const scopeOf = (caller: Caller, method: string, path: string, key: string): string =>
  sha256(
    [
      caller.sub,
      [...caller.roles].sort().join(','),
      [...caller.clusters].sort().join(','),
      method,
      path,
      key,
    ].join('\n'),
  );

/**
 * The request's path as the router understood it: the matched route with its decoded
 * parameters. `/v1/%73essions` reaches the same handler as `/v1/sessions` and must name the
 * same key; for a path written plainly this is the path as sent.
 */
const pathOf = (request: {
  url: string;
  routeOptions: { url?: string };
  params: unknown;
}): string => {
  const template = request.routeOptions.url;
  if (template === undefined) return request.url.split('?')[0];
  const params = (request.params ?? {}) as Record<string, string>;
  return template.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => params[name] ?? '');
};

/**
 * The command a key names, from the key's first use (`firstUse`, kept by the store beside the
 * answers). A retry whose kept answer was lost (the store down when it was put) finds the
 * same first use and derives the same id, so its events dedupe and nothing is done twice.
 * But a key is kept 24 h: reused later it names a new command, which must not dedupe against
 * the first one's events (it would answer 2xx and do nothing). So the id also carries the
 * 24 h window its first use fell in: a first use more than 24 h after the last one is always
 * in a later window. The one loss left: the store losing its data (Redis emptied) *and* the
 * retry crossing a window's end (00:00 UTC) decides the retry as a new command.
 */
export const commandIdFor = (scope: string, firstUse: number): string =>
  uuidFrom('idempotency', scope, String(Math.floor(firstUse / IDEMPOTENCY_TTL_MS)));

/** The hooks' clock, on its own so a test can move it a day on without moving the app's. */
export const idempotencyClock = { now: (): number => Date.now() };

type Pending = {
  readonly scope: string;
  readonly bodyHash: string;
  /** The key's first use, when this request made it: forgotten if the request is refused. */
  created?: KeyClaim;
  release(): void;
};

/** What the hooks leave on the request for the guard and the command context. */
export type IdempotentRequest = PlatformRequest & {
  /**
   * A malformed key (400) or a key store that is down (503): the guard throws it once the
   * caller is authorised, so 401 and 403 come first.
   */
  idempotencyRefusal?: DomainError | UnavailableError;
  idempotency?: Pending;
};

/** The requests under an `Idempotency-Key` of this process, and the key store they share. */
class KeyedRequests {
  /** One request per key at a time: the others wait for it, then replay its answer. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly store: IdempotencyStore,
    private readonly tokens: TokenService,
  ) {}

  /** A request with a key: replayed, refused, or run under the key's command id. */
  async take(request: FastifyRequest, reply: FastifyReply, key: string | string[]): Promise<void> {
    const req = request as unknown as IdempotentRequest;
    let caller: Caller;
    try {
      // Admitted before the body was read (admission.ts); verified here only otherwise.
      caller = req.caller ?? (await this.tokens.verify(bearerToken(request.headers.authorization)));
    } catch {
      return; // the guard refuses the request with 401
    }
    if (typeof key !== 'string' || !KEY.test(key)) {
      req.idempotencyRefusal = validationFailed([
        { field: 'Idempotency-Key', problems: ['must be 1 to 255 visible ASCII characters'] },
      ]);
      return;
    }
    const scope = scopeOf(caller, request.method, pathOf(request), key);
    const bodyHash = fingerprint(request.body, request.query);
    if (await this.answeredFromKey(scope, bodyHash, req, reply)) return;
    await this.claim(scope, bodyHash, req, reply);
  }

  /**
   * Waits for a request running under the same key, then replays the answer kept under it
   * (true), refuses another body (throws), or finds none (false: this request may run).
   */
  private async answeredFromKey(
    scope: string,
    bodyHash: string,
    req: IdempotentRequest,
    reply: FastifyReply,
  ): Promise<boolean> {
    for (;;) {
      const running = this.inFlight.get(scope);
      if (running) {
        await running;
        continue;
      }
      let stored: Awaited<ReturnType<IdempotencyStore['get']>>;
      try {
        stored = await this.store.get(scope);
      } catch (error) {
        // The store is down: the request cannot run under its key, but a caller the route
        // refuses must still hear 401/403 first (and learn nothing of our stores); the guard
        // throws this once the caller is authorised.
        if (!(error instanceof UnavailableError)) throw error;
        req.idempotencyRefusal = error;
        return true;
      }
      if (stored) {
        if (stored.bodyHash !== bodyHash) {
          throw new DomainError(
            'idempotency_key_reused',
            'this Idempotency-Key was used with another request body',
            'conflict',
          );
        }
        const status = stored.status ?? 200;
        void (status === 204 ? reply.code(204).send() : reply.code(status).send(stored.body));
        return true;
      }
      if (!this.inFlight.has(scope)) return false; // else another request claimed the key meanwhile
    }
  }

  /**
   * No answer kept: the key's first use decides the command id, so the retry of an answer that
   * was lost finds it (past midnight too). Another body under the key is refused.
   */
  private async claim(
    scope: string,
    bodyHash: string,
    req: IdempotentRequest,
    reply: FastifyReply,
  ): Promise<void> {
    let settle: () => void = () => undefined;
    this.inFlight.set(scope, new Promise<void>((resolve) => (settle = resolve)));
    let released = false;
    const pending: Pending = {
      scope,
      bodyHash,
      release: () => {
        if (released) return;
        released = true;
        this.inFlight.delete(scope);
        settle();
      },
    };
    let first: Awaited<ReturnType<IdempotencyStore['claim']>>;
    try {
      first = await this.store.claim(scope, { bodyHash, at: idempotencyClock.now() });
    } catch (error) {
      pending.release();
      if (!(error instanceof UnavailableError)) throw error;
      req.idempotencyRefusal = error;
      return;
    }
    if (first.standing.bodyHash !== bodyHash) {
      pending.release();
      // Thrown by the guard, after 401 and 403: a first use that did not answer (lost, or
      // still running elsewhere) and this body are two requests under one key.
      req.idempotencyRefusal = new DomainError(
        'idempotency_key_reused',
        'this Idempotency-Key was used with another request body',
        'conflict',
      );
      return;
    }
    req.commandId = commandIdFor(scope, first.standing.at);
    if (first.created) pending.created = first.standing;
    req.idempotency = pending;
    // Whatever happens to the response (sent, failed, connection lost), waiters move on.
    reply.raw.once('close', pending.release);
  }

  /** Keeps a successful (2xx) answer under its key; a refused request releases the key's first use. */
  async keep(pending: Pending, reply: FastifyReply, payload: unknown): Promise<void> {
    try {
      const status = reply.statusCode;
      if (status >= 200 && status < 300) {
        const body = typeof payload === 'string' && payload !== '' ? JSON.parse(payload) : null;
        try {
          await this.store.put(pending.scope, {
            bodyHash: pending.bodyHash,
            status,
            body,
            at: Date.now(),
          });
        } catch (error) {
          // The command is done: its caller gets its answer. Unkept, a replay is decided
          // again under the same command id (derived from the key), which appends nothing new.
          if (!(error instanceof UnavailableError)) throw error;
          logger.warn(`Idempotency-Key response not kept: ${error.message}`);
        }
      } else if (pending.created) {
        // Refused: it changed nothing, so its key is free for a corrected request.
        try {
          await this.store.unclaim(pending.scope, pending.created);
        } catch (error) {
          if (!(error instanceof UnavailableError)) throw error;
          logger.warn(`Idempotency-Key of a refused request not released: ${error.message}`);
        }
      }
    } finally {
      pending.release();
    }
  }
}

/**
 * `Idempotency-Key` on a mutating request, as Fastify hooks rather than a Nest interceptor
 * (a global interceptor puts an rxjs chain and two AsyncResource binds on every request,
 * with or without the header; here a request without the header costs one lookup).
 *
 * preHandler: with a key and a valid token, the same key and body replay the stored response
 * (status and body) and append nothing; the same key with another body is 409
 * `idempotency_key_reused`. Otherwise the key's first use is claimed (or found: a first use
 * whose answer was lost) and the request runs with a command id derived from the key and that
 * first use, so a retry of a command whose answer was lost derives the same event ids; another
 * body than the first use's is 409 (thrown by the guard, after 401/403). A concurrent request
 * with the same key waits for the first. Without a valid token the hooks step aside and the
 * guard answers 401. onSend keeps successful (2xx) responses only: a refused command changed
 * nothing, so its retry is decided afresh, and the first use it claimed is released.
 */
export const installIdempotency = (
  app: NestFastifyApplication,
  store: IdempotencyStore,
  tokens: TokenService,
): void => {
  const fastify = app.getHttpAdapter().getInstance();
  const keyed = new KeyedRequests(store, tokens);

  // Callback hooks: a request without a key (nearly all) costs a header lookup, not a promise.
  fastify.addHook('preHandler', (request, reply, done) => {
    const key = request.headers['idempotency-key'];
    if (key === undefined || !MUTATING.has(request.method)) return done();
    // A replayed answer is sent here: the route must not run.
    keyed.take(request, reply, key).then(() => {
      if (!reply.sent) done();
    }, done);
  });

  fastify.addHook('onSend', (request, reply, payload, done) => {
    const pending = (request as unknown as IdempotentRequest).idempotency;
    if (!pending) return done(null, payload);
    keyed.keep(pending, reply, payload).then(
      () => done(null, payload),
      (error: Error) => done(error),
    );
  });
};
