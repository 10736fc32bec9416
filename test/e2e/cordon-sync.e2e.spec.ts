import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { asLogPosition } from '@fleet/eventstore/port';
import { DelayedJobs } from '@fleet/jobs/port';
import { HEARTBEATS } from '../../apps/control-plane/src/nodes/heartbeat/heartbeat.module';
import { HeartbeatStore } from '../../apps/control-plane/src/nodes/heartbeat/heartbeat.store';
import { CORDON_SYNC_QUEUE } from '../../apps/control-plane/src/nodes/cordon-sync/cordon-sync.saga';
import { DELAYED_JOBS } from '../../apps/control-plane/src/platform/runtime/tokens';
import { DirectiveCursors } from '../../apps/control-plane/src/nodes/cordon-sync/directive-cursor';
import { startApp, TEST_SECRET, TestApp } from '../support/app';
import { eventually, gpuNode, report, sleep } from '../support/reports';
import { recordMade } from '../support/test-run';

type Directive = { nodeId: string; hostname: string; desired: { unschedulable: boolean } };
type DirectivePage = { items: Directive[]; cursor: string };
/** The tests hold the app's secret, so they can read what a cursor hides from its client. */
const cursors = new DirectiveCursors(TEST_SECRET);
const positionOf = (cursor: string, clusterId = 'c1'): number | null =>
  cursors.open(clusterId, cursor);
type NotificationItem = {
  type: string;
  nodeId: string | null;
  reason: string | null;
  at: string;
};

