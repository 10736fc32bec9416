import { Logger } from '@nestjs/common';
import http from 'node:http';
import Redis from 'ioredis';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { untilRunning } from '../support/clusters';
import { startApp, TestApp } from '../support/app';
import { OwnRedis } from '../support/own-redis';
import { cpuNode, eventually, gpuNode, report, sleep } from '../support/reports';

/**
 * The real app on a Redis of the describe's own, started before its tests (after the
 * describe's earlier beforeAll hooks, so `env` may use what they set up) and stopped after.
 */
const onOwnRedis = (env: () => Record<string, string>) => {
  const own = {} as { redis: OwnRedis; t: TestApp };
  beforeAll(async () => {
    own.redis = await OwnRedis.onFreePort();
    await own.redis.start();
    own.t = await startApp({ ...env(), REDIS_URL: own.redis.url });
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await own.t?.close();
    await own.redis?.kill();
  });
  return own;
};

describe('Redis is flushed while it runs (NODE_STALE_SEC=2)', () => {
  const own = onOwnRedis(() => ({ NODE_STALE_SEC: '2' }));

  it('loses no timeout: a node that falls silent still goes offline', async () => {
    const admin = await own.t.auth('root', ['admin']);
    const operator = await own.t.auth('op', ['operator'], ['cf']);
    const res = await request(own.t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('cf', [gpuNode('flushed-01')]));
    expect(res.status).toBe(200);
    const nodeId = res.body.nodes[0].nodeId;
    const redis = new Redis(own.redis.url);
    await redis.flushall();
    redis.disconnect();
    await eventually(
      async () =>
        (await request(own.t.url).get(`/v1/nodes/${nodeId}`).set(admin)).body.status === 'offline',
      10_000,
    );
  });
});

