import request from 'supertest';
import { UnavailableError } from '@fleet/kernel';
import { HEARTBEATS } from '../../apps/control-plane/src/nodes/heartbeat/heartbeat.module';
import { HeartbeatStore } from '../../apps/control-plane/src/nodes/heartbeat/heartbeat.store';
import { startApp, TestApp } from '../support/app';
import { eventually, gpuNode, NodeInput, report } from '../support/reports';

/** Inventory reports the validator once let through: each refused with a clear 4xx, nothing appended. */
describe('inventory report input over HTTP', () => {
  let t: TestApp;
  let operator: Record<string, string>;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '300' });
    operator = await t.auth('op-c1', ['operator'], ['c1', 'c2']);
    admin = await t.auth('root', ['admin']);
  });
  afterAll(async () => t.close());

  const post = (body: object | string) =>
    request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .set('content-type', 'application/json')
      .send(typeof body === 'string' ? body : JSON.stringify(body));
  const eventCount = async () =>
    (await request(t.url).get('/v1/events?limit=1000').set(admin)).body.events.length as number;
  const fieldsOf = (res: request.Response): string[] =>
    res.body.error.details.fields.map((f: { field: string }) => f.field);
  const problemsOf = (res: request.Response, field: string): string[] =>
    res.body.error.details.fields.find((f: { field: string }) => f.field === field)?.problems ?? [];
  /** Registers the node and waits until the Nodes read model shows it. */
  const register = async (node: NodeInput, clusterId = 'c1'): Promise<string> => {
    const res = await post(report(clusterId, [node]));
    expect(res.status).toBe(200);
    const nodeId: string = res.body.nodes[0].nodeId;
    await eventually(
      async () => (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).status === 200,
    );
    return nodeId;
  };
  const withCards = (hostname: string, uuids: string[], over: Partial<NodeInput> = {}) =>
    gpuNode(hostname, 0, 'MIG_1g', {
      gpus: uuids.map((uuid) => ({ uuid, model: 'MIG_1g', memoryGiB: 10 })),
      ...over,
    });

  describe('the heartbeat store failing after the report was recorded', () => {
    it('answers 200 for a report whose changes were appended, and 503 for one that changed nothing', async () => {
      const heartbeats = t.app.get<HeartbeatStore>(HEARTBEATS);
      const down = () => {
        // Known down (out of reach, or its last writes failed): a report waits for its
        // sightings (`touch`) instead of handing them over (`touchLater`).
        if (heartbeats.touchLater) {
          jest
            .spyOn(heartbeats as Required<HeartbeatStore>, 'touchLater')
            .mockReturnValueOnce(false);
        }
        jest
          .spyOn(heartbeats, 'touch')
          .mockRejectedValueOnce(
            new UnavailableError('heartbeat store (Redis)', new Error('down')),
          );
      };
      const node = gpuNode('gpu-hb-01');
      const before = await eventCount();
      down();
      // Registered: appended, so done (a 503 said "nothing was done" of a recorded change).
      const first = await post(report('c1', [node]));
      expect(first.status).toBe(200);
      expect(await eventCount()).toBeGreaterThan(before);
      const after = await eventCount();
      down();
      const unchanged = await post(report('c1', [node]));
      expect(unchanged.status).toBe(503);
      expect(unchanged.body.error.code).toBe('unavailable');
      expect(await eventCount()).toBe(after);
      jest.restoreAllMocks();
    });
  });

  describe('observedAt', () => {
    it.each([
      ['a week date', '2026-W49-1'],
      ['an ordinal date', '2026-337'],
      ['a week', '2026-W49'],
      ['a decimal comma', '2026-12-01T10:00:00,5Z'],
      ['a basic form', '20261201T100000Z'],
      ['a local time without an offset', '2026-12-01T00:00:00'],
      ['a date alone', '2026-12-01'],
    ])('refuses %s with 400 naming the field, and appends nothing', async (_what, observedAt) => {
      const before = await eventCount();
      const res = await post(report('c1', [gpuNode('gpu-at-01', 2, 'L40S', { observedAt })]));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(fieldsOf(res)).toEqual(['nodes.0.observedAt']);
      expect(problemsOf(res, 'nodes.0.observedAt').join(' ')).toMatch(/RFC 3339/);
      expect(await eventCount()).toBe(before);
    });

    it('accepts RFC 3339 date-times with Z or an offset', async () => {
      const at = await post(
        report('c1', [
          gpuNode('gpu-at-02', 2, 'L40S', { observedAt: '2026-12-02T10:00:00Z' }),
          gpuNode('gpu-at-03', 2, 'L40S', { observedAt: '2026-12-02T10:00:00.123+09:00' }),
        ]),
      );
      expect(at.status).toBe(200);
      expect(at.body.nodes.map((n: { status: string }) => n.status)).toEqual(['ready', 'ready']);
    });

    it('refuses an observedAt more than 60 s ahead of the server, and the node keeps taking reports', async () => {
      const nodeId = await register(gpuNode('gpu-future-01'));
      const before = await eventCount();
      const res = await post(
        report('c1', [
          gpuNode('gpu-future-01', 2, 'L40S', {
            kubeletReady: false,
            observedAt: '2099-01-01T00:00:00Z',
          }),
        ]),
      );
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(fieldsOf(res)).toEqual(['nodes.0.observedAt']);
      expect(problemsOf(res, 'nodes.0.observedAt').join(' ')).toMatch(/clock is wrong/);
      expect(await eventCount()).toBe(before);

      // A slightly fast clock (within the 60 s) and a past time are both fine; the real report applies.
      const soon = new Date(Date.now() + 30_000).toISOString();
      const ahead = await post(
        report('c1', [gpuNode('gpu-future-01', 2, 'L40S', { observedAt: soon })]),
      );
      expect(ahead.status).toBe(200);
      const down = await post(
        report('c1', [
          gpuNode('gpu-future-01', 2, 'L40S', {
            kubeletReady: false,
            observedAt: new Date(Date.now() + 31_000).toISOString(),
          }),
        ]),
      );
      expect(down.body.nodes[0]).toMatchObject({ nodeId, status: 'offline' });
      const past = await post(
        report('c1', [gpuNode('gpu-future-01', 2, 'L40S', { observedAt: '2020-01-01T00:00:00Z' })]),
      );
      expect(past.status).toBe(200);
      expect(past.body.nodes[0].status).toBe('offline'); // older than the newest: ignored
    });
  });

  describe('GPU uuids', () => {
    it('refuses one uuid on two nodes of one report, naming the later card', async () => {
      const before = await eventCount();
      const res = await post(
        report('c1', [
          withCards('gpu-dup-01', ['MIG-dup-0', 'MIG-dup-1']),
          withCards('gpu-dup-02', ['MIG-dup-2', 'MIG-dup-1']),
        ]),
      );
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(fieldsOf(res)).toEqual(['nodes.1.gpus.1.uuid']);
      expect(problemsOf(res, 'nodes.1.gpus.1.uuid')).toEqual(['also reported by nodes.0']);
      expect(await eventCount()).toBe(before);
    });

    it('refuses with 409 a node taking a card another node of the cluster holds, until that node is deleted', async () => {
      const holder = await register(withCards('gpu-same-01', ['MIG-same-0', 'MIG-same-1']));
      const before = await eventCount();

      // A new node with the card, in a report with another good node: the whole report is refused.
      const taken = await post(
        report('c1', [
          withCards('gpu-same-03', ['MIG-free-0']),
          withCards('gpu-same-02', ['MIG-same-0']),
        ]),
      );
      expect(taken.status).toBe(409);
      expect(taken.body.error).toMatchObject({
        code: 'gpu_uuid_conflict',
        message: expect.stringContaining('gpu-same-01'),
        details: { hostname: 'gpu-same-02', uuid: 'MIG-same-0', nodeId: holder },
      });
      expect(await eventCount()).toBe(before);

      // An existing node given the card: refused the same way.
      await register(withCards('gpu-same-04', ['MIG-other-0']));
      const before2 = await eventCount();
      const added = await post(
        report('c1', [withCards('gpu-same-04', ['MIG-other-0', 'MIG-same-1'])]),
      );
      expect(added.status).toBe(409);
      expect(added.body.error.details).toEqual({
        hostname: 'gpu-same-04',
        uuid: 'MIG-same-1',
        nodeId: holder,
      });
      expect(await eventCount()).toBe(before2);

      // The holder re-reporting its own cards (with a change, so not a no-op) is fine.
      const own = await post(
        report('c1', [
          withCards('gpu-same-01', ['MIG-same-0', 'MIG-same-1'], { labels: { zone: 'b' } }),
        ]),
      );
      expect(own.status).toBe(200);

      // Another cluster's node may carry the same uuid: the check is per cluster.
      expect((await post(report('c2', [withCards('gpu-same-01', ['MIG-same-0'])]))).status).toBe(
        200,
      );

      // The holder deleted (offline first), another node may take the card.
      await post(
        report('c1', [
          withCards('gpu-same-01', ['MIG-same-0', 'MIG-same-1'], { kubeletReady: false }),
        ]),
      );
      const deleted = await request(t.url).delete(`/v1/nodes/${holder}`).set(admin);
      expect(deleted.status).toBe(204);
      const freed = await post(report('c1', [withCards('gpu-same-02', ['MIG-same-0'])]));
      expect(freed.status).toBe(200);
      expect(freed.body.nodes[0].status).toBe('ready');
    });

    it('takes one uuid for one node only when reports claiming it for two nodes race', async () => {
      await register(withCards('gpu-race-seed', ['MIG-race-seed'])); // the cluster is known
      for (let round = 0; round < 5; round++) {
        const uuid = `MIG-race-${round}`;
        const before = await eventCount();
        // Both first reports in flight at once: neither node exists yet, nor holds the card.
        const [a, b] = await Promise.all([
          post(report('c1', [withCards(`gpu-race-${round}-a`, [uuid])])),
          post(report('c1', [withCards(`gpu-race-${round}-b`, [uuid])])),
        ]);
        expect([a.status, b.status].sort()).toEqual([200, 409]);
        const refused = a.status === 409 ? a : b;
        expect(refused.body.error.code).toBe('gpu_uuid_conflict');
        // One node registered, holding the card, after its claim on the cluster's claims
        // stream (gpu-claims.ts); the refused report appended nothing.
        expect(await eventCount()).toBe(before + 2);
      }
    });

    it('lets a card move between two nodes reported together', async () => {
      await register(withCards('gpu-move-01', ['MIG-move-0', 'MIG-move-1']));
      const to = await register(withCards('gpu-move-02', ['MIG-move-2']));
      const moved = await post(
        report('c1', [
          withCards('gpu-move-01', ['MIG-move-0']),
          withCards('gpu-move-02', ['MIG-move-2', 'MIG-move-1']),
        ]),
      );
      expect(moved.status).toBe(200);
      const gpus = await eventually(async () => {
        const r = await request(t.url).get(`/v1/nodes/${to}/gpus`).set(admin);
        return r.body.items.length === 2 ? r.body.items : null;
      });
      expect(gpus.map((g: { uuid: string }) => g.uuid).sort()).toEqual([
        'MIG-move-1',
        'MIG-move-2',
      ]);
    });
  });

  describe('a card a session holds', () => {
    const cards = (hostname: string, uuids: string[]) =>
      gpuNode(hostname, 0, 'MIG_3g', {
        gpus: uuids.map((uuid) => ({ uuid, model: 'MIG_3g', memoryGiB: 40 })),
      });

    it('is not taken by another node while the session holds it, even once its node stops listing it', async () => {
      const from = await register(cards('gpu-held-01', ['MIG-held-0']));
      const to = await register(cards('gpu-held-02', []));
      const alice = await t.auth('alice', ['user']);
      const created = await request(t.url)
        .post('/v1/sessions')
        .set(alice)
        .send({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 1 });
      expect(created.status).toBe(201);
      const sessionId: string = created.body.sessionId;
      const running = await eventually(async () => {
        const s = (await request(t.url).get(`/v1/sessions/${sessionId}`).set(alice)).body;
        return s.status === 'running' ? s : null;
      });
      expect(running).toMatchObject({ nodeId: from, gpus: ['MIG-held-0'] });

      // Moved in one report: refused, nothing recorded (the card is in use where it was).
      const before = await eventCount();
      const moved = await post(
        report('c1', [cards('gpu-held-01', []), cards('gpu-held-02', ['MIG-held-0'])]),
      );
      expect(moved.status).toBe(409);
      expect(moved.body.error).toMatchObject({
        code: 'gpu_uuid_conflict',
        details: { hostname: 'gpu-held-02', uuid: 'MIG-held-0', nodeId: from },
      });
      expect(await eventCount()).toBe(before);

      // Its node stops listing it: recorded; the session still holds it, so no one else may.
      expect((await post(report('c1', [cards('gpu-held-01', [])]))).status).toBe(200);
      const claimed = await post(report('c1', [cards('gpu-held-02', ['MIG-held-0'])]));
      expect(claimed.status).toBe(409);
      expect(claimed.body.error.details).toMatchObject({ uuid: 'MIG-held-0', nodeId: from });
      // The node's cards still show it, with the session holding it (no longer counted).
      const shown = await eventually(async () => {
        const node = (await request(t.url).get(`/v1/nodes/${from}`).set(admin)).body;
        return node.gpuCount === 0 ? node : null;
      });
      expect(shown.gpuCount).toBe(0);
      const held = await request(t.url).get(`/v1/nodes/${from}/gpus`).set(admin);
      expect(held.body.items).toEqual([
        { uuid: 'MIG-held-0', model: 'MIG_3g', memoryGiB: 40, sessionId, owner: 'alice' },
      ]);

      // The session ends: the card is free, and the next session gets it on its new node.
      await request(t.url).post(`/v1/sessions/${sessionId}/terminate`).set(alice).expect(200);
      await eventually(
        async () =>
          (await post(report('c1', [cards('gpu-held-02', ['MIG-held-0'])]))).status === 200,
      );
      // Its old node no longer shows it.
      await eventually(async () => {
        const items = (await request(t.url).get(`/v1/nodes/${from}/gpus`).set(admin)).body.items;
        return items.length === 0 ? items : null;
      });
      const bob = await t.auth('bob', ['user']);
      const next = await request(t.url)
        .post('/v1/sessions')
        .set(bob)
        .send({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 1 });
      const placed = await eventually(async () => {
        const s = (await request(t.url).get(`/v1/sessions/${next.body.sessionId}`).set(bob)).body;
        return s.status === 'running' ? s : null;
      });
      expect(placed).toMatchObject({ nodeId: to, gpus: ['MIG-held-0'] });
    });
  });

  describe('labels', () => {
    it('names a label that breaks two rules once, with both problems, nothing appended', async () => {
      const before = await eventCount();
      const res = await post(
        report('c1', [
          gpuNode('gpu-lbl-bad', 1, 'L40S', { labels: { 'fleet/mode': 'x'.repeat(70) } }),
        ]),
      );
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(fieldsOf(res)).toEqual(['nodes.0.labels.fleet/mode']);
      expect(problemsOf(res, 'nodes.0.labels.fleet/mode')).toHaveLength(2);
      expect(await eventCount()).toBe(before);
    });

    it('keeps the label keys constructor, prototype and toString', async () => {
      const res = await post(
        report('c1', [
          gpuNode('gpu-lbl-01', 2, 'L40S', {
            labels: { constructor: 'a', prototype: 'b', toString: 'c', 'fleet/mode': 'shared' },
          }),
        ]),
      );
      expect(res.status).toBe(200);
      const nodeId = res.body.nodes[0].nodeId;
      const stream = await request(t.url).get(`/v1/streams/node-${nodeId}`).set(admin);
      const registered = stream.body.events.find(
        (e: { type: string }) => e.type === 'NodeRegistered.v1',
      );
      expect(registered.data.labels).toEqual({
        constructor: 'a',
        prototype: 'b',
        toString: 'c',
        'fleet/mode': 'shared',
      });
      // The same labels again change nothing.
      const before = await eventCount();
      expect(
        (
          await post(
            report('c1', [
              gpuNode('gpu-lbl-01', 2, 'L40S', {
                labels: { constructor: 'a', prototype: 'b', toString: 'c', 'fleet/mode': 'shared' },
              }),
            ]),
          )
        ).status,
      ).toBe(200);
      expect(await eventCount()).toBe(before);
    });

    // Fastify's JSON parser refuses a `__proto__` key anywhere, before the route: so no field is
    // named. Past it, the controller would name it (`__proto__` is no Kubernetes label key).
    it('refuses __proto__ as a label key with 400, and appends nothing', async () => {
      const before = await eventCount();
      const body = JSON.stringify(report('c1', [gpuNode('gpu-lbl-02')])).replace(
        '"labels":{',
        '"labels":{"__proto__":"x",',
      );
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: 'validation_failed',
        details: {
          fields: [
            {
              field: 'nodes.0.labels.__proto__',
              problems: ['property __proto__ should not exist'],
            },
          ],
        },
      });
      expect(await eventCount()).toBe(before);
    });
  });
});

