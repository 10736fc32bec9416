import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { INestApplicationContext } from '@nestjs/common';
import { openRebuildContext } from '../../apps/control-plane/src/cli/rebuild';
import { loadConfig } from '../../apps/control-plane/src/config/config';
import { NodesQueries } from '../../apps/control-plane/src/nodes/nodes.queries';
import { NotificationsController } from '../../apps/control-plane/src/notifications/notifications.controller';
import { rebuildReadModels } from '../../apps/control-plane/src/platform/runtime/rebuild';
import { TEST_SECRET } from '../support/app';
import { ChildApp, DIST_REBUILD, ROOT, ensureBuilt, startChildApp } from '../support/child-app';
import { NodeInput, cpuNode, eventually, gpuNode, report, sleep } from '../support/reports';

/**
 * The foundation's crash promise: kill -9 between an append and its projection, start again,
 * and the read models equal a full rebuild of the log, with every acknowledged command in it.
 * The app runs as a compiled child process so the kill is real.
 */

// Long timers: nothing but the test's own commands appends, so snapshots can be compared.
const ENV = { NODE_STALE_SEC: '3600', CORDON_SYNC_SEC: '3600' };
const CLUSTERS = ['c1', 'c2', 'c3'] as const;
const ROUNDS = 5;

type Json = Record<string, unknown>;
type Reply = { status: number; body: Json | null } | { status: 'lost'; error: string };

/** One node as the operator describes it, and where it is known to be (nodeId once registered). */
type Host = {
  clusterId: string;
  hostname: string;
  kind: 'gpu' | 'cpu';
  size: number; // GPU cards, or vCPUs
  kubeletReady: boolean;
  nodeId: string | null;
};

/** What GET /v1/nodes/:id must show; `null` = 404 (never registered, or deleted). */
type Seen = { gpuCount: number; cpu: number; offline: boolean; cordoned: boolean } | null;

type Op = {
  readonly what: string;
  readonly host: Host;
  readonly send: () => Promise<Reply>;
  /** The state before the command, and after it took effect. */
  readonly before: Seen;
  readonly after: Seen;
  /** Updates the test's model when the command was acknowledged. */
  readonly applied: () => void;
};

const describeNode = (h: Host, over: Partial<NodeInput> = {}): NodeInput =>
  h.kind === 'gpu'
    ? gpuNode(h.hostname, h.size, 'L40S', { kubeletReady: h.kubeletReady, ...over })
    : cpuNode(h.hostname, h.size, 128, { kubeletReady: h.kubeletReady, ...over });

