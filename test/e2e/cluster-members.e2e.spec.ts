import request from 'supertest';
import { startApp, TestApp } from '../support/app';

/** The callers of the table: three members, a user who is none, and the two global roles. */
const CALLERS = ['viewer', 'editor', 'owner', 'nonMember', 'admin', 'auditor'] as const;
type Who = (typeof CALLERS)[number];

/** Where a row's request goes: the ids of the cluster under test and what is in it. */
type Ids = { clusterId: string; poolId: string; operationId: string };

type Row = {
  readonly route: string;
  readonly path: (ids: Ids) => string;
  /** A body that changes nothing even when the caller may send it (400, or a refused move). */
  readonly body?: object;
  readonly expect: Readonly<Record<Who, number>>;
};

/** A cluster-scoped route's answers, per the role table: what the allowed roles get, then 403/404. */
const viewerRoute = (ok: number) =>
  ({ viewer: ok, editor: ok, owner: ok, nonMember: 404, admin: ok, auditor: ok }) as const;
const editorRoute = (ok: number) =>
  ({ viewer: 403, editor: ok, owner: ok, nonMember: 404, admin: ok, auditor: 403 }) as const;
const ownerRoute = (ok: number) =>
  ({ viewer: 403, editor: 403, owner: ok, nonMember: 404, admin: ok, auditor: 403 }) as const;
/** Fleet-admin routes: no cluster role reaches them. */
const adminRoute = (ok: number) =>
  ({ viewer: 403, editor: 403, owner: 403, nonMember: 403, admin: ok, auditor: 403 }) as const;

/**
 * Every cluster-scoped route on this branch (add a row for a new one). Bodies are chosen so
 * that an allowed caller is judged on them (400) or refused by the state (409) after the
 * guard let it through, and nothing changes whoever calls.
 */
const ROUTES: readonly Row[] = [
  {
    route: 'GET /v1/clusters/{id}',
    path: (i) => `/v1/clusters/${i.clusterId}`,
    expect: viewerRoute(200),
  },
  {
    route: 'POST /v1/clusters/{id}/upgrade',
    path: (i) => `/v1/clusters/${i.clusterId}/upgrade`,
    body: { k8sVersion: 'latest' },
    expect: editorRoute(400),
  },
  {
    route: 'POST /v1/clusters/{id}/repair',
    path: (i) => `/v1/clusters/${i.clusterId}/repair`,
    expect: editorRoute(409),
  },
  {
    route: 'POST /v1/clusters/{id}/node-pools',
    path: (i) => `/v1/clusters/${i.clusterId}/node-pools`,
    body: { kind: 'cpu' },
    expect: editorRoute(400),
  },
  {
    route: 'GET /v1/clusters/{id}/node-pools',
    path: (i) => `/v1/clusters/${i.clusterId}/node-pools`,
    expect: viewerRoute(200),
  },
  {
    route: 'GET /v1/node-pools/{id}',
    path: (i) => `/v1/node-pools/${i.poolId}`,
    expect: viewerRoute(200),
  },
  {
    route: 'POST /v1/node-pools/{id}/scale',
    path: (i) => `/v1/node-pools/${i.poolId}/scale`,
    body: { desiredSize: -1 },
    expect: editorRoute(400),
  },
  {
    route: 'POST /v1/node-pools/{id}/resize',
    path: (i) => `/v1/node-pools/${i.poolId}/resize`,
    body: {},
    expect: editorRoute(400),
  },
  {
    route: 'PATCH /v1/node-pools/{id}',
    path: (i) => `/v1/node-pools/${i.poolId}`,
    body: { autoscaling: { min: -1 } },
    expect: editorRoute(400),
  },
  {
    route: 'DELETE /v1/node-pools/{id}',
    path: (i) => `/v1/node-pools/${i.poolId}`,
    expect: editorRoute(409), // the cluster's last pool
  },
  {
    route: 'GET /v1/operations/{id}',
    path: (i) => `/v1/operations/${i.operationId}`,
    expect: viewerRoute(200),
  },
  {
    route: 'GET /v1/clusters/{id}/members',
    path: (i) => `/v1/clusters/${i.clusterId}/members`,
    expect: viewerRoute(200),
  },
  {
    route: 'PUT /v1/clusters/{id}/members/{sub}',
    path: (i) => `/v1/clusters/${i.clusterId}/members/ghost`,
    body: { role: 'boss' },
    expect: ownerRoute(400),
  },
  {
    route: 'DELETE /v1/clusters/{id}/members/{sub}',
    path: (i) => `/v1/clusters/${i.clusterId}/members/ghost`,
    expect: ownerRoute(204), // no such member: nothing to remove
  },
  {
    // No API endpoint on this branch's clusters yet: the allowed get 409 cluster_not_running.
    route: 'GET /v1/clusters/{id}/kubeconfig',
    path: (i) => `/v1/clusters/${i.clusterId}/kubeconfig`,
    expect: viewerRoute(409),
  },
  {
    route: 'PUT /v1/clusters/{id}/backup-policy',
    path: (i) => `/v1/clusters/${i.clusterId}/backup-policy`,
    body: { enabled: true, schedule: 'every day', ttlHours: 24 },
    expect: editorRoute(400),
  },
  {
    route: 'GET /v1/clusters/{id}/backup-policy',
    path: (i) => `/v1/clusters/${i.clusterId}/backup-policy`,
    expect: viewerRoute(200),
  },
  {
    route: 'POST /v1/clusters/{id}/backups',
    path: (i) => `/v1/clusters/${i.clusterId}/backups`,
    body: { snapshotVolumes: 'yes' },
    expect: editorRoute(400),
  },
  {
    route: 'GET /v1/clusters/{id}/backups',
    path: (i) => `/v1/clusters/${i.clusterId}/backups`,
    expect: viewerRoute(200),
  },
  {
    route: 'POST /v1/clusters/{id}/restores',
    path: (i) => `/v1/clusters/${i.clusterId}/restores`,
    body: { backupId: 'not-a-backup' },
    expect: ownerRoute(400),
  },
  {
    route: 'PUT /v1/clusters/{id}/network',
    path: (i) => `/v1/clusters/${i.clusterId}/network`,
    body: { podCidr: '10.0.0.1/8', serviceCidr: '10.96.0.0/12' },
    expect: adminRoute(400),
  },
  {
    route: 'POST /v1/clusters/{id}/transitions',
    path: (i) => `/v1/clusters/${i.clusterId}/transitions`,
    body: { to: 'running' },
    expect: adminRoute(200),
  },
  {
    route: 'POST /v1/clusters/{id}/confirm-outage',
    path: (i) => `/v1/clusters/${i.clusterId}/confirm-outage`,
    body: {},
    expect: adminRoute(409),
  },
];

