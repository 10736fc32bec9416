/**
 * The floors of the two request-rate targets without a framework: bare Fastify with only what
 * each route must do, written as lean as we know how. Not the app, and sharing none of its code
 * but the timing of socket writes: they answer how much of bare Fastify's rate *any*
 * implementation keeps on this machine.
 *
 * The no-op cordon (BENCH_NODE_VIEW set):
 * - a correlation id per request (checked if given, echoed as a header), as the app's hook;
 * - the HS256 bearer token checked with jose, verified tokens remembered by their text until
 *   `exp` (as the app's TokenService), and the admin role required (401 / 403 otherwise);
 * - the node id's format and the body (an object with at most a string `reason`) checked;
 * - the command decided on in-memory state (already cordoned: no event) and timed into a
 *   prom-client histogram, and every response counted by route and status, as the app does;
 * - socket writes made together at the end of the event loop's turn, as the app makes them
 *   (the one piece of the app used here: http/end-of-turn.ts);
 * - the answer: the Node the app itself answered for this node (BENCH_NODE_VIEW, passed by the
 *   http suite), with `heartbeatAgeSec` computed at the request, so both send the same bytes.
 *
 * The no-change inventory report (BENCH_LEAN_FLEET=clusters x nodes per cluster, the nodes
 * suite's fleet, held in memory like the app's 100,000 nodes):
 * - the same token check, the operator role and the report's cluster in its token;
 * - the body checked as the API's rules say (cluster id, 1-1000 nodes, each node's hostname,
 *   role, labels, capacity, cards and flags, no unknown field);
 * - each node found by (cluster, hostname), compared field by field with what is known (no
 *   change), its last sighting written, and the answer the API gives (hostname, node id,
 *   status, desired).
 */
import { createSecretKey, randomUUID } from 'node:crypto';
import Fastify, { FastifyInstance, FastifyReply } from 'fastify';
import { jwtVerify } from 'jose';
import { Counter, Histogram, Registry } from 'prom-client';
import { writeAtEndOfTurn } from '../apps/control-plane/src/platform/http/end-of-turn';
import { clusterIdOf, nodeBody, NodeReportBody } from './fleet';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REASON_MAX = 512;

type Claims = { roles: string[]; clusters: string[]; exp: number };
type NodeView = Record<string, unknown> & { nodeId: string; lastSeenAt: string };

const refuse = (reply: FastifyReply, status: number, code: string) =>
  reply.code(status).send({ error: { code, message: code } });

export const startLean = async (): Promise<{ url: string }> => {
  const view = JSON.parse(process.env.BENCH_NODE_VIEW ?? 'null') as NodeView | null;
  const fleet = /^(\d+)x(\d+)$/.exec(process.env.BENCH_LEAN_FLEET ?? '');
  if (!view && !fleet) throw new Error('the lean floor needs BENCH_NODE_VIEW or BENCH_LEAN_FLEET');
  const key = createSecretKey(Buffer.from(process.env.AUTH_JWT_SECRET ?? '', 'utf8'));
  const verified = new Map<string, Claims>();
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

  const timed = (command: string, started: number, appended: boolean): void =>
    latency.observe(
      { command, outcome: appended ? 'appended' : 'noop' },
      (performance.now() - started) / 1000,
    );
  const caller = async (header: string | undefined): Promise<Claims | null> => {
    if (!header?.startsWith('Bearer ')) return null;
    const token = header.slice(7);
    const now = Math.floor(Date.now() / 1000);
    const hit = verified.get(token);
    if (hit && hit.exp > now) return hit;
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'] });
      const claims = {
        roles: payload.roles as string[],
        clusters: (payload.clusters as string[] | undefined) ?? [],
        exp: payload.exp ?? 0,
      };
      verified.set(token, claims);
      return claims;
    } catch {
      return null;
    }
  };

  // Socket writes made together at the end of the loop's turn, as the app makes them.
  writeAtEndOfTurn(fastify.server, (error) => {
    throw error;
  });

  if (view) cordonRoute(fastify, caller, timed, view);
  if (fleet) reportRoute(fastify, caller, timed, Number(fleet[1]), Number(fleet[2]));
  const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
  return { url };
};

type Caller = (header: string | undefined) => Promise<Claims | null>;
type Timed = (command: string, started: number, appended: boolean) => void;

const cordonRoute = (
  fastify: FastifyInstance,
  caller: Caller,
  timed: Timed,
  view: NodeView,
): void => {
  const cordoned = new Map<string, boolean>([[view.nodeId, true]]);
  const lastSeen = Date.parse(view.lastSeenAt);
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
      timed('CordonNode', started, events.length > 0);
      return { ...view, heartbeatAgeSec: Math.max(0, Math.floor((Date.now() - lastSeen) / 1000)) };
    },
  );
};

