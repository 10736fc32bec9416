import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { runningCluster } from '../support/clusters';
import { eventually, gpuNode, report } from '../support/reports';
import { QueryBus } from '@nestjs/cqrs';
import { LiveMeshesOf } from '../../apps/control-plane/src/clusters';
import { MESH_CONNECTOR, SimulatedMeshConnector } from '../../apps/control-plane/src/provisioner';

describe('Cluster Mesh requests over HTTP', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let auditor: Record<string, string>;
  let mesh: SimulatedMeshConnector;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await startApp();
    admin = await t.auth('root', ['admin']);
    auditor = await t.auth('audit', ['auditor']);
    mesh = t.app.get<SimulatedMeshConnector>(MESH_CONNECTOR);
    mesh.delayMs = 100;
    const blocks: Record<string, [string, string]> = {
      a: ['10.1.0.0/16', '10.101.0.0/16'],
      b: ['10.2.0.0/16', '10.102.0.0/16'],
      c: ['10.3.0.0/16', '10.103.0.0/16'],
      // d's pod block lies inside a's: d may mesh with b only while a is not meshed with b.
      d: ['10.1.128.0/17', '10.104.0.0/16'],
    };
    for (const [name, [podCidr, serviceCidr]] of Object.entries(blocks)) {
      ids[name] = await runningCluster(t.url, admin, {
        name: `mesh-${name}`,
        podCidr,
        serviceCidr,
      });
    }
  });
  afterAll(async () => t.close());

  const open = (from: string, to: string, who = admin) =>
    request(t.url)
      .post('/v1/mesh-requests')
      .set(who)
      .send({ fromClusterId: ids[from], toClusterId: ids[to] });
  const act = (id: string, verb: string, body: object = {}, who = admin) =>
    request(t.url).post(`/v1/mesh-requests/${id}/${verb}`).set(who).send(body);
  const eventsOf = async (id: string) =>
    (await request(t.url).get(`/v1/streams/mesh-${id}`).set(auditor)).body.events as Array<{
      type: string;
    }>;

  it('opens a request pending, recording who asked', async () => {
    const res = await open('a', 'b');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      meshRequestId: expect.any(String),
      fromClusterId: ids.a,
      toClusterId: ids.b,
      status: 'pending',
      requestedBy: 'root',
      history: [{ status: 'pending', by: 'root', reason: null, at: expect.any(String) }],
    });
    const got = await request(t.url)
      .get(`/v1/mesh-requests/${res.body.meshRequestId}`)
      .set(auditor);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('refuses a second live request for the pair, either way round, changing nothing', async () => {
    const before = (await request(t.url).get('/v1/events?limit=1000').set(auditor)).body.events
      .length;
    for (const [from, to] of [
      ['a', 'b'],
      ['b', 'a'],
    ]) {
      const res = await open(from, to);
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('mesh_exists');
    }
    const after = (await request(t.url).get('/v1/events?limit=1000').set(auditor)).body.events
      .length;
    expect(after).toBe(before);
  });

  it('refuses an overlap with a cluster already meshed with either side, naming both', async () => {
    // a–b is pending: d–b would put d's pods and a's in one mesh.
    const res = await open('d', 'b');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('cidr_overlap');
    expect(res.body.error.details).toEqual({
      clusters: [ids.d, ids.a],
      blocks: [
        { clusterId: ids.d, field: 'podCidr', cidr: '10.1.128.0/17' },
        { clusterId: ids.a, field: 'podCidr', cidr: '10.1.0.0/16' },
      ],
    });
    // With c, nothing overlaps.
    expect((await open('d', 'c')).status).toBe(201);
  });

  it('refuses a request whose side is meshed with a cluster overlapping the other side', async () => {
    const ac = await open('a', 'c'); // c is meshed with d (pending), whose pods lie in a's
    expect(ac.status).toBe(409);
    expect(ac.body.error.code).toBe('cidr_overlap');
  });

  it('checks again at approval: an overlap that appeared since the request is refused', async () => {
    const more: Record<string, [string, string]> = {
      p: ['10.11.0.0/16', '10.111.0.0/16'],
      q: ['10.12.0.0/16', '10.112.0.0/16'],
      r: ['10.13.0.0/16', '10.113.0.0/16'],
      s: ['10.11.128.0/17', '10.114.0.0/16'], // inside p's pods
    };
    for (const [name, [podCidr, serviceCidr]] of Object.entries(more)) {
      ids[name] = await runningCluster(t.url, admin, {
        name: `mesh-${name}`,
        podCidr,
        serviceCidr,
      });
    }
    expect((await open('p', 'q')).status).toBe(201);
    const rq = await open('r', 'q');
    expect(rq.status).toBe(201);
    expect((await open('s', 'r')).status).toBe(201); // s meets r and q, not p
    const approve = await act(rq.body.meshRequestId, 'approve');
    expect(approve.status).toBe(409);
    expect(approve.body.error.code).toBe('cidr_overlap');
    expect(approve.body.error.details.clusters.sort()).toEqual([ids.p, ids.s].sort());
    const still = await request(t.url).get(`/v1/mesh-requests/${rq.body.meshRequestId}`).set(admin);
    expect(still.body.status).toBe('pending');
    expect(await eventsOf(rq.body.meshRequestId)).toHaveLength(1);
  });

  it('moves by the rules and keeps who and why in the history; other moves are 409', async () => {
    mesh.delayMs = 1000; // the connect stays under way while the request is cancelled
    const { meshRequestId: id } = (
      await request(t.url).get('/v1/mesh-requests').query({ clusterId: ids.a }).set(admin)
    ).body.items[0];
    const approved = await act(id, 'approve', { reason: 'shared inference' });
    expect(approved.status).toBe(200);
    const approvedLine = approved.body.history.find(
      (h: { status: string }) => h.status === 'approved',
    );
    expect(approvedLine).toMatchObject({
      status: 'approved',
      by: 'root',
      reason: 'shared inference',
    });
    for (const verb of ['reject', 'disconnect']) {
      const refused = await act(id, verb);
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('invalid_transition');
    }
    const cancelled = await act(id, 'cancel', { reason: 'not needed' });
    expect(cancelled.status).toBe(200);
    const cancelLine = cancelled.body.history.find(
      (h: { status: string }) => h.status === 'cancelling',
    );
    expect(cancelLine).toMatchObject({
      status: 'cancelling',
      by: 'root',
      reason: 'not needed',
    });
    const done = await eventually(async () => {
      const res = await request(t.url).get(`/v1/mesh-requests/${id}`).set(admin);
      return res.body.status === 'cancelled' ? res.body : null;
    });
    // The connect that was under way answered after the cancel: it moved nothing.
    expect(done.history.map((h: { status: string }) => h.status)).toEqual([
      'pending',
      'approved',
      'connecting',
      'cancelling',
      'cancelled',
    ]);
    mesh.delayMs = 100;
  });

  it('lists by cluster (either end) and status, newest first', async () => {
    const byD = (
      await request(t.url).get('/v1/mesh-requests').query({ clusterId: ids.d }).set(auditor)
    ).body;
    expect(byD.items.map((m: { fromClusterId: string }) => m.fromClusterId)).toEqual([ids.d]);
    const pending = (
      await request(t.url).get('/v1/mesh-requests').query({ status: 'pending' }).set(admin)
    ).body;
    expect(pending.items.every((m: { status: string }) => m.status === 'pending')).toBe(true);
    const bad = await request(t.url).get('/v1/mesh-requests').query({ status: 'maybe' }).set(admin);
    expect(bad.status).toBe(400);
  });

  it('answers 400 for a mesh with itself or a malformed id, 404 for an unknown cluster or request', async () => {
    expect((await open('a', 'a')).status).toBe(400);
    const unknown = await request(t.url)
      .post('/v1/mesh-requests')
      .set(admin)
      .send({ fromClusterId: ids.a, toClusterId: 'nowhere' });
    expect(unknown.status).toBe(404);
    expect((await request(t.url).get('/v1/mesh-requests/nope').set(admin)).status).toBe(400);
    const missing = await request(t.url)
      .get('/v1/mesh-requests/00000000-0000-4000-8000-000000000000')
      .set(admin);
    expect(missing.status).toBe(404);
  });

  describe('the link, through the simulated provisioner', () => {
    const settled = (id: string, status: string) =>
      eventually(async () => {
        const res = await request(t.url).get(`/v1/mesh-requests/${id}`).set(admin);
        return res.body.status === status ? res.body : null;
      });

    it('connects an approved request, then disconnects it, each move in the history', async () => {
      const { meshRequestId: id } = (await open('b', 'c')).body;
      expect((await act(id, 'approve')).status).toBe(200);
      const connected = await settled(id, 'connected');
      expect(mesh.links.has(id)).toBe(true);
      expect(
        connected.history.map((h: { status: string; by: string }) => [h.status, h.by]),
      ).toEqual([
        ['pending', 'root'],
        ['approved', 'root'],
        ['connecting', 'system'],
        ['connected', 'system'],
      ]);
      expect((await act(id, 'cancel')).status).toBe(409); // cancel is before connected only
      expect((await act(id, 'disconnect', { reason: 'project over' })).body.status).toBe(
        'disconnecting',
      );
      await settled(id, 'disconnected');
      expect(mesh.links.has(id)).toBe(false);
      // Each link was an operation on the request's from cluster, with its one step.
      for (const [type, step] of [
        ['connect_mesh', 'connect'],
        ['disconnect_mesh', 'disconnect'],
      ]) {
        const ops = await eventually(async () => {
          const res = await request(t.url)
            .get('/v1/operations')
            .query({ clusterId: ids.b, type })
            .set(admin);
          const items = res.body.items as Array<{ status: string; reason: string }>;
          return items.find((o) => o.reason.includes(id) && o.status === 'succeeded') ?? null;
        });
        expect(ops).toMatchObject({
          type,
          status: 'succeeded',
          steps: [{ name: step, status: 'succeeded' }],
        });
      }
    });

    it('fails a request whose connect the provisioner could not make, with its reason', async () => {
      mesh.failNext('connect', 'peering refused by the far side');
      const { meshRequestId: id } = (await open('b', 'c')).body;
      await act(id, 'approve');
      const failed = await settled(id, 'failed');
      expect(failed.history.at(-1)).toMatchObject({
        status: 'failed',
        by: 'system',
        reason: 'peering refused by the far side',
      });
      const op = await eventually(async () => {
        const res = await request(t.url)
          .get('/v1/operations')
          .query({ clusterId: ids.b, type: 'connect_mesh' })
          .set(admin);
        return (res.body.items as Array<{ reason: string; status: string }>).find(
          (o) => o.reason.includes(id) && o.status === 'failed',
        );
      });
      expect(op).toMatchObject({ error: 'peering refused by the far side' });
      // A failed request holds nothing: the pair may ask again.
      expect((await open('c', 'b')).status).toBe(201);
    });
  });

  it('takes a deleted cluster’s meshes down first: connected ones disconnected, others cancelled', async () => {
    const more: Record<string, [string, string]> = {
      x: ['10.31.0.0/16', '10.131.0.0/16'],
      y: ['10.32.0.0/16', '10.132.0.0/16'],
      z: ['10.33.0.0/16', '10.133.0.0/16'],
    };
    for (const [name, [podCidr, serviceCidr]] of Object.entries(more)) {
      ids[name] = await runningCluster(t.url, admin, {
        name: `mesh-${name}`,
        podCidr,
        serviceCidr,
      });
    }
    const xy = (await open('x', 'y')).body.meshRequestId;
    await act(xy, 'approve');
    const status = (id: string, want: string) =>
      eventually(async () => {
        const res = await request(t.url).get(`/v1/mesh-requests/${id}`).set(admin);
        return res.body.status === want ? res.body : null;
      });
    await status(xy, 'connected');
    const xz = (await open('x', 'z')).body.meshRequestId; // pending
    const live = () => t.app.get(QueryBus).execute(new LiveMeshesOf(ids.x));
    expect(await live()).toBe(2);
    const moved = await request(t.url)
      .post(`/v1/clusters/${ids.x}/transitions`)
      .set(admin)
      .send({ to: 'deleting' });
    expect(moved.status).toBe(200);
    const down = await status(xy, 'disconnected');
    expect(
      down.history.find((h: { status: string }) => h.status === 'disconnecting'),
    ).toMatchObject({
      by: 'system',
      reason: `cluster ${ids.x} is being deleted`,
    });
    await status(xz, 'cancelled');
    expect(await live()).toBe(0);
  });

  describe('a cluster adopted from reports', () => {
    it('is cidrs_unknown until an admin sets its blocks, which are checked against its meshes', async () => {
      const operator = await t.auth('op', ['operator'], ['adopted-1']);
      await request(t.url)
        .post('/v1/inventory/reports')
        .set(operator)
        .send(report('adopted-1', [gpuNode('adopted-1-gpu-1')]))
        .expect(200);
      await eventually(
        async () => (await request(t.url).get('/v1/clusters/adopted-1').set(admin)).status === 200,
      );
      ids.adopted = 'adopted-1';
      const unknown = await open('adopted', 'b');
      expect([unknown.status, unknown.body.error.code]).toEqual([409, 'cidrs_unknown']);
      expect(unknown.body.error.details).toEqual({ clusterId: 'adopted-1' });
      const network = (body: object, who = admin) =>
        request(t.url).put('/v1/clusters/adopted-1/network').set(who).send(body);
      // Not an admin; malformed; pod and service overlapping: refused, nothing changes.
      expect(
        (await network({ podCidr: '10.41.0.0/16', serviceCidr: '10.141.0.0/16' }, auditor)).status,
      ).toBe(403);
      expect(
        (await network({ podCidr: '10.41.0.1/16', serviceCidr: '10.141.0.0/16' })).status,
      ).toBe(400);
      const clash = await network({ podCidr: '10.41.0.0/16', serviceCidr: '10.41.128.0/17' });
      expect(clash.body.error.details.fields[0].field).toBe('serviceCidr');
      expect(
        (await network({ podCidr: '10.41.0.0/16', serviceCidr: '10.141.0.0/16' })).body,
      ).toEqual({
        clusterId: 'adopted-1',
        podCidr: '10.41.0.0/16',
        serviceCidr: '10.141.0.0/16',
      });
      const opened = await open('adopted', 'b');
      expect(opened.status).toBe(201);
      // b is meshed with it now: blocks overlapping b's are refused, naming both.
      const overlap = await network({ podCidr: '10.2.0.0/20', serviceCidr: '10.141.0.0/16' });
      expect([overlap.status, overlap.body.error.code]).toEqual([409, 'cidr_overlap']);
      expect(overlap.body.error.details.clusters).toEqual(['adopted-1', ids.b]);
      const view = (await request(t.url).get('/v1/clusters/adopted-1').set(admin)).body;
      expect([view.podCidr, view.serviceCidr]).toEqual(['10.41.0.0/16', '10.141.0.0/16']);
    });
  });
});