describe('Redis dies and comes back empty (NODE_STALE_SEC=2)', () => {
  const own = onOwnRedis(() => ({ NODE_STALE_SEC: '2' }));

  it('answers 503 and changes nothing while it is down, then loses no timeout and takes no reporting node offline', async () => {
    const admin = await own.t.auth('root', ['admin']);
    const operator = await own.t.auth('op', ['operator'], ['cr']);
    const post = (names: string[], labels: Record<string, string> = {}) =>
      request(own.t.url)
        .post('/v1/inventory/reports')
        .set(operator)
        .send(
          report(
            'cr',
            names.map((n) =>
              gpuNode(n, 2, 'L40S', { labels: { 'fleet/mode': 'shared', ...labels } }),
            ),
          ),
        );
    const log = async (): Promise<Array<{ streamId: string; type: string }>> =>
      (await request(own.t.url).get('/v1/events?limit=1000').set(admin)).body.events;
    const res = await post(['silent-01', 'chatty-01']);
    expect(res.status).toBe(200);
    const [silent, chatty] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const before = await log();

    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await own.redis.kill();
    const killedAt = Date.now();
    expect((await request(own.t.url).get('/health/live')).status).toBe(200);
    await eventually(async () => (await request(own.t.url).get('/health/ready')).status === 503);
    const ready = await request(own.t.url).get('/health/ready');
    expect(ready.body.checks.delayedJobs.ok).toBe(false);
    // A report that would change a label: refused as unavailable, appending nothing.
    const during = await post(['chatty-01'], { rack: 'r2' });
    expect(during.status).toBe(503);
    expect(during.headers['retry-after']).toBe('1');
    expect(during.body.error).toMatchObject({
      code: 'unavailable',
      details: { dependency: 'heartbeat store (Redis)' },
    });
    // A command with an Idempotency-Key needs the key store (Redis too): the same answer.
    const cordon = await request(own.t.url)
      .post(`/v1/nodes/${chatty}/cordon`)
      .set(admin)
      .set('Idempotency-Key', 'cordon-while-redis-is-down')
      .send({ reason: 'maintenance' });
    expect(cordon.status).toBe(503);
    expect(cordon.body.error).toMatchObject({
      code: 'unavailable',
      details: { dependency: 'idempotency store (Redis)' },
    });
    expect(await log()).toEqual(before);
    // The Nodes screen still answers (it was a 503 for the whole outage), with the last
    // sighting recorded here: reports cannot be recorded meanwhile.
    const screen = await request(own.t.url).get('/v1/nodes').set(admin);
    expect(screen.status).toBe(200);
    const shown = screen.body.items.find((n: { nodeId: string }) => n.nodeId === chatty);
    expect(Date.parse(shown.lastSeenAt)).toBeLessThanOrEqual(killedAt);
    expect((await request(own.t.url).get(`/v1/nodes/${chatty}`).set(admin)).status).toBe(200);
    const downFor = Date.now() - killedAt;

    await own.redis.start();
    const backAt = Date.now();
    // Every connection and worker failed on each reconnect attempt: logged once per failure kind.
    expect(errors.mock.calls.length).toBeLessThanOrEqual(12);
    errors.mockRestore();

    // The chatty node reports every 400 ms; the silent one does not report at all.
    let silentOfflineAfter = 0;
    while (Date.now() - backAt < 15_000 && !silentOfflineAfter) {
      const r = await post(['chatty-01']);
      if (r.status !== 200) expect(r.status).toBe(503); // only while reconnecting
      const node = (await request(own.t.url).get(`/v1/nodes/${silent}`).set(admin)).body;
      if (node.status === 'offline') {
        expect(node.offlineReason).toBe('heartbeat_timeout');
        silentOfflineAfter = Date.now() - backAt;
      }
      await sleep(400);
    }
    // Its timeout was lost with Redis: re-armed from state, it still fired.
    expect(silentOfflineAfter).toBeGreaterThan(0);
    expect((await request(own.t.url).get(`/v1/nodes/${chatty}`).set(admin)).body.status).toBe(
      'ready',
    );
    const offline: Array<{ streamId: string }> = (
      await request(own.t.url).get('/v1/events?limit=1000&type=NodeWentOffline').set(admin)
    ).body.events;
    expect(offline.map((e) => e.streamId)).toEqual([`node-${silent}`]);
    await eventually(async () => (await request(own.t.url).get('/health/ready')).status === 200);
    console.log(
      `down ${downFor} ms; silent node offline ${silentOfflineAfter} ms after Redis returned`,
    );
  }, 60_000);
});