const send = (t: TestApp, row: Row, ids: Ids, headers: Record<string, string>) => {
  const [method] = row.route.split(' ');
  const call = request(t.url)[method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](
    row.path(ids),
  );
  return row.body === undefined ? call.set(headers) : call.set(headers).send(row.body);
};

describe('cluster members and the cluster-role guard over HTTP', () => {
  let t: TestApp;
  let as: Record<Who, Record<string, string>>;
  let ids: Ids;
  const valid = {
    name: 'tenant-a',
    k8sVersion: '1.30.4',
    podCidr: '10.244.0.0/16',
    serviceCidr: '10.96.0.0/12',
  };
  const events = async () =>
    (await request(t.url).get('/v1/events?limit=1000').set(as.admin)).body.events as Array<{
      type: string;
      data: Record<string, unknown>;
      metadata: { actor: { sub: string } };
    }>;
  const putMember = (clusterId: string, sub: string, role: string, who = as.owner) =>
    request(t.url)
      .put(`/v1/clusters/${clusterId}/members/${encodeURIComponent(sub)}`)
      .set(who)
      .send({ role });

  beforeAll(async () => {
    t = await startApp({}, { redis: false });
    as = {
      viewer: await t.auth('vic', ['user']),
      editor: await t.auth('edna', ['user']),
      owner: await t.auth('olga', ['user']),
      nonMember: await t.auth('nora', ['user']),
      admin: await t.auth('root', ['admin']),
      auditor: await t.auth('aud', ['auditor']),
    };
    // A user creates the cluster, so it is its first owner and reads it at once.
    const created = await request(t.url).post('/v1/clusters').set(as.owner).send(valid).expect(201);
    const clusterId = created.body.clusterId as string;
    const read = await request(t.url).get(`/v1/clusters/${clusterId}`).set(as.owner);
    expect([read.status, read.body.myRole]).toEqual([200, 'owner']);
    for (const to of ['provisioning', 'bootstrapping', 'running']) {
      await request(t.url)
        .post(`/v1/clusters/${clusterId}/transitions`)
        .set(as.admin)
        .send({ to })
        .expect(200);
    }
    await putMember(clusterId, 'vic', 'viewer').expect(200);
    await putMember(clusterId, 'edna', 'editor').expect(200);
    const pool = await request(t.url)
      .post(`/v1/clusters/${clusterId}/node-pools`)
      .set(as.editor)
      .send({ name: 'cpu-a', kind: 'cpu' })
      .expect(201);
    ids = { clusterId, poolId: pool.body.poolId, operationId: created.body.operationId };
  });
  afterAll(async () => t.close());

  describe.each(ROUTES)('$route', (row) => {
    it.each(CALLERS)('answers %s as the role table says, changing nothing', async (who) => {
      const before = (await events()).length;
      const res = await send(t, row, ids, as[who]);
      expect({ who, status: res.status }).toEqual({ who, status: row.expect[who] });
      if (res.status === 404) expect(res.body.error.code).toBe('not_found');
      if (res.status === 403) expect(res.body.error.code).toBe('forbidden');
      expect((await events()).length).toBe(before);
    });
  });

  it('answers a non-member exactly as for a cluster, pool or operation that does not exist', async () => {
    const missing: Ids = {
      clusterId: 'no-such-cluster',
      poolId: '00000000-0000-4000-8000-000000000000',
      operationId: '00000000-0000-4000-8000-000000000001',
    };
    for (const row of ROUTES.filter((r) => r.expect.nonMember === 404)) {
      const real = await send(t, row, ids, as.nonMember);
      const none = await send(t, row, missing, as.nonMember);
      const text = JSON.stringify(real.body);
      // Only the id the caller sent differs, nothing else of the cluster (its name, its pool's).
      let expected = JSON.stringify(none.body);
      for (const k of Object.keys(ids) as Array<keyof Ids>) {
        expected = expected.split(missing[k]).join(ids[k]);
      }
      expect({ route: row.route, body: text }).toEqual({ route: row.route, body: expected });
      expect(text).not.toContain(valid.name);
      expect(text).not.toContain('cpu-a');
    }
  });

  it('applies a role change from the next request', async () => {
    const upgrade = () =>
      request(t.url)
        .post(`/v1/clusters/${ids.clusterId}/upgrade`)
        .set(as.viewer)
        .send({ k8sVersion: 'x' });
    expect((await upgrade()).status).toBe(403);
    await putMember(ids.clusterId, 'vic', 'editor').expect(200);
    expect((await upgrade()).status).toBe(400);
    await request(t.url)
      .delete(`/v1/clusters/${ids.clusterId}/members/vic`)
      .set(as.owner)
      .expect(204);
    expect((await upgrade()).status).toBe(404);
    expect((await request(t.url).get(`/v1/clusters/${ids.clusterId}`).set(as.viewer)).status).toBe(
      404,
    );
    const back = await putMember(ids.clusterId, 'vic', 'viewer');
    expect(back.body).toEqual({
      sub: 'vic',
      role: 'viewer',
      addedBy: 'olga',
      addedAt: expect.any(String),
    });
    expect(
      (await request(t.url).get(`/v1/clusters/${ids.clusterId}`).set(as.viewer)).body.myRole,
    ).toBe('viewer');
  });

  it('keeps the last owner: neither removed nor demoted (409 last_owner), nothing appended', async () => {
    const before = (await events()).length;
    const removed = await request(t.url)
      .delete(`/v1/clusters/${ids.clusterId}/members/olga`)
      .set(as.owner);
    expect([removed.status, removed.body.error.code]).toEqual([409, 'last_owner']);
    const demoted = await putMember(ids.clusterId, 'olga', 'editor', as.admin);
    expect([demoted.status, demoted.body.error.code]).toEqual([409, 'last_owner']);
    expect((await events()).length).toBe(before);
    // With a second owner, the first may step down.
    await putMember(ids.clusterId, 'edna', 'owner').expect(200);
    await putMember(ids.clusterId, 'olga', 'editor', as.editor).expect(200);
    await putMember(ids.clusterId, 'olga', 'owner', as.editor).expect(200);
    await putMember(ids.clusterId, 'edna', 'editor').expect(200);
    const members = (
      await request(t.url).get(`/v1/clusters/${ids.clusterId}/members`).set(as.viewer)
    ).body;
    expect(members.items.map((m: { sub: string; role: string }) => [m.sub, m.role])).toEqual([
      ['olga', 'owner'],
      ['edna', 'editor'],
      ['vic', 'viewer'], // removed and added again in the role-change test: last
    ]);
    // Each change names who made it.
    const changes = (await events()).filter((e) => e.type === 'MemberRoleChanged.v1');
    expect(changes.slice(-2).map((e) => [e.data.sub, e.data.to, e.data.by])).toEqual([
      ['olga', 'owner', 'edna'],
      ['edna', 'editor', 'olga'],
    ]);
  });

  it('validates a member route: the sub, the role, unknown fields', async () => {
    const badRole = await putMember(ids.clusterId, 'zed', 'admin');
    expect([badRole.status, badRole.body.error.details.fields[0].field]).toEqual([400, 'role']);
    const badSub = await putMember(ids.clusterId, ' zed', 'viewer');
    expect([badSub.status, badSub.body.error.details.fields[0].field]).toEqual([400, 'sub']);
    const extra = await request(t.url)
      .put(`/v1/clusters/${ids.clusterId}/members/zed`)
      .set(as.owner)
      .send({ role: 'viewer', extra: 1 });
    expect(extra.status).toBe(400);
  });

  it('lists for each caller only its clusters, with its role; admin and auditor all', async () => {
    const mine = await request(t.url)
      .post('/v1/clusters')
      .set(as.admin)
      .send({ ...valid, name: 'admins-own', podCidr: '10.10.0.0/16', serviceCidr: '10.20.0.0/16' })
      .expect(201);
    const forNora = await request(t.url)
      .post('/v1/clusters')
      .set(as.admin)
      .send({ ...valid, name: 'noras', owner: 'no.ra@example.com' })
      .expect(201);
    const list = async (who: Record<string, string>, query = '') =>
      (await request(t.url).get(`/v1/clusters${query}`).set(who).expect(200)).body;
    const roles = (page: { items: Array<{ clusterId: string; myRole: string | null }> }) =>
      page.items.map((c) => [c.clusterId, c.myRole]);
    expect(roles(await list(as.viewer))).toEqual([[ids.clusterId, 'viewer']]);
    expect(roles(await list(as.nonMember))).toEqual([]);
    const nora = await t.auth('no.ra@example.com', ['user']);
    expect(roles(await list(nora))).toEqual([[forNora.body.clusterId, 'owner']]);
    expect(roles(await list(as.admin))).toEqual([
      [ids.clusterId, null],
      [mine.body.clusterId, 'owner'],
      [forNora.body.clusterId, null],
    ]);
    expect((await list(as.auditor)).items).toHaveLength(3);
    const first = await list(as.admin, '?limit=2');
    const rest = await list(as.admin, `?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect([...first.items, ...rest.items].map((c: { clusterId: string }) => c.clusterId)).toEqual(
      (await list(as.admin)).items.map((c: { clusterId: string }) => c.clusterId),
    );
    expect(rest.nextCursor).toBeNull();
    expect(roles(await list(as.admin, '?status=requested'))).toHaveLength(2);
    expect((await list(as.admin, '?status=deleted')).items).toEqual([]);
    const bad = await request(t.url).get('/v1/clusters?status=gone').set(as.admin);
    expect([bad.status, bad.body.error.details.fields[0].field]).toEqual([400, 'status']);
    expect(Object.keys((await list(as.owner)).items[0])).not.toContain('memberSubs');
  });

  it('runs sessions in the cluster’s pools for its owners and editors only', async () => {
    const session = (who: Record<string, string>, owner?: string) =>
      request(t.url)
        .post('/v1/sessions')
        .set(who)
        .send({
          kind: 'cpu',
          cpu: 1,
          memoryGiB: 1,
          poolId: ids.poolId,
          ...(owner ? { owner } : {}),
        });
    expect((await session(as.editor)).status).toBe(201);
    expect((await session(as.owner)).status).toBe(201);
    for (const who of [as.viewer, as.nonMember]) {
      const refused = await session(who);
      expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    }
    // The session's owner counts, also when an admin creates it.
    expect((await session(as.admin, 'vic')).status).toBe(403);
    expect((await session(as.admin, 'edna')).status).toBe(201);
    await putMember(ids.clusterId, 'vic', 'editor').expect(200);
    expect((await session(as.viewer)).status).toBe(201);
    await putMember(ids.clusterId, 'vic', 'viewer').expect(200);
  });

  it('lets an owner or an admin delete a cluster, refusing its other members and hiding it from others', async () => {
    const other = await request(t.url)
      .post('/v1/clusters')
      .set(as.owner)
      .send({ ...valid, name: 'to-delete' })
      .expect(201);
    const id = other.body.clusterId as string;
    await putMember(id, 'vic', 'viewer').expect(200);
    await putMember(id, 'edna', 'editor').expect(200);
    const del = (who: Who) => request(t.url).delete(`/v1/clusters/${id}`).set(as[who]);
    const before = (await events()).length;
    for (const [who, status] of [
      ['viewer', 403],
      ['editor', 403],
      ['auditor', 403],
      ['nonMember', 404],
    ] as const) {
      expect({ who, status: (await del(who)).status }).toEqual({ who, status });
    }
    expect((await events()).length).toBe(before);
    expect((await del('owner')).status).toBe(202);
    expect((await del('admin')).status).toBe(202); // deleting already: the running operation
  });
});
