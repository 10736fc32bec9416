import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { eventually, gpuNode, report } from '../support/reports';

describe('node inventory over HTTP', () => {
  let t: TestApp;
  let operator: Record<string, string>;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '300' });
    operator = await t.auth('op-c1', ['operator'], ['c1']);
    admin = await t.auth('root', ['admin']);
  });
  afterAll(async () => t.close());

  const post = (body: object, auth = operator) =>
    request(t.url).post('/v1/inventory/reports').set(auth).send(body);
  const eventCount = async () =>
    (await request(t.url).get('/v1/events?limit=1000').set(admin)).body.events.length as number;

  it('registers a reported node and lists it within a second', async () => {
    const res = await post(report('c1', [gpuNode('gpu-a-01')]));
    expect(res.status).toBe(200);
    expect(res.body.nodes).toEqual([
      {
        hostname: 'gpu-a-01',
        nodeId: expect.any(String),
        status: 'ready',
        desired: { unschedulable: false },
      },
    ]);
    const started = Date.now();
    const list = await eventually(async () => {
      const r = await request(t.url).get('/v1/nodes?clusterId=c1').set(admin);
      return r.body.items.length === 1 ? r.body : null;
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(list.items[0]).toMatchObject({
      clusterId: 'c1',
      hostname: 'gpu-a-01',
      role: 'gpu',
      poolId: null,
      mode: 'shared',
      status: 'ready',
      offlineReason: null,
      gpuCount: 2,
      runningSessions: 0,
      capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
      cordon: { desired: false, observed: false },
      drain: null,
    });
    expect(list.items[0].heartbeatAgeSec).toBeGreaterThanOrEqual(0);
  });

  it('appends nothing for an unchanged report', async () => {
    await post(report('c1', [gpuNode('gpu-a-02')]));
    const before = await eventCount();
    const again = await post(report('c1', [gpuNode('gpu-a-02')]));
    expect(again.status).toBe(200);
    expect(await eventCount()).toBe(before);
  });

  it('creates exactly one node from concurrent first reports', async () => {
    const bodies = Array.from({ length: 10 }, () => post(report('c1', [gpuNode('gpu-race-01')])));
    const results = await Promise.all(bodies);
    expect(new Set(results.map((r) => r.body.nodes[0].nodeId)).size).toBe(1);
    const nodeId = results[0].body.nodes[0].nodeId;
    const stream = await request(t.url).get(`/v1/streams/node-${nodeId}`).set(admin);
    expect(
      stream.body.events.filter((e: { type: string }) => e.type === 'NodeRegistered.v1'),
    ).toHaveLength(1);
  });

  it('refuses an operator reporting for another cluster, and appends nothing', async () => {
    const before = await eventCount();
    const res = await post(report('c2', [gpuNode('gpu-b-01')]));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
    expect(await eventCount()).toBe(before);
  });

  it.each([
    ['a bad hostname', report('c1', [gpuNode('GPU_A')]), 'nodes.0.hostname'],
    [
      'an unknown role',
      report('c1', [{ ...gpuNode('gpu-x'), role: 'router' as never }]),
      'nodes.0.role',
    ],
    ['an unknown model', report('c1', [gpuNode('gpu-x', 1, 'H100')]), 'nodes.0.gpus.0.model'],
    ['no nodes', report('c1', []), 'nodes'],
    ['an unknown field', { ...report('c1', [gpuNode('gpu-x')]), extra: 1 }, 'extra'],
    [
      'a bad mode label',
      report('c1', [gpuNode('gpu-x', 1, 'L40S', { labels: { 'fleet/mode': 'solo' } })]),
      'nodes.0.labels.fleet/mode',
    ],
    [
      'a duplicated hostname',
      report('c1', [gpuNode('gpu-x'), gpuNode('gpu-x')]),
      'nodes.1.hostname',
    ],
    [
      'negative capacity',
      report('c1', [
        gpuNode('gpu-x', 1, 'L40S', { capacity: { cpu: -1, memoryGiB: 1, diskGiB: 1 } }),
      ]),
      'nodes.0.capacity.cpu',
    ],
  ])('refuses %s with 400 validation_failed naming the field', async (_what, body, field) => {
    const before = await eventCount();
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect(await eventCount()).toBe(before);
  });

  it('takes a NotReady node offline within one report, and brings it back', async () => {
    const first = await post(report('c1', [gpuNode('gpu-nr-01')]));
    const nodeId = first.body.nodes[0].nodeId;
    const down = await post(
      report('c1', [gpuNode('gpu-nr-01', 2, 'L40S', { kubeletReady: false })]),
    );
    expect(down.body.nodes[0].status).toBe('offline');
    await eventually(async () => {
      const n = (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).body;
      return n.status === 'offline' && n.offlineReason === 'kubelet_not_ready';
    });
    const up = await post(report('c1', [gpuNode('gpu-nr-01')]));
    expect(up.body.nodes[0].status).toBe('ready');
  });

  it('ignores a report older than the newest applied', async () => {
    const newer = await post(
      report('c1', [gpuNode('gpu-ooo-01', 2, 'L40S', { observedAt: '2026-12-02T10:00:10Z' })]),
    );
    const nodeId = newer.body.nodes[0].nodeId;
    await post(
      report('c1', [gpuNode('gpu-ooo-01', 4, 'L40S', { observedAt: '2026-12-02T10:00:05Z' })]),
    );
    const gpus = await request(t.url).get(`/v1/nodes/${nodeId}/gpus`).set(admin);
    expect(gpus.body.items).toHaveLength(2);
  });

  it('cordons a node, tells the operator, and shows desired and observed', async () => {
    const first = await post(report('c1', [gpuNode('gpu-cd-01')]));
    const nodeId = first.body.nodes[0].nodeId;
    const res = await request(t.url)
      .post(`/v1/nodes/${nodeId}/cordon`)
      .set(admin)
      .send({ reason: 'maintenance' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'cordoned',
      cordon: { desired: true, observed: false },
    });
    const next = await post(
      report('c1', [gpuNode('gpu-cd-01', 2, 'L40S', { unschedulable: true })]),
    );
    expect(next.body.nodes[0].desired).toEqual({ unschedulable: true });
    await eventually(async () => {
      const n = (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).body;
      return n.cordon.observed === true;
    });
    const before = await eventCount();
    await request(t.url).post(`/v1/nodes/${nodeId}/cordon`).set(admin).send({});
    expect(await eventCount()).toBe(before);
    const un = await request(t.url).post(`/v1/nodes/${nodeId}/uncordon`).set(admin);
    expect(un.body.status).toBe('ready');
  });

  it('answers a cordon that changed nothing with the node as decided on: a drain that cordoned it a moment before shows', async () => {
    const hostnames = Array.from(
      { length: 20 },
      (_, i) => `gpu-race-${String(i).padStart(2, '0')}`,
    );
    const first = await post(
      report(
        'c1',
        hostnames.map((h) => gpuNode(h)),
      ),
    );
    const stale: unknown[] = [];
    for (const { nodeId } of first.body.nodes as Array<{ nodeId: string }>) {
      // The drain cordons the node; the cordon, a moment later, finds it cordoned already.
      const [drain, cordon] = await Promise.all([
        request(t.url).post(`/v1/nodes/${nodeId}/drain`).set(admin).send({}),
        new Promise((r) => setTimeout(r, 1)).then(() =>
          request(t.url).post(`/v1/nodes/${nodeId}/cordon`).set(admin).send({}),
        ),
      ]);
      expect([drain.status, cordon.status]).toEqual([expect.any(Number), 200]);
      if (cordon.body.cordon.desired !== true || cordon.body.status !== 'cordoned') {
        stale.push({ drain: drain.status, cordon: cordon.body.cordon, status: cordon.body.status });
      }
    }
    expect(stale).toEqual([]);
  });

  it('refuses to delete an online node, deletes an offline one, and registers the host again', async () => {
    const first = await post(report('c1', [gpuNode('gpu-del-01')]));
    const nodeId = first.body.nodes[0].nodeId;
    const refused = await request(t.url).delete(`/v1/nodes/${nodeId}`).set(admin);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('node_not_offline');
    await post(report('c1', [gpuNode('gpu-del-01', 2, 'L40S', { kubeletReady: false })]));
    const deleted = await request(t.url).delete(`/v1/nodes/${nodeId}`).set(admin);
    expect(deleted.status).toBe(204);
    await eventually(
      async () => (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).status === 404,
    );
    const back = await post(report('c1', [gpuNode('gpu-del-01')]));
    expect(back.body.nodes[0].nodeId).toBe(nodeId);
    await eventually(
      async () => (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).status === 200,
    );
  });

  it('answers 404 naming the node for a command on a node that does not exist', async () => {
    const missing = '01a23c4e-0000-7000-8000-000000000000';
    const before = await eventCount();
    for (const res of [
      await request(t.url).post(`/v1/nodes/${missing}/cordon`).set(admin).send({}),
      await request(t.url).post(`/v1/nodes/${missing}/uncordon`).set(admin),
      await request(t.url).delete(`/v1/nodes/${missing}`).set(admin),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({
        code: 'not_found',
        message: `node ${missing} does not exist`,
        details: { id: missing },
      });
    }
    expect(await eventCount()).toBe(before);
  });

  it('lets an auditor read nodes but not cordon; refuses a user', async () => {
    const auditor = await t.auth('aud', ['auditor']);
    expect((await request(t.url).get('/v1/nodes').set(auditor)).status).toBe(200);
    const list = await request(t.url).get('/v1/nodes').set(auditor);
    const nodeId = list.body.items[0].nodeId;
    expect(
      (await request(t.url).post(`/v1/nodes/${nodeId}/cordon`).set(auditor).send({})).status,
    ).toBe(403);
    expect(
      (
        await request(t.url)
          .get('/v1/nodes')
          .set(await t.auth('u', ['user']))
      ).status,
    ).toBe(403);
  });

  it('pages the node list without gaps or repeats while nodes register', async () => {
    const hosts = Array.from({ length: 30 }, (_, i) =>
      gpuNode(`page-${String(i).padStart(2, '0')}`),
    );
    await post(report('c1', hosts));
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const q: string = `/v1/nodes?clusterId=c1&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await request(t.url).get(q).set(admin);
      seen.push(...page.body.items.map((n: { hostname: string }) => n.hostname));
      cursor = page.body.nextCursor;
      // Registrations between pages (sorted before and after the cursor).
      await post(report('c1', [gpuNode(`aaa-late-${round}`), gpuNode(`zzz-late-${round}`)]));
      round++;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const h of hosts) expect(seen).toContain(h.hostname);
  });
});
