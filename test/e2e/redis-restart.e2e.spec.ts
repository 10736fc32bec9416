import { ChildProcess, spawn } from 'node:child_process';
import net, { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { eventually, gpuNode, report, sleep } from '../support/reports';

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** A Redis of this test's own (nothing on disk), so killing it disturbs no other test. */
const startRedis = async (port: number): Promise<ChildProcess> => {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await eventually(async () => {
      try {
        if (probe.status !== 'ready') await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      }
    }, 10_000);
  } finally {
    probe.disconnect();
  }
  return child;
};

const kill = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe('Redis dies and comes back empty (NODE_STALE_SEC=2)', () => {
  let port: number;
  let redis: ChildProcess;
  let t: TestApp;
  let errors: jest.SpyInstance;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    t = await startApp({ NODE_STALE_SEC: '2', REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    errors?.mockRestore();
    await t?.close();
    if (redis) await kill(redis);
  });

  it('answers 503 and changes nothing while it is down, then loses no timeout and takes no reporting node offline', async () => {
    const admin = await t.auth('root', ['admin']);
    const operator = await t.auth('op', ['operator'], ['cr']);
    const post = (names: string[], labels: Record<string, string> = {}) =>
      request(t.url)
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
      (await request(t.url).get('/v1/events?limit=1000').set(admin)).body.events;
    const res = await post(['silent-01', 'chatty-01']);
    expect(res.status).toBe(200);
    const [silent, chatty] = res.body.nodes.map((n: { nodeId: string }) => n.nodeId);
    const before = await log();

    errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    await kill(redis);
    const killedAt = Date.now();
    expect((await request(t.url).get('/health/live')).status).toBe(200);
    await eventually(async () => (await request(t.url).get('/health/ready')).status === 503);
    const ready = await request(t.url).get('/health/ready');
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
    const cordon = await request(t.url)
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
    const downFor = Date.now() - killedAt;

    redis = await startRedis(port);
    const backAt = Date.now();
    // Every connection and worker failed on each reconnect attempt: logged once per failure kind.
    expect(errors.mock.calls.length).toBeLessThanOrEqual(12);
    errors.mockRestore();

    // The chatty node reports every 400 ms; the silent one does not report at all.
    let silentOfflineAfter = 0;
    while (Date.now() - backAt < 15_000 && !silentOfflineAfter) {
      const r = await post(['chatty-01']);
      if (r.status !== 200) expect(r.status).toBe(503); // only while reconnecting
      const node = (await request(t.url).get(`/v1/nodes/${silent}`).set(admin)).body;
      if (node.status === 'offline') {
        expect(node.offlineReason).toBe('heartbeat_timeout');
        silentOfflineAfter = Date.now() - backAt;
      }
      await sleep(400);
    }
    // Its timeout was lost with Redis: re-armed from state, it still fired.
    expect(silentOfflineAfter).toBeGreaterThan(0);
    expect((await request(t.url).get(`/v1/nodes/${chatty}`).set(admin)).body.status).toBe('ready');
    const offline: Array<{ streamId: string }> = (
      await request(t.url).get('/v1/events?limit=1000&type=NodeWentOffline').set(admin)
    ).body.events;
    expect(offline.map((e) => e.streamId)).toEqual([`node-${silent}`]);
    await eventually(async () => (await request(t.url).get('/health/ready')).status === 200);
    console.log(
      `down ${downFor} ms; silent node offline ${silentOfflineAfter} ms after Redis returned`,
    );
  }, 60_000);
});
