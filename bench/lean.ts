/**
 * The floor of the cordon's work without a framework: bare Fastify with only what a trivial
 * authenticated command route must do, written as lean as we know how. It is not the app and
 * shares no code with it; it answers how much of bare Fastify's rate *any* implementation of
 * the no-op cordon keeps on this machine:
 * - a correlation id per request (checked if given, echoed as a header), as the app's hook;
 * - the HS256 bearer token checked with jose, verified tokens remembered by their text until
 *   `exp` (as the app's TokenService), and the admin role required (401 / 403 otherwise);
 * - the node id's format and the body (an object with at most a string `reason`) checked;
 * - the command decided on in-memory state (already cordoned: no event) and timed into a
 *   prom-client histogram, and every response counted by route and status, as the app does;
 * - the answer: the Node the app itself answered for this node (BENCH_NODE_VIEW, passed by the
 *   http suite), with `heartbeatAgeSec` computed at the request, so both send the same bytes.
 */
import { createSecretKey } from 'node:crypto';
import Fastify, { FastifyReply } from 'fastify';
import { jwtVerify } from 'jose';
import { Counter, Histogram, Registry } from 'prom-client';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REASON_MAX = 512;

type Claims = { roles: string[]; exp: number };
type NodeView = Record<string, unknown> & { nodeId: string; lastSeenAt: string };

const refuse = (reply: FastifyReply, status: number, code: string) =>
  reply.code(status).send({ error: { code, message: code } });

export const startLean = async (): Promise<{ url: string }> => {
  const view = JSON.parse(process.env.BENCH_NODE_VIEW ?? 'null') as NodeView | null;
  if (!view) throw new Error('the lean floor needs BENCH_NODE_VIEW (the app answer to copy)');
  const key = createSecretKey(Buffer.from(process.env.AUTH_JWT_SECRET ?? '', 'utf8'));
  const verified = new Map<string, Claims>();
  const cordoned = new Map<string, boolean>([[view.nodeId, true]]);
  const lastSeen = Date.parse(view.lastSeenAt);
  const registry = new Registry();
  const latency = new Histogram({
    name: 'lean_command_seconds',
    help: 'command latency',
    labelNames: ['command', 'outcome'],
    registers: [registry],
  });
  const responses = new Counter({
    name: 'lean_http_responses_total',
    help: 'responses',
    labelNames: ['route', 'status'],
    registers: [registry],
  });

  const fastify = Fastify({ logger: false, bodyLimit: 1_048_576 });
  fastify.addHook('onRequest', async (request, reply) => {
    const given = request.headers['x-correlation-id'];
    void reply.header(
      'x-correlation-id',
      typeof given === 'string' && SAFE_ID.test(given) ? given : String(request.id),
    );
  });
  fastify.addHook('onResponse', async (request, reply) => {
    responses.inc({ route: request.routeOptions.url ?? 'none', status: reply.statusCode });
  });

  const caller = async (header: string | undefined): Promise<Claims | null> => {
    if (!header?.startsWith('Bearer ')) return null;
    const token = header.slice(7);
    const now = Math.floor(Date.now() / 1000);
    const hit = verified.get(token);
    if (hit && hit.exp > now) return hit;
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
      const claims = { roles: payload.roles as string[], exp: payload.exp ?? 0 };
      verified.set(token, claims);
      return claims;
    } catch {
      return null;
    }
  };

  fastify.post<{ Params: { nodeId: string }; Body: unknown }>(
    '/v1/nodes/:nodeId/cordon',
    async (request, reply) => {
      const claims = await caller(request.headers.authorization);
      if (!claims) return refuse(reply, 401, 'unauthenticated');
      if (!claims.roles.includes('admin')) return refuse(reply, 403, 'forbidden');
      const { nodeId } = request.params;
      if (!UUID.test(nodeId)) return refuse(reply, 400, 'validation_failed');
      const body = request.body as Record<string, unknown> | null;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        return refuse(reply, 400, 'validation_failed');
      }
      for (const field in body) {
        if (field !== 'reason') return refuse(reply, 400, 'validation_failed');
      }
      const reason = body.reason;
      if (reason !== undefined && (typeof reason !== 'string' || reason.length > REASON_MAX)) {
        return refuse(reply, 400, 'validation_failed');
      }
      const started = performance.now();
      const state = cordoned.get(nodeId);
      if (state === undefined) return refuse(reply, 404, 'not_found');
      const events = state ? [] : [{ type: 'NodeCordoned', data: { reason: reason ?? null } }];
      if (events.length > 0) cordoned.set(nodeId, true);
      latency.observe(
        { command: 'CordonNode', outcome: events.length > 0 ? 'appended' : 'noop' },
        (performance.now() - started) / 1000,
      );
      return { ...view, heartbeatAgeSec: Math.max(0, Math.floor((Date.now() - lastSeen) / 1000)) };
    },
  );
  const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  return { url };
};
