import { randomUUID } from 'node:crypto';
import {
  createTestDatabase,
  TestDatabase,
} from '../../libs/eventstore/test/support/postgres-database';
import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import {
  ApiClient,
  countEvents,
  getJson,
  invariantChecker,
  sessionStream,
  StreamEvent,
} from '../support/invariants';
import { NodeInput, eventually, gpuNode, report, sleep } from '../support/reports';
import { recordMade } from '../support/test-run';

/**
 * Three replicas of the compiled app on one PostgreSQL log (a database of its own) and one
 * Redis (a prefix of its own), requests spread over them at random. The leader is killed with
 * SIGKILL while a node drains 8 sessions and placements arrive in bursts; afterwards every
 * drain completed, no card is held by two sessions, each session moved once, every bill
 * verifies, a node that fell silent went offline once (one event, one notification), and two
 * replicas answer GET /v1/nodes alike within a second.
 */
const LEASE_SEC = 2;
const STALE_SEC = 6;
const SESSIONS = 8;
const BURST = 12;
const ENV = {
  LEADER_LEASE_SEC: String(LEASE_SEC),
  JOBS_REPAIR_SEC: '1',
  NODE_STALE_SEC: String(STALE_SEC),
  CORDON_SYNC_SEC: '3600',
};

type Drain = { drainId: string; status: string; relocated: string[]; queued: string[] };
type Notification = { type: string; nodeId: string; to: string };
type NodeView = Record<string, unknown> & { nodeId: string };

