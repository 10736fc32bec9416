import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { cpuNode, eventually, report, sleep } from '../support/reports';

type Ev = { type: string; streamId: string; data: Record<string, unknown> };
type Note = { type: string; nodeId?: string; to?: string };

/**
 * Timeouts firing together are handled in batches (one heartbeat read, one commit): every
 * node of the batch still gets its own verdict. The guard is off (MASS_FAILURE_RATIO=1):
 * whole clusters falling silent is what it would hold.
 */
describe('node liveness when many nodes fall silent together (NODE_STALE_SEC=2, guard off)', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let operator: Record<string, string>;
  const clusters = ['b1', 'b2', 'b3'];
  const PER_CLUSTER = 20;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '2', MASS_FAILURE_RATIO: '1' });
    admin = await t.auth('root', ['admin']);
    operator = await t.auth('op', ['operator'], clusters);
  });
  afterAll(async () => t.close());

  const post = (body: object) =>
    request(t.url).post('/v1/inventory/reports').set(operator).send(body);
  const offlineEvents = async (): Promise<Ev[]> =>
    (await request(t.url).get('/v1/events?limit=1000&type=NodeWentOffline').set(admin)).body.events;

  it('takes each silent node offline once, within the window, and keeps the one that reports', async () => {
    const hosts = (c: string) =>
      Array.from({ length: PER_CLUSTER }, (_, i) => `${c}-n${String(i).padStart(2, '0')}`);
    const replies = await Promise.all(
      clusters.map((c) =>
        post(
          report(
            c,
            hosts(c).map((h) => cpuNode(h)),
          ),
        ),
      ),
    );
    const ids = new Map<string, string>();
    for (const res of replies) {
      expect(res.status).toBe(200);
      for (const n of res.body.nodes as Array<{ nodeId: string; hostname: string }>) {
        ids.set(n.hostname, n.nodeId);
      }
    }
    const keeper = ids.get('b1-n00')!;
    const silent = [...ids.values()].filter((id) => id !== keeper);

    // One node of b1 keeps reporting while its 59 peers fall silent: its timeout fires in the
    // same batch as theirs and must re-arm, not take it offline.
    const until = Date.now() + 6000;
    while (Date.now() < until) {
      await post(report('b1', [cpuNode('b1-n00')]));
      await sleep(400);
    }
    await eventually(async () => (await offlineEvents()).length >= silent.length, 10_000);
    await sleep(500);

    const events = await offlineEvents();
    const byNode = new Map<string, Ev[]>();
    for (const e of events) {
      const id = e.streamId.slice('node-'.length);
      byNode.set(id, [...(byNode.get(id) ?? []), e]);
    }
    expect([...byNode.keys()].sort()).toEqual([...silent].sort());
    for (const id of silent) {
      const [offline, ...again] = byNode.get(id)!;
      expect(again).toHaveLength(0);
      expect(offline.data.reason).toBe('heartbeat_timeout');
      const lag =
        Date.parse(offline.data.at as string) - Date.parse(offline.data.lastSeenAt as string);
      expect(lag).toBeGreaterThanOrEqual(2000);
      expect(lag).toBeLessThan(5000);
    }
    const keeperView = (await request(t.url).get(`/v1/nodes/${keeper}`).set(admin)).body;
    expect(keeperView.status).toBe('ready');

    // Each transition is notified once.
    const notes: Note[] = (await request(t.url).get('/v1/notifications?limit=1000').set(admin)).body
      .items;
    const offlineNotes = notes.filter(
      (n) => n.type === 'node_status_changed' && n.to === 'offline',
    );
    expect(offlineNotes.map((n) => n.nodeId).sort()).toEqual([...silent].sort());
    expect(
      (await request(t.url).get('/v1/events?limit=1000&type=ClusterReportsStalled').set(admin)).body
        .events,
    ).toHaveLength(0);
  });
});