describe('cordon sync to Kubernetes', () => {
  let t: TestApp;
  let operator: Record<string, string>;
  let otherOperator: Record<string, string>;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({ CORDON_SYNC_SEC: '1', NODE_STALE_SEC: '300', JOBS_REPAIR_SEC: '1' });
    operator = await t.auth('op-c1', ['operator'], ['c1']);
    otherOperator = await t.auth('op-c2', ['operator'], ['c2']);
    admin = await t.auth('root', ['admin']);
  });
  afterAll(async () => t.close());

  const reportNode = async (hostname: string, unschedulable: boolean) => {
    const res = await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('c1', [gpuNode(hostname, 1, 'L40S', { unschedulable })]));
    expect(res.status).toBe(200);
    return res.body.nodes[0] as { nodeId: string; desired: { unschedulable: boolean } };
  };
  const cordon = async (nodeId: string, verb: 'cordon' | 'uncordon' = 'cordon') => {
    const res = await request(t.url).post(`/v1/nodes/${nodeId}/${verb}`).set(admin).send({});
    expect(res.status).toBe(200);
  };
  const directives = async (query: string, auth = operator) =>
    request(t.url).get(`/v1/clusters/c1/node-directives${query}`).set(auth);
  const overdue = async (nodeId: string): Promise<NotificationItem[]> => {
    const res = await request(t.url).get('/v1/notifications?limit=1000').set(admin);
    expect(res.status).toBe(200);
    return (res.body.items as NotificationItem[]).filter(
      (n) => n.type === 'cordon_sync_overdue' && n.nodeId === nodeId,
    );
  };

  it('tells the operator to cordon, and shows the cordon observed after its next report', async () => {
    const { nodeId } = await reportNode('sync-a-01', false);
    await cordon(nodeId);
    const next = await reportNode('sync-a-01', false);
    expect(next.desired).toEqual({ unschedulable: true });
    await reportNode('sync-a-01', true); // the operator applied it and echoes spec.unschedulable
    const node = await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin);
    expect(node.body.cordon).toEqual({ desired: true, observed: true });
    // Observed within the deadline: no overdue notification, even well after it.
    await sleep(2000);
    expect(await overdue(nodeId)).toEqual([]);
  });

  it('re-arms a deadline whose job was lost while running (Redis emptied), not only at start', async () => {
    const jobs = t.app.get<DelayedJobs>(DELAYED_JOBS);
    const { nodeId } = await reportNode('sync-lost-01', false);
    await cordon(nodeId);
    await eventually(async () => (await jobs.scheduledAt(CORDON_SYNC_QUEUE, nodeId)) !== null);
    await jobs.cancel(CORDON_SYNC_QUEUE, nodeId); // as a Redis restarted empty loses it
    // The operator never applies it: the notice still comes, once.
    await eventually(async () => (await overdue(nodeId)).length === 1, 8000);
    await sleep(2500);
    expect(await overdue(nodeId)).toHaveLength(1);
  });

  it('re-arms a lost uncordon deadline too, and none for a node Kubernetes already shows as desired', async () => {
    const jobs = t.app.get<DelayedJobs>(DELAYED_JOBS);
    const { nodeId } = await reportNode('sync-lost-02', false);
    await cordon(nodeId);
    await reportNode('sync-lost-02', true); // cordon observed: in sync
    await cordon(nodeId, 'uncordon');
    await eventually(async () => (await jobs.scheduledAt(CORDON_SYNC_QUEUE, nodeId)) !== null);
    await jobs.cancel(CORDON_SYNC_QUEUE, nodeId);
    const synced = await reportNode('sync-lost-03', false); // never cordoned: nothing to watch
    await eventually(async () => (await overdue(nodeId)).length === 1, 8000);
    expect(await jobs.scheduledAt(CORDON_SYNC_QUEUE, synced.nodeId)).toBeNull();
    expect(await overdue(synced.nodeId)).toEqual([]);
  });

  it("gives the operator its full time again after the heartbeat store's return (reports could not be recorded meanwhile)", async () => {
    const heartbeats = t.app.get<HeartbeatStore>(HEARTBEATS);
    const { nodeId } = await reportNode('sync-outage-01', false);
    await cordon(nodeId);
    // The store came back (after an outage or a stall) 700 ms into the cordon's 1 s.
    const restored = Date.now() + 700;
    const spy = jest.spyOn(heartbeats, 'restoredAt').mockReturnValue(restored);
    try {
      const [notice] = await eventually(async () => {
        const found = await overdue(nodeId);
        return found.length > 0 ? found : null;
      }, 8000);
      expect(Date.parse(notice.at)).toBeGreaterThanOrEqual(restored + 1000 - 50);
    } finally {
      spy.mockRestore();
    }
  });

  it('lists every node of the cluster with its desired state when asked without a cursor', async () => {
    const res = await directives('');
    expect(res.status).toBe(200);
    expect(res.body.cursor).toEqual(expect.any(String));
    expect(res.body.items).toEqual(
      expect.arrayContaining([
        { nodeId: expect.any(String), hostname: 'sync-a-01', desired: { unschedulable: true } },
      ]),
    );
  });

  it('answers a held long-poll as soon as the admin cordons a node', async () => {
    const { nodeId } = await reportNode('sync-b-01', false);
    const { cursor } = (await directives('')).body as DirectivePage;
    let answeredAt = 0;
    const poll = directives(`?since=${cursor}&wait=20`).then((res) => {
      answeredAt = Date.now();
      return res;
    });
    await sleep(300); // the poll is held by now
    expect(answeredAt).toBe(0);
    const cordonedAt = Date.now();
    await cordon(nodeId);
    const res = await poll;
    const latency = answeredAt - cordonedAt;
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      { nodeId, hostname: 'sync-b-01', desired: { unschedulable: true } },
    ]);
    expect(latency).toBeLessThan(1000);
    // The next poll from the new cursor has nothing new, and stays where it was.
    const again = await directives(`?since=${res.body.cursor}&wait=0`);
    expect(again.body).toEqual({ items: [], cursor: expect.any(String) });
    expect(positionOf(again.body.cursor)).toBe(positionOf(res.body.cursor));
  });

  it('answers empty, at the same position, after `wait` seconds when nothing changed', async () => {
    const { cursor } = (await directives('')).body as DirectivePage;
    const started = Date.now();
    const res = await directives(`?since=${cursor}&wait=1`);
    const held = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [], cursor: expect.any(String) });
    expect(positionOf(res.body.cursor)).toBe(positionOf(cursor));
    expect(held).toBeGreaterThanOrEqual(900);
    expect(held).toBeLessThan(3000);
  });

  it('answers a cursor ahead of the log (a restored log) with every node and a current cursor', async () => {
    const current = (await directives('')).body as DirectivePage;
    const started = Date.now();
    const res = await directives(
      `?since=${cursors.seal('c1', asLogPosition(999_999_999_999_999))}&wait=5`,
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual(current.items);
    // Current: between the heads read before and after. An earlier test's cordon that nobody
    // applied may append its overdue flag meanwhile; that moves the head, not the directives.
    const after = (await directives('')).body as DirectivePage;
    expect(after.items).toEqual(current.items);
    const position = positionOf(res.body.cursor) ?? -1;
    expect(position).toBeGreaterThanOrEqual(positionOf(current.cursor) ?? Infinity);
    expect(position).toBeLessThanOrEqual(positionOf(after.cursor) ?? -Infinity);
    // The new cursor is one of the log: a change after it wakes the next poll.
    const { nodeId } = await reportNode('sync-ahead-01', false);
    const poll = directives(`?since=${res.body.cursor}&wait=10`);
    await sleep(200);
    await cordon(nodeId);
    expect((await poll).body.items).toEqual([
      { nodeId, hostname: 'sync-ahead-01', desired: { unschedulable: true } },
    ]);
  });

  it('answers a cluster not seen yet as one with no nodes: its operator may poll before its first report', async () => {
    const poll = (query: string) =>
      request(t.url).get(`/v1/clusters/not-reported-yet/node-directives${query}`).set(admin);
    const first = await poll('');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ items: [], cursor: expect.any(String) });
    expect((await poll(`?since=${first.body.cursor}&wait=0`)).body.items).toEqual([]);
  });

  it('refuses an operator of another cluster, and validates the query', async () => {
    const res = await directives('', otherOperator);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect((await directives('?wait=61')).status).toBe(400);
    expect((await directives('?since=abc')).status).toBe(400);
    expect((await directives(`?since=${'A'.repeat(129)}`)).status).toBe(400);
    expect((await directives('?other=1')).status).toBe(400);
    const user = await t.auth('ann', ['user']);
    expect((await directives('', user)).status).toBe(403);
    expect((await directives('', admin)).status).toBe(200);
  });

  it('hides the log position in its cursor, and opens a cursor only for the cluster it was issued for', async () => {
    const { cursor } = (await directives('')).body as DirectivePage;
    const position = positionOf(cursor);
    expect(position).toEqual(expect.any(Number));
    expect(cursor).not.toContain(String(position));
    // Cursors were log positions in digits: one a client makes up (to find the log's head,
    // say, by asking past it) is refused, naming `since`, as is c1's cursor for cluster c2.
    const refusedSince = async (res: request.Response) => {
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([
        'since',
      ]);
    };
    await refusedSince(await directives(`?since=${position}&wait=0`));
    await refusedSince(await directives('?since=999999999999999&wait=0'));
    await refusedSince(
      await request(t.url)
        .get(`/v1/clusters/c2/node-directives?since=${cursor}&wait=0`)
        .set(otherOperator),
    );
    // An altered cursor does not open either.
    const last = cursor.at(-1) === 'A' ? 'B' : 'A';
    await refusedSince(await directives(`?since=${cursor.slice(0, -1)}${last}&wait=0`));
    // Another cluster's changes do not wake c1's poll, and the same position sealed twice
    // reads as two unrelated strings.
    const { nodeId } = (
      await request(t.url)
        .post('/v1/inventory/reports')
        .set(otherOperator)
        .send(report('c2', [gpuNode('sync-other-01', 1, 'L40S')]))
    ).body.nodes[0] as { nodeId: string };
    const started = Date.now();
    const poll = directives(`?since=${cursor}&wait=1`);
    await sleep(200);
    await cordon(nodeId);
    const quiet = await poll;
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(quiet.body.items).toEqual([]);
    expect(quiet.body.cursor).not.toBe(cursor);
    const again = await directives(`?since=${quiet.body.cursor}&wait=0`);
    expect(again.body.items).toEqual([]);
  });

  it('raises exactly one cordon_sync_overdue when the cordon is not observed in time', async () => {
    const { nodeId } = await reportNode('sync-c-01', false);
    await cordon(nodeId);
    const raised = await eventually(async () => {
      const found = await overdue(nodeId);
      return found.length > 0 ? found : null;
    }, 5000);
    expect(raised).toEqual([
      expect.objectContaining({
        type: 'cordon_sync_overdue',
        nodeId,
        reason: 'cordon desired=true not observed within 1 s',
      }),
    ]);
    // Still unobserved long after: still exactly one.
    await reportNode('sync-c-01', false);
    await sleep(2000);
    expect(await overdue(nodeId)).toHaveLength(1);
  });

  it('treats an uncordon the same way: one notification when unobserved, none when observed', async () => {
    const { nodeId: lagging } = await reportNode('sync-d-01', false);
    const { nodeId: synced } = await reportNode('sync-d-02', false);
    for (const nodeId of [lagging, synced]) await cordon(nodeId);
    await reportNode('sync-d-01', true);
    await reportNode('sync-d-02', true);
    for (const nodeId of [lagging, synced]) await cordon(nodeId, 'uncordon');
    const next = await reportNode('sync-d-02', true);
    expect(next.desired).toEqual({ unschedulable: false });
    await reportNode('sync-d-02', false); // applied and echoed
    const raised = await eventually(async () => {
      const found = await overdue(lagging);
      return found.length > 0 ? found : null;
    }, 5000);
    expect(raised).toEqual([
      expect.objectContaining({ reason: 'uncordon desired=false not observed within 1 s' }),
    ]);
    await sleep(1500);
    expect(await overdue(lagging)).toHaveLength(1);
    expect(await overdue(synced)).toEqual([]);
  });
});