describe('Redis down for longer than NODE_STALE_SEC while nodes report and sessions run', () => {
  const own = onOwnRedis(() => ({
    NODE_STALE_SEC: '2',
    JOBS_REPAIR_SEC: '1',
    CORDON_SYNC_SEC: '3',
  }));

  it('bills a node silent before the outage to its last report, keeps a reporting node online, and answers what it recorded as done', async () => {
    const admin = await own.t.auth('root', ['admin']);
    const operator = await own.t.auth('op', ['operator'], ['co']);
    const user = await own.t.auth('u-out', ['user']);
    const post = (nodes: ReturnType<typeof gpuNode>[]) =>
      request(own.t.url).post('/v1/inventory/reports').set(operator).send(report('co', nodes));
    const busyNode = gpuNode('busy-01', 2, 'L40S');
    const quietNode = gpuNode('quiet-01', 1, 'HPC_GPU');
    const res = await post([busyNode, quietNode]);
    const [busy, quiet] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const create = (gpuModel: string) =>
      request(own.t.url)
        .post('/v1/sessions')
        .set(user)
        .send({ kind: 'gpu', gpuModel, gpuCount: 1 });
    const onBusy = (await create('L40S')).body;
    const onQuiet = (await create('HPC_GPU')).body;
    expect([onBusy.nodeId, onQuiet.nodeId]).toEqual([busy, quiet]);
    const events = async (
      type: string,
    ): Promise<Array<{ streamId: string; data: Record<string, string> }>> =>
      (await request(own.t.url).get(`/v1/events?limit=1000&type=${type}`).set(admin)).body.events;

    // quiet-01 reports for the last time now; busy-01 keeps reporting every 250 ms, outage or
    // not, without waiting for answers (those sent while Redis is down wait in its client).
    const quietLast = Date.now();
    await post([quietNode]);
    const quietLastAnswered = Date.now();
    let reporting = true;
    const reports: Array<Promise<unknown>> = [];
    const chatter = (async () => {
      while (reporting) {
        reports.push(
          post([busyNode]).then(
            () => undefined,
            () => undefined,
          ),
        );
        await sleep(250);
      }
    })();

    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await sleep(500);
    await own.redis.kill();
    await eventually(async () => (await request(own.t.url).get('/health/ready')).status === 503);
    // Commands while it is down: a 503 must mean nothing was done.
    const created = await create('L40S');
    const cordoned = await request(own.t.url)
      .post(`/v1/nodes/${quiet}/cordon`)
      .set(admin)
      .send({ reason: 'outage' });
    await sleep(3500); // longer than NODE_STALE_SEC and CORDON_SYNC_SEC
    const restarting = Date.now();
    await own.redis.start();

    const quietOffline = await eventually(async () => {
      const found = (await events('NodeWentOffline')).find((e) => e.streamId === `node-${quiet}`);
      return found ?? null;
    }, 15_000);
    await sleep(2500); // another window: time enough for a wrong offline of busy-01
    reporting = false;
    await chatter;
    await Promise.all(reports);
    errors.mockRestore();

    // busy-01 reported all along: it stays online and its session runs on.
    expect(
      (await events('NodeWentOffline')).filter((e) => e.streamId === `node-${busy}`),
    ).toHaveLength(0);
    const busySession = (await request(own.t.url).get(`/v1/sessions/${onBusy.sessionId}`).set(user))
      .body;
    expect(busySession.status).toBe('running');
    // Recorded while Redis was down, so answered as done (a 503 would invite a retry): the
    // session queued, as no node could be shown alive, and the cordon with its Node view.
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('queued');
    expect(cordoned.status).toBe(200);
    expect((await events('SessionRequested')).length).toBe(3);
    expect((await events('NodeCordoned')).length).toBe(1);
    // That session is placed on busy-01's free card once Redis is back, though Redis lost
    // every job meanwhile.
    const placed = await eventually(async () => {
      await post([busyNode]);
      const s = (await request(own.t.url).get(`/v1/sessions/${created.body.sessionId}`).set(user))
        .body;
      return s.status === 'running' ? s : null;
    }, 10_000);
    expect(placed.nodeId).toBe(busy);
    // quiet-01 went offline at its real last report, and its session's bill ends there.
    const lastSeenAt = Date.parse(quietOffline.data.lastSeenAt);
    expect(lastSeenAt).toBeGreaterThanOrEqual(quietLast);
    expect(lastSeenAt).toBeLessThanOrEqual(quietLastAnswered);
    const bill = await eventually(async () => {
      const page = (
        await request(own.t.url).get(`/v1/billing/records?sessionId=${onQuiet.sessionId}`).set(user)
      ).body;
      return page.items.length === 1 ? page.items[0] : null;
    });
    expect(bill.to).toBe(quietOffline.data.lastSeenAt);
    // The cordon made during the outage could not be shown applied while no report could be
    // recorded: its CORDON_SYNC_SEC runs from Redis's return, not from the cordon.
    const overdue = await eventually(async () => {
      const found = (await events('NodeCordonSyncWentOverdue')).find(
        (e) => e.streamId === `node-${quiet}`,
      );
      return found ?? null;
    }, 15_000);
    expect(Date.parse(overdue.data.at)).toBeGreaterThanOrEqual(restarting + 3000);
  }, 90_000);
});

