import request from 'supertest';
import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import { eventually, gpuNode, report, sleep } from '../support/reports';

/**
 * The embedded defaults (no Redis): sightings are kept in memory and written down under
 * DATA_DIR. A node that falls silent around a restart goes offline at its last report, and
 * its sessions are billed up to there, not to its last recorded change.
 */
describe.each(['SIGKILL', 'SIGTERM'] as const)(
  'a node silent across a %s of the embedded control plane',
  (signal) => {
    let app: ChildApp;
    beforeAll(async () => {
      await ensureBuilt();
      app = await startChildApp({ NODE_STALE_SEC: '2' }, { redis: false });
    }, 60_000);
    afterAll(async () => app?.kill('SIGKILL'));

    it('goes offline at its last report before the restart, and its session is billed to there', async () => {
      const operator = await app.auth('op', ['operator'], ['ce']);
      const admin = await app.auth('root', ['admin']);
      const user = await app.auth('alice', ['user']);
      const send = () =>
        request(app.url)
          .post('/v1/inventory/reports')
          .set(operator)
          .send(report('ce', [gpuNode('embedded-01', 1)]));
      const first = await send();
      expect(first.status).toBe(200);
      const nodeId: string = first.body.nodes[0].nodeId;
      const created = await request(app.url)
        .post('/v1/sessions')
        .set(user)
        .send({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 });
      expect(created.status).toBe(201);
      const sessionId: string = created.body.sessionId;
      await eventually(async () => {
        const s = (await request(app.url).get(`/v1/sessions/${sessionId}`).set(user)).body;
        return s.status === 'running' ? s : null;
      });
      // The node keeps reporting, unchanged (sightings only, no event), for a while.
      let lastReport = 0;
      const until = Date.now() + 2_500;
      while (Date.now() < until) {
        expect((await send()).status).toBe(200);
        lastReport = Date.now();
        await sleep(300);
      }
      // Then falls silent; the control plane goes down a little later and comes back.
      await sleep(800); // more than the snapshot period (a quarter of NODE_STALE_SEC)
      await app.restart(signal);

      const offline = await eventually(async () => {
        const res = await request(app.url)
          .get('/v1/events?type=NodeWentOffline&limit=1000')
          .set(admin);
        return res.body.events.find((e: { streamId: string }) => e.streamId === `node-${nodeId}`);
      }, 10_000);
      const lastSeenAt = Date.parse(offline.data.lastSeenAt);
      expect(lastSeenAt).toBeGreaterThan(lastReport - 1_000);
      expect(lastSeenAt).toBeLessThanOrEqual(lastReport);

      const bill = await eventually(async () => {
        const res = await request(app.url)
          .get(`/v1/billing/records?sessionId=${sessionId}`)
          .set(admin);
        const ended = (await request(app.url).get(`/v1/sessions/${sessionId}`).set(admin)).body;
        return ended.status === 'terminated' && res.body.items.length > 0 ? res.body : null;
      }, 10_000);
      const billedTo = Math.max(...bill.items.map((r: { to: string }) => Date.parse(r.to)));
      expect(billedTo).toBe(lastSeenAt);
      // It ran about 2.5 s while its node reported: billed for that, not for 0 s.
      expect(
        bill.items.reduce((s: number, r: { seconds: number }) => s + r.seconds, 0),
      ).toBeGreaterThan(2);
    }, 90_000);
  },
);