describe('long-polls on shutdown', () => {
  it('releases a held long-poll at once when the app closes', async () => {
    const t = await startApp({ CORDON_SYNC_SEC: '1' });
    const operator = await t.auth('op-c1', ['operator'], ['c1']);
    const first = await request(t.url).get('/v1/clusters/c1/node-directives').set(operator);
    const poll = request(t.url)
      .get(`/v1/clusters/c1/node-directives?since=${first.body.cursor}&wait=60`)
      .set(operator);
    const pending = poll.then((res) => res);
    await sleep(300);
    const started = Date.now();
    await t.close();
    const res = await pending;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [], cursor: expect.any(String) });
    expect(positionOf(res.body.cursor)).toBe(positionOf(first.body.cursor));
  });
});

describe('cordon-sync deadlines across a restart', () => {
  it('re-arms a pending deadline from state when the job queue lost it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-e2e-'));
    recordMade('dir', dataDir); // removed when the run ends
    // A long deadline, so it is still pending when the first process stops.
    const first = await startApp({ CORDON_SYNC_SEC: '300' }, { dataDir });
    const operator = await first.auth('op-c1', ['operator'], ['c1']);
    const admin = await first.auth('root', ['admin']);
    const reported = await request(first.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('c1', [gpuNode('sync-r-01', 1)]));
    const nodeId = reported.body.nodes[0].nodeId as string;
    await request(first.url).post(`/v1/nodes/${nodeId}/cordon`).set(admin).send({}).expect(200);
    await first.close();

    // A fresh Redis prefix: every job is gone; only the event log remembers the cordon.
    const second = await startApp({ CORDON_SYNC_SEC: '1' }, { dataDir });
    try {
      const raised = await eventually(async () => {
        const res = await request(second.url).get('/v1/notifications').set(admin);
        const found = (res.body.items as NotificationItem[]).filter(
          (n) => n.type === 'cordon_sync_overdue' && n.nodeId === nodeId,
        );
        return found.length > 0 ? found : null;
      }, 10_000);
      expect(raised).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