describe('Redis restarted empty while a webhook delivery waits to be retried', () => {
  let receiver: http.Server;
  let hook = '';
  let healthy = false;
  const attempts = new Map<string, number>();
  const delivered = new Map<string, number>();

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const id = String(req.headers['x-notification-id']);
      req.resume();
      req.on('end', () => {
        attempts.set(id, (attempts.get(id) ?? 0) + 1);
        if (healthy) delivered.set(id, (delivered.get(id) ?? 0) + 1);
        res.statusCode = healthy ? 204 : 500;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
    hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => new Promise((resolve) => receiver.close(resolve)));
  const own = onOwnRedis(() => ({ JOBS_REPAIR_SEC: '1', NOTIFY_WEBHOOK_URL: hook }));

  it('still delivers it, once, when the receiver recovers', async () => {
    const operator = await own.t.auth('op', ['operator'], ['cw']);
    const post = (kubeletReady: boolean) =>
      request(own.t.url)
        .post('/v1/inventory/reports')
        .set(operator)
        .send(report('cw', [gpuNode('w-01', 1, 'L40S', { kubeletReady })]));
    await post(true);
    await post(false); // offline: one node_status_changed notification
    const id = await eventually(async () => [...attempts.keys()][0] ?? null);
    await eventually(async () => (attempts.get(id) ?? 0) >= 2); // failing, a retry waits

    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await own.redis.kill();
    await own.redis.start(); // empty: the waiting retry is gone
    healthy = true;
    await eventually(async () => (delivered.get(id) ?? 0) >= 1, 20_000);
    errors.mockRestore();
    await sleep(3000); // repairs keep running: none may deliver it again
    expect(delivered.get(id)).toBe(1);
    expect([...delivered.keys()]).toEqual([id]);
  }, 60_000);
});

describe('a drain asked for while Redis is down', () => {
  const own = onOwnRedis(() => ({ JOBS_REPAIR_SEC: '1' }));

  it('is accepted at once and carried out once Redis is back', async () => {
    const admin = await own.t.auth('root', ['admin']);
    const operator = await own.t.auth('op', ['operator'], ['cd']);
    const user = await own.t.auth('u-drain', ['user']);
    const nodes = [gpuNode('d-01', 1, 'MIG_1g'), gpuNode('d-02', 1, 'MIG_1g')];
    const post = () =>
      request(own.t.url).post('/v1/inventory/reports').set(operator).send(report('cd', nodes));
    const res = await post();
    const [from, to] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const session = (
      await request(own.t.url)
        .post('/v1/sessions')
        .set(user)
        .send({ kind: 'gpu', gpuModel: 'MIG_1g', gpuCount: 1 })
    ).body;
    const source = session.nodeId as string;
    const target = source === from ? to : from;
    const log = async (): Promise<number> =>
      (await request(own.t.url).get('/v1/events?limit=1000').set(admin)).body.events.length;

    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await own.redis.kill();
    await eventually(async () => (await request(own.t.url).get('/health/ready')).status === 503);
    const before = await log();
    const askedAt = Date.now();
    const drain = await request(own.t.url)
      .post(`/v1/nodes/${source}/drain`)
      .set(admin)
      .send({ mode: 'relocate' });
    // Recorded, so accepted (not 503), and answered without waiting for Redis (it hung).
    expect(drain.status).toBe(202);
    expect(Date.now() - askedAt).toBeLessThan(5000);
    expect(await log()).toBeGreaterThan(before);
    await own.redis.start();
    const done = await eventually(async () => {
      await post(); // the nodes keep reporting
      const d = (await request(own.t.url).get(`/v1/drains/${drain.body.drainId}`).set(admin)).body;
      return d.status === 'completed' ? d : null;
    }, 20_000);
    expect(done.relocated).toEqual([session.sessionId]);
    const moved = (await request(own.t.url).get(`/v1/sessions/${session.sessionId}`).set(user))
      .body;
    expect(moved).toMatchObject({ status: 'running', nodeId: target });
  }, 60_000);
});

describe('a pool operation asked for while Redis is down', () => {
  const own = onOwnRedis(() => ({ JOBS_REPAIR_SEC: '1', OPERATION_DEADLINE_SEC: '60' }));

  it('is accepted at once and carried out once Redis is back', async () => {
    const admin = await own.t.auth('root', ['admin']);
    const cluster = (
      await request(own.t.url).post('/v1/clusters').set(admin).send({
        name: 'outage',
        k8sVersion: '1.30.4',
        podCidr: '10.244.0.0/16',
        serviceCidr: '10.96.0.0/12',
      })
    ).body.clusterId as string;
    await untilRunning(own.t.url, admin, cluster); // pools are made only in a running cluster
    const pool = (
      await request(own.t.url)
        .post(`/v1/clusters/${cluster}/node-pools`)
        .set(admin)
        .send({ name: 'work', kind: 'cpu' })
    ).body.poolId as string;

    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await own.redis.kill();
    await eventually(async () => (await request(own.t.url).get('/health/ready')).status === 503);
    const askedAt = Date.now();
    const scale = await request(own.t.url)
      .post(`/v1/node-pools/${pool}/scale`)
      .set(admin)
      .send({ desiredSize: 1 });
    expect(scale.status).toBe(202);
    expect(Date.now() - askedAt).toBeLessThan(5000);
    await own.redis.start();
    const op = await eventually(async () => {
      const o = (
        await request(own.t.url).get(`/v1/operations/${scale.body.operationId}`).set(admin)
      ).body;
      return ['succeeded', 'failed', 'timeout'].includes(o.status) ? o : null;
    }, 30_000);
    expect(op.status).toBe('succeeded');
    const nodes = (await request(own.t.url).get(`/v1/nodes?poolId=${pool}`).set(admin)).body;
    expect(nodes.items).toHaveLength(1);
  }, 60_000);
});

describe('commands asked for while Redis is down are answered at once, each recorded once', () => {
  const own = onOwnRedis(() => ({ JOBS_REPAIR_SEC: '1', OPERATION_DEADLINE_SEC: '60' }));

  it('a cluster create (201 with its operation, carried out once Redis is back) and a session with many candidate nodes (201 queued, placed once Redis is back)', async () => {
    const admin = await own.t.auth('root', ['admin']);
    const operator = await own.t.auth('op', ['operator'], ['cq']);
    const user = await own.t.auth('u-many', ['user']);
    const nodes = Array.from({ length: 12 }, (_, i) => cpuNode(`q-${i}`, 4, 16));
    const post = () =>
      request(own.t.url).post('/v1/inventory/reports').set(operator).send(report('cq', nodes));
    await post().expect(200);
    const types = async (): Promise<string[]> =>
      (await request(own.t.url).get('/v1/events?limit=1000').set(admin)).body.events.map(
        (e: { type: string }) => e.type,
      );

    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await own.redis.kill();
    await eventually(async () => (await request(own.t.url).get('/health/ready')).status === 503);
    // Down for a while, as an outage is: the Redis client's own retries have slowed down.
    await sleep(3000);

    let askedAt = Date.now();
    const cluster = await request(own.t.url).post('/v1/clusters').set(admin).send({
      name: 'born-in-outage',
      k8sVersion: '1.30.4',
      podCidr: '10.244.0.0/16',
      serviceCidr: '10.96.0.0/12',
    });
    // Recorded, so 201 (it was 500 after seconds, and the retry made a second cluster).
    expect(cluster.status).toBe(201);
    expect(Date.now() - askedAt).toBeLessThan(4000);

    askedAt = Date.now();
    const session = await request(own.t.url)
      .post('/v1/sessions')
      .set(user)
      .send({ kind: 'cpu', cpu: 2, memoryGiB: 4 });
    // No node can be shown alive: queued at once (each of the 12 candidates was asked in turn).
    expect(session.status).toBe(201);
    expect(session.body.status).toBe('queued');
    expect(Date.now() - askedAt).toBeLessThan(3000);

    await own.redis.start();
    await eventually(async () => {
      await post(); // the nodes keep reporting
      const s = (await request(own.t.url).get(`/v1/sessions/${session.body.sessionId}`).set(user))
        .body;
      return s.status === 'running';
    }, 20_000);
    // The provisioner reports the cluster's lifecycle; the operation follows it.
    for (const to of ['provisioning', 'bootstrapping', 'running']) {
      await request(own.t.url)
        .post(`/v1/clusters/${cluster.body.clusterId}/transitions`)
        .set(admin)
        .send({ to })
        .expect(200);
    }
    const op = await eventually(async () => {
      const o = (
        await request(own.t.url).get(`/v1/operations/${cluster.body.operationId}`).set(admin)
      ).body;
      return ['succeeded', 'failed', 'timeout'].includes(o.status) ? o : null;
    }, 30_000);
    expect(op.status).toBe('succeeded');
    const log = await types();
    expect(log.filter((t) => t.startsWith('ClusterRequested'))).toHaveLength(1);
    expect(log.filter((t) => t.startsWith('SessionRequested'))).toHaveLength(1);
  }, 90_000);
});

describe('Redis stalls (connected, answering nothing) for longer than NODE_STALE_SEC', () => {
  const own = onOwnRedis(() => ({ NODE_STALE_SEC: '2', JOBS_REPAIR_SEC: '1' }));
  afterAll(() => own.redis?.resume());

  it('answers within seconds meanwhile, and takes no node that kept reporting offline when it answers again', async () => {
    const admin = await own.t.auth('root', ['admin']);
    const operator = await own.t.auth('op', ['operator'], ['cs']);
    const user = await own.t.auth('u-stall', ['user']);
    const nodes = [gpuNode('st-01', 2, 'L40S'), gpuNode('st-02', 2, 'L40S')];
    const post = () =>
      request(own.t.url).post('/v1/inventory/reports').set(operator).send(report('cs', nodes));
    await post().expect(200);
    const running = (
      await request(own.t.url)
        .post('/v1/sessions')
        .set(user)
        .send({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 })
    ).body;
    expect(running.status).toBe('running');
    // The nodes report every 300 ms throughout, without waiting for answers.
    let reporting = true;
    const chatter = (async () => {
      while (reporting) {
        void post().then(
          () => undefined,
          () => undefined,
        );
        await sleep(300);
      }
    })();
    await sleep(1000);

    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    own.redis.stall();
    try {
      await sleep(500);
      // A recorded command is answered as done, within the command timeout (it waited for
      // the whole stall, and a client timing out retried into a second session).
      const askedAt = Date.now();
      const queued = await request(own.t.url)
        .post('/v1/sessions')
        .set(user)
        .send({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 });
      expect(queued.status).toBe(201);
      expect(Date.now() - askedAt).toBeLessThan(4000);
      const screen = await request(own.t.url).get('/v1/nodes').set(admin);
      expect(screen.status).toBe(200);
      await sleep(Math.max(0, 5000 - (Date.now() - askedAt))); // longer than NODE_STALE_SEC
    } finally {
      own.redis.resume();
    }
    await sleep(4000); // timers due during the stall fire now; the nodes keep reporting
    reporting = false;
    await chatter;
    const offline = (
      await request(own.t.url).get('/v1/events?limit=1000&type=NodeWentOffline').set(admin)
    ).body.events;
    expect(offline).toEqual([]);
    const session = (await request(own.t.url).get(`/v1/sessions/${running.sessionId}`).set(user))
      .body;
    expect(session.status).toBe('running');
  }, 60_000);
});