// A deterministic PRNG, so a failing seed can be replayed (printed on failure).
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
let state = SEED;
const random = (): number => {
  state = (state * 1103515245 + 12345) % 2147483648;
  return state / 2147483648;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

const nodesOf = (reply: Reply): Array<{ nodeId: string }> =>
  reply.status === 200 ? ((reply.body?.nodes ?? []) as Array<{ nodeId: string }>) : [];

const stripTimes = (n: Json): Json => {
  const { heartbeatAgeSec: _age, lastSeenAt: _seen, ...rest } = n;
  return rest;
};
const byNodeId = (a: Json, b: Json): number => String(a.nodeId).localeCompare(String(b.nodeId));

describe('killing the app between an append and its projection', () => {
  let app: ChildApp;
  const extra: ChildApp[] = [];
  const contexts: INestApplicationContext[] = [];
  const dirs: string[] = [];
  const hosts: Host[] = [];
  let admin: Record<string, string>;
  const operators = new Map<string, Record<string, string>>();
  let seq = 0;

  const call = async (
    method: string,
    route: string,
    headers: Record<string, string>,
    body?: object,
    base = app.url,
  ): Promise<Reply> => {
    try {
      const res = await fetch(`${base}${route}`, {
        method,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Json) : null };
    } catch (error) {
      return { status: 'lost', error: String(error) };
    }
  };
  const get = async (route: string, base = app.url): Promise<Json> => {
    const r = await call('GET', route, admin, undefined, base);
    if (r.status !== 200) throw new Error(`GET ${route}: ${JSON.stringify(r)}`);
    return r.body as Json;
  };

  const seen = (h: Host, over: Partial<Host> = {}, cordoned = false): Seen => {
    const next = { ...h, ...over };
    return {
      gpuCount: next.kind === 'gpu' ? next.size : 0,
      cpu: next.kind === 'gpu' ? 64 : next.size,
      offline: !next.kubeletReady,
      cordoned,
    };
  };
  const observe = async (h: Host): Promise<Seen> => {
    if (!h.nodeId) return null;
    const r = await call('GET', `/v1/nodes/${h.nodeId}`, admin);
    if (r.status === 404) return null;
    if (r.status !== 200 || !r.body) throw new Error(`GET node ${h.nodeId}: ${JSON.stringify(r)}`);
    const n = r.body as {
      gpuCount: number;
      capacity: { cpu: number };
      status: string;
      cordon: { desired: boolean };
    };
    return {
      gpuCount: n.gpuCount,
      cpu: n.capacity.cpu,
      offline: n.status === 'offline',
      cordoned: n.cordon.desired,
    };
  };

  const sendReport = (h: Host, over: Partial<Host>): Promise<Reply> =>
    call(
      'POST',
      '/v1/inventory/reports',
      operators.get(h.clusterId) ?? {},
      report(h.clusterId, [describeNode({ ...h, ...over })]),
    );

  /** One command for `h` that changes something, with its expected effect. */
  const planFor = (h: Host, current: Seen): Op | null => {
    if (current === null) {
      if (h.nodeId) return null; // deleted: stays gone
      const over = { kubeletReady: true };
      return {
        what: `register ${h.hostname}`,
        host: h,
        send: () => sendReport(h, over),
        before: null,
        after: seen(h, over),
        applied: () => Object.assign(h, over),
      };
    }
    const choices: Op[] = [];
    const cordonTo = !current.cordoned;
    choices.push({
      what: `${cordonTo ? 'cordon' : 'uncordon'} ${h.hostname}`,
      host: h,
      send: () =>
        call(
          'POST',
          `/v1/nodes/${h.nodeId}/${cordonTo ? 'cordon' : 'uncordon'}`,
          admin,
          cordonTo ? { reason: 'crash test' } : undefined,
        ),
      before: current,
      after: { ...current, cordoned: cordonTo },
      applied: () => undefined,
    });
    const readyTo = !h.kubeletReady;
    choices.push({
      what: `report ${h.hostname} ${readyTo ? 'Ready' : 'NotReady'}`,
      host: h,
      send: () => sendReport(h, { kubeletReady: readyTo }),
      before: current,
      after: { ...current, offline: !readyTo },
      applied: () => (h.kubeletReady = readyTo),
    });
    const size = h.kind === 'gpu' ? (h.size % 4) + 1 : h.size === 32 ? 48 : 32;
    choices.push({
      what: `resize ${h.hostname} to ${size}`,
      host: h,
      send: () => sendReport(h, { size }),
      before: current,
      after: seen(h, { size }, current.cordoned),
      applied: () => (h.size = size),
    });
    if (current.offline) {
      choices.push({
        what: `delete ${h.hostname}`,
        host: h,
        send: () => call('DELETE', `/v1/nodes/${h.nodeId}`, admin),
        before: current,
        after: null,
        applied: () => undefined,
      });
    }
    return pick(choices);
  };

  const newHost = (clusterId: string): Host => {
    seq += 1;
    const kind = seq % 3 === 0 ? 'cpu' : 'gpu';
    const host: Host = {
      clusterId,
      hostname: `${kind}-${clusterId}-${String(seq).padStart(3, '0')}`,
      kind,
      size: kind === 'gpu' ? 2 : 32,
      kubeletReady: true,
      nodeId: null,
    };
    hosts.push(host);
    return host;
  };

  /** Registers hosts through reports and records their node ids. */
  const register = async (batch: Host[]): Promise<void> => {
    for (const clusterId of CLUSTERS) {
      const mine = batch.filter((h) => h.clusterId === clusterId);
      if (!mine.length) continue;
      const r = await call(
        'POST',
        '/v1/inventory/reports',
        operators.get(clusterId) ?? {},
        report(
          clusterId,
          mine.map((h) => describeNode(h)),
        ),
      );
      expect(r.status).toBe(200);
      nodesOf(r).forEach((n, i) => (mine[i].nodeId = n.nodeId));
    }
  };

  /** Every page of a list endpoint. */
  const all = async (route: string, base = app.url): Promise<Json[]> => {
    const items: Json[] = [];
    let cursor: string | null = null;
    do {
      const sep = route.includes('?') ? '&' : '?';
      const page = await get(
        `${route}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        base,
      );
      items.push(...(page.items as Json[]));
      cursor = page.nextCursor as string | null;
    } while (cursor);
    return items;
  };
  const allEvents = async (base = app.url): Promise<Json[]> => {
    const events: Json[] = [];
    let from = 0;
    for (;;) {
      const page = await get(`/v1/events?fromPosition=${from}&limit=1000`, base);
      const got = page.events as Json[];
      if (!got.length) return events;
      events.push(...got);
      from = page.nextPosition as number;
    }
  };
  type Snapshot = { nodes: Json[]; notifications: Json[]; events: Json[] };
  const snapshot = async (base = app.url): Promise<Snapshot> => ({
    nodes: (await all('/v1/nodes', base)).map(stripTimes).sort(byNodeId),
    notifications: await all('/v1/notifications', base),
    events: await allEvents(base),
  });

  const copyData = (from: string): string => {
    const to = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-copy-'));
    dirs.push(to);
    fs.cpSync(from, to, { recursive: true });
    return to;
  };

  let live: Snapshot;
  let acknowledged = 0;
  let lost = 0;

  beforeAll(async () => {
    await ensureBuilt();
    app = await startChildApp(ENV);
    dirs.push(app.dataDir);
    admin = await app.auth('root', ['admin']);
    for (const c of CLUSTERS) operators.set(c, await app.auth(`op-${c}`, ['operator'], [c]));
  });

  afterAll(async () => {
    await app?.kill('SIGKILL');
    for (const other of extra) await other.kill('SIGKILL');
    for (const context of contexts) await context.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every acknowledged command through SIGKILLs in the middle of bursts', async () => {
    // A fleet: 3 clusters of 8 nodes; some cordoned, some NotReady, one offline node deleted.
    const fleet = CLUSTERS.flatMap((c) => Array.from({ length: 8 }, () => newHost(c)));
    await register(fleet);
    for (const c of CLUSTERS) {
      const mine = fleet.filter((h) => h.clusterId === c);
      for (const h of mine.slice(0, 2)) {
        expect((await call('POST', `/v1/nodes/${h.nodeId}/cordon`, admin, {})).status).toBe(200);
      }
      for (const h of mine.slice(2, 4)) {
        h.kubeletReady = false;
        expect((await sendReport(h, {})).status).toBe(200);
      }
    }
    expect((await call('DELETE', `/v1/nodes/${fleet[2].nodeId}`, admin)).status).toBe(204);

    for (let round = 1; round <= ROUNDS; round++) {
      // Each host gets at most one command per round, so its expected state is unambiguous.
      for (const c of CLUSTERS) newHost(c);
      const ops: Op[] = [];
      for (const h of hosts) {
        if (random() < 0.25) continue;
        const op = planFor(h, await observe(h));
        if (op) ops.push(op);
      }
      // Idempotent registration needs the node id before the kill: a first report returns it.
      const fresh = ops.filter((o) => o.before === null);
      // The kill lands once a random 20-70 % of the burst has been answered (not after a fixed
      // time: on a loaded machine a fixed time could fall before the first answer or after the
      // last), so every round has acknowledged commands and, most often, cut-off ones.
      let answered = 0;
      const inFlight = ops.map(async (op, i) => {
        await sleep(Math.floor((i / ops.length) * 150)); // a burst spread over ~150 ms
        const reply = await op.send();
        answered += 1;
        return reply;
      });
      const killAt = Math.max(1, Math.floor(ops.length * (0.2 + random() * 0.5)));
      const started = Date.now();
      while (answered < killAt && Date.now() - started < 10_000) await sleep(2);
      const killAfterMs = Date.now() - started;
      await app.kill('SIGKILL');
      const replies = await Promise.all(inFlight);
      await app.restart();

      for (const [i, op] of ops.entries()) {
        const reply = replies[i];
        if (typeof reply.status === 'number' && reply.status >= 500) {
          throw new Error(`round ${round} (seed ${SEED}): ${op.what} → ${JSON.stringify(reply)}`);
        }
        if (fresh.includes(op) && reply.status === 200) op.host.nodeId = nodesOf(reply)[0].nodeId;
        const ok = typeof reply.status === 'number' && reply.status < 300;
        if (!op.host.nodeId) continue; // never acknowledged, never registered as far as we know
        const now = await observe(op.host);
        const context = `round ${round} (seed ${SEED}, kill after ${killAfterMs} ms): ${op.what} → ${JSON.stringify(reply)}`;
        if (ok) {
          acknowledged += 1;
          op.applied();
          expect({ context, state: now }).toEqual({ context, state: op.after });
        } else {
          lost += 1;
          // Not acknowledged: it took effect or it did not, never anything else.
          expect({ context, either: [op.before, op.after] }).toEqual({
            context,
            either: expect.arrayContaining([now]),
          });
          // Learn what happened, so the next round's reports describe the node truthfully.
          if (now && op.after && JSON.stringify(now) === JSON.stringify(op.after)) op.applied();
        }
      }
      // A host registered by a lost report still has no id here: the next report finds it.
      for (const h of hosts.filter((x) => !x.nodeId)) {
        const r = await sendReport(h, {});
        if (r.status === 200) h.nodeId = nodesOf(r)[0].nodeId;
      }
    }
    // The kills landed inside the bursts: some commands were answered, some were cut off.
    expect({ seed: SEED, acknowledged: acknowledged > ROUNDS * 3, lost: lost > 0 }).toEqual({
      seed: SEED,
      acknowledged: true,
      lost: true,
    });
  });

  it('projects commands made after the restarts live, as they arrive', async () => {
    const ops: Op[] = [];
    for (const h of hosts) {
      const op = planFor(h, await observe(h));
      if (op) ops.push(op);
    }
    const replies = await Promise.all(ops.map((op) => op.send()));
    for (const [i, op] of ops.entries()) {
      expect({ op: op.what, status: replies[i].status }).toEqual({
        op: op.what,
        status: op.after === null ? 204 : 200,
      });
      op.applied();
    }
    // Commands answer once their projection caught up; wait for a still picture anyway.
    live = (await eventually(async () => {
      const a = await snapshot();
      await sleep(200);
      const b = await snapshot();
      return JSON.stringify(a) === JSON.stringify(b) ? a : null;
    })) as Snapshot;
    expect(live.nodes.length).toBeGreaterThan(20);
    expect(live.notifications.length).toBeGreaterThan(0);
  });

  it('leaves a log without gaps: positions in commit order, each stream contiguous from revision 0', () => {
    const positions = live.events.map((e) => e.position as number);
    // Positions are sparse (opaque): a killed transaction shows as a stream's missing revision.
    for (let i = 1; i < positions.length; i++)
      expect(positions[i]).toBeGreaterThan(positions[i - 1]);
    expect(new Set(live.events.map((e) => e.eventId)).size).toBe(live.events.length);
    const revisions = new Map<string, number[]>();
    for (const e of live.events) {
      const list = revisions.get(e.streamId as string) ?? [];
      list.push(e.revision as number);
      revisions.set(e.streamId as string, list);
    }
    for (const [stream, list] of revisions) {
      expect({ stream, list }).toEqual({ stream, list: list.map((_, i) => i) });
    }
  });

  it('serves the same read models as a fresh start on a copy of the data', async () => {
    await app.kill('SIGKILL');
    const copy = await startChildApp(ENV, { dataDir: copyData(app.dataDir) });
    extra.push(copy);
    const fresh = await snapshot(copy.url);
    expect(fresh.events).toEqual(live.events);
    expect(fresh.nodes).toEqual(live.nodes);
    expect(fresh.notifications).toEqual(live.notifications);
    await copy.kill('SIGKILL');
  });

  it('equals rebuildReadModels run in process on a copy, in pages of any size', async () => {
    const config = loadConfig({
      DATA_DIR: copyData(app.dataDir),
      AUTH_JWT_SECRET: TEST_SECRET,
      LOG_LEVEL: 'silent',
    });
    const context = await openRebuildContext(config);
    contexts.push(context);
    const nodes = context.get(NodesQueries, { strict: false });
    const notifications = context.get(NotificationsController, { strict: false });
    const read = async () => {
      const items: Json[] = [];
      let cursor: string | null = null;
      do {
        const page = await nodes.list({ limit: 100, cursor: cursor ?? undefined });
        items.push(...(page.items as unknown as Json[]));
        cursor = page.nextCursor;
      } while (cursor);
      const notes: Json[] = [];
      cursor = null;
      do {
        const page = await notifications.list({ limit: 100, cursor: cursor ?? undefined });
        notes.push(...(page.items as unknown as Json[]));
        cursor = page.nextCursor;
      } while (cursor);
      return { nodes: items.map(stripTimes).sort(byNodeId), notifications: notes };
    };

    for (const pageSize of [2000, 7, 1]) {
      const result = await rebuildReadModels(context, { pageSize });
      expect(result.events).toBe(live.events.length);
      expect(result.position).toBe(live.events[live.events.length - 1].position);
      expect(result.pages).toBe(Math.ceil(live.events.length / pageSize));
      expect(result.collections.nodes).toBe(live.nodes.length);
      expect(result.collections.notifications).toBe(live.notifications.length);
      expect(await read()).toEqual({ nodes: live.nodes, notifications: live.notifications });
    }
  });

  it('npm run rebuild checks the embedded read models of a copy and exits 0', async () => {
    const dataDir = copyData(app.dataDir);
    const { stdout } = await promisify(execFile)(process.execPath, [DIST_REBUILD], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    });
    const line = stdout.trim().split('\n').pop() ?? '';
    expect(line).toContain('checked the embedded read models');
    expect(line).toContain(`replayed ${live.events.length} events`);
    expect(line).toContain(`nodes=${live.nodes.length}`);
    expect(line).toContain(`notifications=${live.notifications.length}`);
    // A command that checks no token generates no JWT secret into the data directory.
    expect(fs.existsSync(path.join(dataDir, 'jwt-secret'))).toBe(false);
  });
});
