import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { runningCluster } from '../support/clusters';

/** Mesh requests by cluster role: editor of `from` opens and cancels, owner of `to` decides. */
describe('mesh requests and cluster members over HTTP', () => {
  let t: TestApp;
  let as: Record<'admin' | 'olga' | 'edna' | 'vic' | 'tom' | 'nora', Record<string, string>>;
  let from: string;
  let to: string;
  let meshId: string;
  const post = (path: string, who: Record<string, string>, body: object = {}) =>
    request(t.url).post(path).set(who).send(body);

  beforeAll(async () => {
    t = await startApp({}, { redis: false });
    as = {
      admin: await t.auth('root', ['admin']),
      olga: await t.auth('olga', ['user']),
      edna: await t.auth('edna', ['user']),
      vic: await t.auth('vic', ['user']),
      tom: await t.auth('tom', ['user']),
      nora: await t.auth('nora', ['user']),
    };
    from = await runningCluster(
      t.url,
      as.admin,
      { name: 'from', podCidr: '10.1.0.0/16', serviceCidr: '10.2.0.0/16' },
      as.olga,
    );
    to = await runningCluster(
      t.url,
      as.admin,
      { name: 'to', podCidr: '10.3.0.0/16', serviceCidr: '10.4.0.0/16' },
      as.tom,
    );
    for (const [sub, role] of [
      ['edna', 'editor'],
      ['vic', 'viewer'],
    ]) {
      await request(t.url)
        .put(`/v1/clusters/${from}/members/${sub}`)
        .set(as.olga)
        .send({ role })
        .expect(200);
    }
  });
  afterAll(async () => t.close());

  it('lets an editor of `from` open a request; a viewer is 403, a stranger to `from` 404', async () => {
    const body = { fromClusterId: from, toClusterId: to };
    const viewer = await post('/v1/mesh-requests', as.vic, body);
    expect([viewer.status, viewer.body.error.code]).toEqual([403, 'forbidden']);
    for (const who of [as.nora, as.tom]) {
      const hidden = await post('/v1/mesh-requests', who, body);
      expect([hidden.status, hidden.body.error.message]).toEqual([
        404,
        `cluster ${from} does not exist`,
      ]);
    }
    const opened = await post('/v1/mesh-requests', as.edna, body);
    expect([opened.status, opened.body.status]).toEqual([201, 'pending']);
    meshId = opened.body.meshRequestId;
  });

  it('shows a request to members of either cluster only, as if there were none to others', async () => {
    for (const who of [as.vic, as.tom, as.admin]) {
      expect((await request(t.url).get(`/v1/mesh-requests/${meshId}`).set(who)).status).toBe(200);
    }
    const hidden = await request(t.url).get(`/v1/mesh-requests/${meshId}`).set(as.nora);
    const missingId = '00000000-0000-4000-8000-000000000000';
    const missing = await request(t.url).get(`/v1/mesh-requests/${missingId}`).set(as.nora);
    expect(hidden.status).toBe(404);
    expect(JSON.stringify(missing.body).split(missingId).join(meshId)).toBe(
      JSON.stringify(hidden.body),
    );
    const listed = async (who: Record<string, string>) =>
      (await request(t.url).get('/v1/mesh-requests').set(who).expect(200)).body.items.length;
    expect([await listed(as.vic), await listed(as.tom), await listed(as.nora)]).toEqual([1, 1, 0]);
    const filtered = await request(t.url).get(`/v1/mesh-requests?clusterId=${to}`).set(as.nora);
    expect(filtered.body.items).toEqual([]);
  });

  it('lets only an owner of `to` approve or reject, and only an editor of `from` cancel', async () => {
    for (const who of [as.vic, as.edna, as.olga]) {
      for (const move of ['approve', 'reject']) {
        const res = await post(`/v1/mesh-requests/${meshId}/${move}`, who);
        expect([move, res.status]).toEqual([move, 403]);
      }
    }
    for (const who of [as.vic, as.tom]) {
      expect((await post(`/v1/mesh-requests/${meshId}/cancel`, who)).status).toBe(403);
    }
    expect((await post(`/v1/mesh-requests/${meshId}/approve`, as.nora)).status).toBe(404);
    const approved = await post(`/v1/mesh-requests/${meshId}/approve`, as.tom);
    expect(approved.status).toBe(200);
    // The link may already be under way when the answer is read.
    expect(['approved', 'connecting', 'connected']).toContain(approved.body.status);
  });
});