const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const CLUSTER = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const GPU_UUID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;
const ROLES = new Set(['gpu', 'cpu', 'master', 'storage']);
const MODELS = new Set(['L40S', 'HPC_GPU', 'MIG_1g', 'MIG_2g', 'MIG_3g']);
const NODE_KEYS = new Set([
  'hostname',
  'role',
  'labels',
  'capacity',
  'gpus',
  'kubeletReady',
  'unschedulable',
  'observedAt',
]);

type Known = NodeReportBody & { nodeId: string; lastSeen: number; cordoned: boolean };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown, max: number): boolean =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;

/** The API's rules for one reported node (no unknown field at any level). */
const validNode = (n: unknown): n is NodeReportBody => {
  if (!isObject(n)) return false;
  for (const k in n) if (!NODE_KEYS.has(k)) return false;
  if (typeof n.hostname !== 'string' || !HOSTNAME.test(n.hostname)) return false;
  if (!ROLES.has(n.role as string)) return false;
  if (!isObject(n.labels)) return false;
  for (const k in n.labels) if (typeof n.labels[k] !== 'string' || k.length > 317) return false;
  const c = n.capacity;
  if (!isObject(c) || Object.keys(c).length !== 3) return false;
  if (!count(c.cpu, 100_000) || !count(c.memoryGiB, 1 << 24) || !count(c.diskGiB, 1 << 30)) {
    return false;
  }
  if (!Array.isArray(n.gpus) || n.gpus.length > 64) return false;
  for (const g of n.gpus as unknown[]) {
    if (!isObject(g) || Object.keys(g).length !== 3) return false;
    if (typeof g.uuid !== 'string' || !GPU_UUID.test(g.uuid)) return false;
    if (!MODELS.has(g.model as string) || !count(g.memoryGiB, 4096)) return false;
  }
  if (typeof n.kubeletReady !== 'boolean' || typeof n.unschedulable !== 'boolean') return false;
  return n.observedAt === undefined || typeof n.observedAt === 'string';
};

/** Nothing the node says differs from what is known: no event, only a sighting. */
const unchanged = (known: Known, n: NodeReportBody): boolean => {
  if (known.role !== n.role || known.kubeletReady !== n.kubeletReady) return false;
  if (known.unschedulable !== n.unschedulable) return false;
  const c = known.capacity;
  if (c.cpu !== n.capacity.cpu || c.memoryGiB !== n.capacity.memoryGiB) return false;
  if (c.diskGiB !== n.capacity.diskGiB) return false;
  const labels = Object.keys(n.labels);
  if (labels.length !== Object.keys(known.labels).length) return false;
  for (const k of labels) if (known.labels[k] !== n.labels[k]) return false;
  if (known.gpus.length !== n.gpus.length) return false;
  for (let i = 0; i < n.gpus.length; i++) {
    const a = known.gpus[i];
    const b = n.gpus[i];
    if (a.uuid !== b.uuid || a.model !== b.model || a.memoryGiB !== b.memoryGiB) return false;
  }
  return true;
};

const reportRoute = (
  fastify: FastifyInstance,
  caller: Caller,
  timed: Timed,
  clusters: number,
  perCluster: number,
): void => {
  const known = new Map<string, Known>();
  for (let c = 0; c < clusters; c++) {
    for (let n = 0; n < perCluster; n++) {
      const body = nodeBody(c, n);
      known.set(`${clusterIdOf(c)}/${body.hostname}`, {
        ...body,
        nodeId: randomUUID(),
        lastSeen: Date.now(),
        cordoned: false,
      });
    }
  }
  fastify.post('/v1/inventory/reports', async (request, reply) => {
    const claims = await caller(request.headers.authorization);
    if (!claims) return refuse(reply, 401, 'unauthenticated');
    if (!claims.roles.includes('operator')) return refuse(reply, 403, 'forbidden');
    const body = request.body;
    if (!isObject(body) || Object.keys(body).length !== 2) {
      return refuse(reply, 400, 'validation_failed');
    }
    const { clusterId, nodes } = body;
    if (typeof clusterId !== 'string' || !CLUSTER.test(clusterId)) {
      return refuse(reply, 400, 'validation_failed');
    }
    if (!claims.clusters.includes(clusterId)) return refuse(reply, 403, 'forbidden');
    if (!Array.isArray(nodes) || nodes.length < 1 || nodes.length > 1000) {
      return refuse(reply, 400, 'validation_failed');
    }
    for (const n of nodes as unknown[]) {
      if (!validNode(n)) return refuse(reply, 400, 'validation_failed');
    }
    const now = Date.now();
    const answer = [];
    for (const n of nodes as NodeReportBody[]) {
      const started = performance.now();
      const node = known.get(`${clusterId}/${n.hostname}`);
      if (!node || !unchanged(node, n)) return refuse(reply, 409, 'not_a_no_change_report');
      node.lastSeen = now;
      timed('ReportInventory', started, false);
      answer.push({
        hostname: n.hostname,
        nodeId: node.nodeId,
        status: node.cordoned ? 'cordoned' : 'ready',
        desired: { unschedulable: node.cordoned },
      });
    }
    return { nodes: answer };
  });
};