describe('the size of an inventory report', () => {
  let t: TestApp;
  let operator: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({}, { redis: false });
    operator = await t.auth('op-big', ['operator'], ['big1']);
  });
  afterAll(async () => t.close());

  const post = (text: string) =>
    request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .set('content-type', 'application/json')
      .send(text);

  it('takes 1000 GPU nodes of 8 cards each (past the 1 MiB other routes take), and refuses 10 MB with 413', async () => {
    const labels = {
      'fleet/mode': 'shared',
      'topology.kubernetes.io/zone': 'kr-central-1a',
      'node.kubernetes.io/instance-type': 'gpu-8x-l40s',
      'nvidia.com/gpu.product': 'NVIDIA-L40S',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      'nvidia.com/gpu.count': '8',
      'nvidia.com/cuda.driver.major': '550',
    };
    const nodes = Array.from({ length: 1000 }, (_, i) =>
      gpuNode(`gpu-big-${String(i).padStart(4, '0')}`, 0, 'L40S', {
        labels,
        gpus: Array.from({ length: 8 }, (_, k) => ({
          uuid: `GPU-${String(i).padStart(8, '0')}-000${k}-4def-8123-${String(k).repeat(12)}`,
          model: 'L40S',
          memoryGiB: 48,
        })),
      }),
    );
    const text = JSON.stringify(report('big1', nodes));
    expect(text.length).toBeGreaterThan(1024 * 1024);
    const taken = await post(text);
    expect(taken.status).toBe(200);
    expect(taken.body.nodes).toHaveLength(1000);
    const huge = await post(JSON.stringify({ ...report('big1', nodes), pad: 'x'.repeat(10e6) }));
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('payload_too_large');
    // Every other route still takes 1 MiB at most.
    const admin = await t.auth('root', ['admin']);
    const cordon = await request(t.url)
      .post('/v1/nodes/00000000-0000-4000-8000-000000000000/cordon')
      .set(admin)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ reason: 'x'.repeat(1024 * 1024) }));
    expect(cordon.status).toBe(413);
  });
});
