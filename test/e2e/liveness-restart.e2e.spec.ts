import request from 'supertest';
import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import { eventually, gpuNode, report, sleep } from '../support/reports';

/**
 * The control plane down for longer than NODE_STALE_SEC, heartbeats kept in Redis: no report
 * could be received meanwhile, so its own downtime is no node's silence.
 */
describe('a restart of the control plane longer than NODE_STALE_SEC (heartbeats in Redis)', () => {
  let app: ChildApp;
  beforeAll(async () => {
    await ensureBuilt();
    app = await startChildApp({ NODE_STALE_SEC: '2' });
  }, 60_000);
  afterAll(async () => app?.kill('SIGKILL'));

  it('takes no reporting node offline and ends no session when it comes back, and still times out a node that stays silent', async () => {
    const operator = await app.auth('op', ['operator'], ['cr']);
    const admin = await app.auth('root', ['admin']);
    const user = await app.auth('alice', ['user']);
    const call = (
      method: 'GET' | 'POST',
      path: string,
      auth: Record<string, string>,
      body?: object,
    ) =>
      method === 'GET'
        ? request(app.url).get(path).set(auth)
        : request(app.url).post(path).set(auth).send(body);
    const send = (names: string[]) =>
      call(
        'POST',
        '/v1/inventory/reports',
        operator,
        report(
          'cr',
          names.map((n) => gpuNode(n, 1)),
        ),
      );
    const first = await send(['keeps-01']);
    expect(first.status).toBe(200);
    const keeps: string = first.body.nodes[0].nodeId;
    // The session on the node that keeps reporting (the only one with a card yet).
    const session = await call('POST', '/v1/sessions', user, {
      kind: 'gpu',
      gpuModel: 'L40S',
      gpuCount: 1,
    });
    expect(session.status).toBe(201);
    const sessionId: string = session.body.sessionId;
    const placed = await eventually(async () => {
      const s = (await call('GET', `/v1/sessions/${sessionId}`, user)).body;
      return s.status === 'running' ? s : null;
    });
    expect(placed.nodeId).toBe(keeps);
    const silent: string = (await send(['silent-01'])).body.nodes[0].nodeId;
    await send(['keeps-01', 'silent-01']);

    await app.kill('SIGTERM');
    await sleep(3_500); // longer than NODE_STALE_SEC: every heartbeat in Redis is stale now
    const back = Date.now();
    await app.restart();
    // The operator's reporter retries and reaches it within a second of its return.
    await send(['keeps-01']);
    const until = back + 1_500;
    while (Date.now() < until) {
      await send(['keeps-01']);
      await sleep(300);
    }
    expect((await call('GET', `/v1/nodes/${keeps}`, admin)).body.status).not.toBe('offline');
    expect((await call('GET', `/v1/sessions/${sessionId}`, user)).body.status).toBe('running');
    const offline = await call('GET', '/v1/events?type=NodeWentOffline&limit=1000', admin);
    expect(
      offline.body.events.filter((e: { streamId: string }) => e.streamId === `node-${keeps}`),
    ).toEqual([]);

    // A node that stays silent goes offline one window after the return, dated at its last
    // report before the restart (where its bills would end).
    const gone = await eventually(async () => {
      const n = (await call('GET', `/v1/nodes/${silent}`, admin)).body;
      return n.status === 'offline' ? n : null;
    }, 8_000);
    expect(gone.offlineReason).toBe('heartbeat_timeout');
    expect(Date.now() - back).toBeGreaterThanOrEqual(2_000);
  }, 90_000);
});
