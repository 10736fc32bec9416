import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { eventually, gpuNode, report, sleep } from '../support/reports';

type Refusal = { status: number; error: { code: string; message: string; details: object } };

/**
 * Inputs that used to be taken and then go nowhere: a session for a pool it can never run in
 * (it waited forever), GPU fields on a CPU pool (dropped without a word), `"owner": null`, the
 * pools of an unknown cluster. Each is refused with an error envelope and appends nothing.
 */
describe('session and pool input over HTTP', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let operator: Record<string, string>;
  beforeAll(async () => {
    t = await startApp();
    admin = await t.auth('root', ['admin']);
    alice = await t.auth('alice', ['user']);
    bob = await t.auth('bob', ['user']);
    operator = await t.auth('op', ['operator'], ['si1']);
  });
  afterAll(async () => t.close());

  const createPool = (clusterId: string, body: object) =>
    request(t.url).post(`/v1/clusters/${clusterId}/node-pools`).set(admin).send(body);
  const assign = (nodeId: string, poolId: string) =>
    request(t.url).put(`/v1/nodes/${nodeId}/pool`).set(admin).send({ poolId }).expect(200);
  const create = (body: object, auth = alice) =>
    request(t.url).post('/v1/sessions').set(auth).send(body);
  const getSession = (id: string, auth = alice) =>
    request(t.url).get(`/v1/sessions/${id}`).set(auth);

  /** Where the global log ends now (the next page's position), read as an admin. */
  let logCursor = 0;
  const logEnd = async (): Promise<number> => {
    for (;;) {
      const page = await request(t.url)
        .get(`/v1/events?fromPosition=${logCursor}&limit=1000`)
        .set(admin)
        .expect(200);
      if (page.body.events.length === 0) return logCursor;
      logCursor = page.body.nextPosition;
    }
  };
  /** The log once what earlier steps set off (reactors, queue passes) has settled. */
  const quietLogEnd = async (): Promise<number> => {
    let end = await logEnd();
    for (;;) {
      await sleep(150);
      const again = await logEnd();
      if (again === end) return end;
      end = again;
    }
  };
  const eventsFrom = async (from: number) =>
    (await request(t.url).get(`/v1/events?fromPosition=${from}&limit=1000`).set(admin).expect(200))
      .body.events as Array<{ type: string; streamId: string }>;

  /** Sends a request that must be refused with `status` and `code`, and append nothing. */
  const refused = async (
    send: () => Promise<{ status: number; body: { error?: unknown } }>,
    status: number,
    code: string,
  ): Promise<Refusal['error']> => {
    const before = await quietLogEnd();
    const res = await send();
    expect({ status: res.status, body: res.body }).toEqual({
      status,
      body: {
        error: { code, message: expect.any(String), details: expect.any(Object) },
      },
    });
    await sleep(200); // a reactor set off by a wrongly taken request would have appended by now
    expect(await eventsFrom(before)).toEqual([]);
    return (res.body as Refusal).error;
  };

  let gpuPool: { poolId: string };
  let cpuPool: { poolId: string };
  let aliceOnly: { poolId: string };
  let gonePool: { poolId: string };
  let nodeIds: Record<string, string>;

  beforeAll(async () => {
    const res = await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(
        report('si1', [
          gpuNode('mig3-01', 2, 'MIG_3g'),
          gpuNode('mig2-01', 1, 'MIG_2g'),
          gpuNode('mig2-02', 1, 'MIG_2g'),
        ]),
      )
      .expect(200);
    nodeIds = Object.fromEntries(
      res.body.nodes.map((n: { hostname: string; nodeId: string }) => [n.hostname, n.nodeId]),
    );
    await eventually(async () => (await request(t.url).get('/v1/clusters/si1').set(admin)).ok);
    gpuPool = (await createPool('si1', { name: 'l40s', kind: 'gpu', gpuType: 'L40S' }).expect(201))
      .body;
    cpuPool = (await createPool('si1', { name: 'cpu', kind: 'cpu' }).expect(201)).body;
    aliceOnly = (
      await createPool('si1', {
        name: 'alice-l40s',
        kind: 'gpu',
        gpuType: 'L40S',
        access: { tenants: ['alice'] },
      }).expect(201)
    ).body;
    gonePool = (await createPool('si1', { name: 'gone', kind: 'gpu', gpuType: 'L40S' }).expect(201))
      .body;
    await deletePool(gonePool.poolId);
  });

  const deletePool = async (poolId: string): Promise<void> => {
    const op = await request(t.url).delete(`/v1/node-pools/${poolId}`).set(admin).expect(202);
    await eventually(async () => {
      const got = await request(t.url).get(`/v1/operations/${op.body.operationId}`).set(admin);
      return got.body.status === 'succeeded';
    }, 20_000);
    const pool = await request(t.url).get(`/v1/node-pools/${poolId}`).set(admin);
    expect(pool.body.status).toBe('deleted');
  };

  describe('POST /v1/sessions with a poolId', () => {
    const l40s = { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 };

    it('refuses an empty poolId with 400 naming poolId', async () => {
      const error = await refused(() => create({ ...l40s, poolId: '' }), 400, 'validation_failed');
      expect(error.details).toMatchObject({
        fields: [expect.objectContaining({ field: 'poolId' })],
      });
    });

    it.each([
      ['a string that is no pool id', 'no-such-pool'],
      ['a well-formed id of no pool', randomUUID()],
    ])('refuses %s with 404 naming the pool', async (_what, poolId) => {
      const error = await refused(() => create({ ...l40s, poolId }), 404, 'not_found');
      expect(error.message).toContain(poolId);
    });

    it('refuses a deleted pool with 404 naming the pool', async () => {
      const error = await refused(
        () => create({ ...l40s, poolId: gonePool.poolId }),
        404,
        'not_found',
      );
      expect(error.message).toContain(gonePool.poolId);
    });

    it('refuses a pool of the other kind, or of another GPU model, with 409 pool_mismatch', async () => {
      const gpuInCpu = await refused(
        () => create({ ...l40s, poolId: cpuPool.poolId }),
        409,
        'pool_mismatch',
      );
      expect(gpuInCpu.details).toEqual({ poolId: cpuPool.poolId, poolKind: 'cpu', gpuType: null });
      const cpuInGpu = await refused(
        () => create({ kind: 'cpu', cpu: 2, memoryGiB: 4, poolId: gpuPool.poolId }),
        409,
        'pool_mismatch',
      );
      expect(cpuInGpu.details).toEqual({
        poolId: gpuPool.poolId,
        poolKind: 'gpu',
        gpuType: 'L40S',
      });
      const otherModel = await refused(
        () => create({ kind: 'gpu', gpuModel: 'MIG_1g', gpuCount: 1, poolId: gpuPool.poolId }),
        409,
        'pool_mismatch',
      );
      expect(otherModel.details).toEqual({
        poolId: gpuPool.poolId,
        poolKind: 'gpu',
        gpuType: 'L40S',
      });
    });

    it('refuses a pool not open to the owner with 403, for a user and for an admin acting for one', async () => {
      const closed = await refused(
        () => create({ ...l40s, poolId: aliceOnly.poolId }, bob),
        403,
        'forbidden',
      );
      // The id bob sent, never the pool's name.
      expect(closed.message).toBe(`node pool ${aliceOnly.poolId} is not open to bob`);
      expect(JSON.stringify(closed)).not.toContain('alice-l40s');
      await refused(
        () => create({ ...l40s, poolId: aliceOnly.poolId, owner: 'bob' }, admin),
        403,
        'forbidden',
      );
      const allowed = await create({ ...l40s, poolId: aliceOnly.poolId });
      expect(allowed.status).toBe(201);
      expect(allowed.body).toMatchObject({ owner: 'alice', request: { poolId: aliceOnly.poolId } });
    });

    it('takes a pool of the kind and model open to the owner', async () => {
      const res = await create({ ...l40s, poolId: gpuPool.poolId }, bob);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ status: 'queued', request: { poolId: gpuPool.poolId } });
    });
  });

  describe('POST /v1/sessions/{id}/resume when the pool went while the session was paused', () => {
    it('refuses with 409 pool_not_active and leaves the session paused', async () => {
      const pool = (
        await createPool('si1', { name: 'mig2-short', kind: 'gpu', gpuType: 'MIG_2g' }).expect(201)
      ).body;
      const other = (
        await createPool('si1', { name: 'mig2-long', kind: 'gpu', gpuType: 'MIG_2g' }).expect(201)
      ).body;
      await assign(nodeIds['mig2-01'], pool.poolId);
      const s = await create({ kind: 'gpu', gpuModel: 'MIG_2g', gpuCount: 1, poolId: pool.poolId });
      expect(s.body).toMatchObject({ status: 'running', nodeId: nodeIds['mig2-01'] });
      const paused = await request(t.url)
        .post(`/v1/sessions/${s.body.sessionId}/pause`)
        .set(alice)
        .expect(200);
      expect(paused.body.status).toBe('paused');
      // The node moves on, the pool goes (with no node left it is quick).
      await assign(nodeIds['mig2-01'], other.poolId);
      await deletePool(pool.poolId);
      const error = await refused(
        () => request(t.url).post(`/v1/sessions/${s.body.sessionId}/resume`).set(alice).send(),
        409,
        'pool_not_active',
      );
      expect(error.details).toEqual({ poolId: pool.poolId, status: 'deleted' });
      expect((await getSession(s.body.sessionId)).body.status).toBe('paused');
    });
  });

  describe('a session pinned to a pool that is deleted', () => {
    it('is terminated (admin_force) once the pool is gone, instead of waiting forever', async () => {
      const doomed = (
        await createPool('si1', { name: 'hpc-doomed', kind: 'gpu', gpuType: 'HPC_GPU' }).expect(201)
      ).body;
      await createPool('si1', { name: 'hpc-kept', kind: 'gpu', gpuType: 'HPC_GPU' }).expect(201);
      const pinned = await create({
        kind: 'gpu',
        gpuModel: 'HPC_GPU',
        gpuCount: 1,
        poolId: doomed.poolId,
      });
      expect(pinned.body.status).toBe('queued');
      await deletePool(doomed.poolId);
      const ended = await eventually(async () => {
        const got = (await getSession(pinned.body.sessionId)).body;
        return got.status === 'terminated' ? got : null;
      }, 3_000);
      expect(ended.terminationReason).toBe('admin_force');
      // Queued all along: nothing was billed.
      const records = await request(t.url)
        .get(`/v1/billing/records?sessionId=${pinned.body.sessionId}`)
        .set(alice);
      expect(records.body).toMatchObject({ items: [], total: 0 });
    });
  });

  describe('a session queued for a pool', () => {
    it('is placed as soon as a fitting node joins the pool, before a later request takes it', async () => {
      const empty = (
        await createPool('si1', { name: 'mig3-empty', kind: 'gpu', gpuType: 'MIG_3g' }).expect(201)
      ).body;
      const target = (
        await createPool('si1', { name: 'mig3', kind: 'gpu', gpuType: 'MIG_3g' }).expect(201)
      ).body;
      // Ahead in the queue: a smaller session of the model for a pool that has no node.
      const ahead = await create(
        { kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 1, poolId: empty.poolId },
        bob,
      );
      expect(ahead.body.status).toBe('queued');
      const waiting = await create({
        kind: 'gpu',
        gpuModel: 'MIG_3g',
        gpuCount: 2,
        poolId: target.poolId,
      });
      expect(waiting.body.status).toBe('queued');
      await sleep(300); // the passes the requests set off have come and gone
      const joinedAt = Date.now();
      await assign(nodeIds['mig3-01'], target.poolId);
      const placed = await eventually(async () => {
        const s = await getSession(waiting.body.sessionId);
        return s.body.status === 'running' ? s.body : null;
      }, 2_000);
      expect(placed.nodeId).toBe(nodeIds['mig3-01']);
      expect(Date.now() - joinedAt).toBeLessThan(2_000);
      const later = await create({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 2 });
      expect(later.body.status).toBe('queued');
      expect((await getSession(ahead.body.sessionId, bob)).body.status).toBe('queued');
    });
  });

  describe('"owner": null in POST /v1/sessions', () => {
    const body = { kind: 'cpu', cpu: 1, memoryGiB: 1, owner: null };
    it('is the caller, for a user', async () => {
      const res = await create(body, alice);
      expect([res.status, res.body.owner]).toEqual([201, 'alice']);
    });
    it('is the caller, for an admin', async () => {
      const res = await create(body, admin);
      expect([res.status, res.body.owner]).toEqual([201, 'root']);
    });
  });

  describe('POST /v1/clusters/{clusterId}/node-pools with the other kind of pool’s fields', () => {
    it.each([
      [{ name: 'p3', kind: 'cpu', gpuType: 'L40S' }, 'gpuType', 'cpu'],
      [{ name: 'p3', kind: 'cpu', gpusPerNode: 2 }, 'gpusPerNode', 'cpu'],
      [{ name: 'p3', kind: 'gpu', gpuType: 'L40S', cpu: 8 }, 'cpu', 'gpu'],
      [{ name: 'p3', kind: 'gpu', gpuType: 'L40S', memoryGiB: 32 }, 'memoryGiB', 'gpu'],
    ])('refuses %j with 400 naming %s', async (body, field, kind) => {
      const error = await refused(() => createPool('si1', body), 400, 'validation_failed');
      expect(error.details).toEqual({
        fields: [{ field, problems: [`not allowed for a ${kind} pool`] }],
      });
    });
  });

  describe('GET /v1/clusters/{clusterId}/node-pools', () => {
    it('is 404 for an unknown cluster, as GET /v1/clusters/{clusterId} is', async () => {
      expect((await request(t.url).get('/v1/clusters/no-such-cluster').set(admin)).status).toBe(
        404,
      );
      const res = await request(t.url).get('/v1/clusters/no-such-cluster/node-pools').set(admin);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({
        code: 'not_found',
        details: { id: 'no-such-cluster' },
      });
    });

    it('lists the pools of a known cluster, none at first', async () => {
      const cluster = await request(t.url)
        .post('/v1/clusters')
        .set(admin)
        .send({
          name: 'empty',
          k8sVersion: '1.30.4',
          podCidr: '10.244.0.0/16',
          serviceCidr: '10.96.0.0/12',
        })
        .expect(201);
      const res = await request(t.url)
        .get(`/v1/clusters/${cluster.body.clusterId}/node-pools`)
        .set(admin);
      expect([res.status, res.body]).toEqual([200, { items: [] }]);
    });
  });
});