describe('three replicas: the leader killed during a drain and placement bursts', () => {
  let db: TestDatabase;
  const replicas: ChildApp[] = [];
  let admin: Record<string, string>;
  let auditor: Record<string, string>;
  let reporting = true;
  let reporter: Promise<void> = Promise.resolve();

  const live = (): ChildApp[] => replicas.filter((r) => r.running);
  const any = (): ChildApp => {
    const up = live();
    return up[Math.floor(Math.random() * up.length)];
  };
  const call = async (
    method: string,
    route: string,
    headers: Record<string, string>,
    body?: object,
    on: ChildApp = any(),
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${on.url}${route}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  /** A replica that is up, for reads; a replica killed meanwhile is simply not chosen. */
  const client: ApiClient = {
    url: () => any().url,
    get headers() {
      return auditor;
    },
  };

  beforeAll(async () => {
    await ensureBuilt();
    db = await createTestDatabase('ha_e2e');
    const prefix = `fleet-child-${randomUUID().slice(0, 8)}`;
    recordMade('redis', prefix);
    const env = { ...ENV, EVENTSTORE_URL: db.url, REDIS_PREFIX: prefix };
    // One after the other: the first takes the free lease at its start.
    for (let i = 0; i < 3; i++) replicas.push(await startChildApp(env, { readyTimeoutMs: 60_000 }));
    admin = await replicas[0].auth('root', ['admin']);
    auditor = await replicas[0].auth('audit', ['auditor']);
  }, 240_000);
  afterAll(async () => {
    reporting = false;
    await reporter;
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await db?.drop();
  });

  const leader = async (): Promise<ChildApp | undefined> => {
    for (const r of live()) {
      const res = await fetch(`${r.url}/health/ready`, { signal: AbortSignal.timeout(1000) });
      if (((await res.json()) as { leader?: boolean }).leader) return r;
    }
    return undefined;
  };

  /** Until every live replica's read models show `nodeIds` (reads follow the log per replica). */
  const shownEverywhere = (nodeIds: readonly string[]) =>
    eventually(async () => {
      for (const r of live()) {
        for (const id of nodeIds) {
          const res = await fetch(`${r.url}/v1/nodes/${id}`, { headers: auditor });
          if (res.status !== 200) return undefined;
        }
      }
      return true;
    });

  /** Reports `nodes` of each cluster every 500 ms to a replica at random, until stopped. */
  const keepReporting = (fleet: Array<[string, NodeInput[]]>, operator: Record<string, string>) =>
    (async () => {
      while (reporting) {
        await Promise.all(
          fleet.map(([clusterId, nodes]) =>
            call('POST', '/v1/inventory/reports', operator, report(clusterId, nodes)).catch(
              () => undefined, // a replica killed mid-request: the next report goes elsewhere
            ),
          ),
        );
        await sleep(500);
      }
    })();

  it('completes every drain, keeps each card with one session, bills right, goes offline once, and agrees', async () => {
    const operator = await replicas[0].auth(
      'op',
      ['operator'],
      ['ha-drain', 'ha-burst', 'ha-silent'],
    );
    const source = gpuNode('ha-src', SESSIONS, 'L40S');
    const target = gpuNode('ha-dst', SESSIONS, 'L40S');
    const burstNodes = [0, 1, 2].map((i) => gpuNode(`ha-burst-${i}`, 4, 'HPC_GPU'));
    const silent = gpuNode('ha-silent-1', 1, 'MIG_1g');

    const reg = await call('POST', '/v1/inventory/reports', operator, report('ha-drain', [source]));
    expect(reg.status).toBe(200);
    const sourceId = String((reg.body.nodes as Array<{ nodeId: string }>)[0].nodeId);
    const quiet = await call(
      'POST',
      '/v1/inventory/reports',
      operator,
      report('ha-silent', [silent]),
    );
    expect(quiet.status).toBe(200);
    const silentId = String((quiet.body.nodes as Array<{ nodeId: string }>)[0].nodeId);
    reporter = keepReporting(
      [
        ['ha-drain', [source]],
        ['ha-burst', burstNodes],
      ],
      operator,
    );
    await shownEverywhere([sourceId, silentId]);

    const drained: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const s = await call('POST', '/v1/sessions', admin, {
        kind: 'gpu',
        gpuModel: 'L40S',
        gpuCount: 1,
        owner: `owner-${i % 3}`,
      });
      expect(s.body).toMatchObject({ status: 'running', nodeId: sourceId });
      drained.push(String(s.body.sessionId));
    }
    // The target joins only now, so every drained session started on the source.
    reporting = false;
    await reporter;
    reporting = true;
    reporter = keepReporting(
      [
        ['ha-drain', [source, target]],
        ['ha-burst', burstNodes],
      ],
      operator,
    );
    const listed = await eventually(async () => {
      const nodes = await getJson<{ items: NodeView[] }>(client, '/v1/nodes?clusterId=ha-drain');
      return nodes.items.length === 2 ? nodes.items : undefined;
    });
    await shownEverywhere(listed.map((n) => n.nodeId));

    const placeBurst = (n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          call('POST', '/v1/sessions', admin, {
            kind: 'gpu',
            gpuModel: 'HPC_GPU',
            gpuCount: 1 + (i % 2),
            owner: `burst-${i % 4}`,
          }).catch(() => ({ status: 0, body: {} as Record<string, unknown> })),
        ),
      );
    const first = await leader();
    expect(first).toBeDefined();

    // The drain and a burst at once; the leader dies in the middle of both.
    const started = await call('POST', `/v1/nodes/${sourceId}/drain`, admin, { mode: 'relocate' });
    expect(started.status).toBe(202);
    const drainId = String(started.body.drainId);
    const burst1 = placeBurst(BURST);
    await sleep(30);
    await first!.kill('SIGKILL');
    const killedAt = Date.now();
    const burst2 = await placeBurst(BURST);
    const placed = [...(await burst1), ...burst2].filter((r) => r.status === 201);
    expect(placed.length).toBeGreaterThan(0);
    const next = await eventually(leader, 4 * LEASE_SEC * 1000, 50);
    console.log(`a new leader ${Date.now() - killedAt} ms after the kill`);
    expect(next).not.toBe(first);

    const done = await eventually(
      async () => {
        const d = await getJson<Drain>(client, `/v1/drains/${drainId}`);
        return d.status === 'completed' ? d : undefined;
      },
      60_000,
      100,
    );
    expect([...done.relocated, ...done.queued].sort()).toEqual([...drained].sort());
    expect(done.relocated).toHaveLength(SESSIONS); // the target has room for all of them

    // Each drained session moved once: paused once, resumed once, still running elsewhere.
    for (const id of drained) {
      const events: StreamEvent[] = await sessionStream(client, id);
      expect({
        id,
        paused: countEvents(events, 'SessionPaused'),
        resumed: countEvents(events, 'SessionResumed'),
        terminated: countEvents(events, 'SessionTerminated'),
      }).toEqual({ id, paused: 1, resumed: 1, terminated: 0 });
    }
    // Each burst session was placed at most once and never paused.
    for (const r of placed) {
      const events = await sessionStream(client, String(r.body.sessionId));
      expect(countEvents(events, 'SessionStarted')).toBeLessThanOrEqual(1);
      expect(countEvents(events, 'SessionPaused')).toBe(0);
    }

    // The silent node went offline once, and admins were told once.
    await eventually(
      async () => {
        const n = await getJson<{ status: string }>(client, `/v1/nodes/${silentId}`);
        return n.status === 'offline' || undefined;
      },
      (STALE_SEC + 20) * 1000,
      200,
    );
    await sleep(1500); // a second offline, if any replica were to decide one, would show by now
    const silentEvents = await getJson<{ events: Array<{ type: string }> }>(
      client,
      `/v1/streams/node-${silentId}`,
    );
    expect(silentEvents.events.filter((e) => e.type.startsWith('NodeWentOffline'))).toHaveLength(1);
    const notes = await getJson<{ items: Notification[] }>(client, '/v1/notifications');
    expect(
      notes.items.filter(
        (n) => n.nodeId === silentId && n.type === 'node_status_changed' && n.to === 'offline',
      ),
    ).toHaveLength(1);

    // No card held by two sessions; every bill so far verifies; then every bill closed verifies.
    const checker = invariantChecker(client);
    await checker.assert({}, 15_000);
    const all = [...drained, ...placed.map((r) => String(r.body.sessionId))];
    for (const id of all) {
      const end = await call('POST', `/v1/sessions/${id}/terminate`, admin);
      expect(end.status).toBe(200);
    }
    await checker.assert({}, 15_000);

    // Quiet: two replicas answer the Nodes screen alike within a second.
    reporting = false;
    await reporter;
    const [a, b] = live();
    const screen = async (r: ChildApp): Promise<string> => {
      const body = await getJson<{ items: NodeView[] }>(
        { url: () => r.url, headers: auditor },
        '/v1/nodes?limit=1000',
      );
      // The heartbeat's age is counted at the moment of each answer.
      return JSON.stringify(body.items.map(({ heartbeatAgeSec: _age, ...rest }) => rest));
    };
    const since = Date.now();
    await eventually(
      async () => ((await screen(a)) === (await screen(b)) ? true : undefined),
      1000,
      20,
    );
    console.log(`two replicas agreed ${Date.now() - since} ms after the last write`);
  }, 180_000);
});
