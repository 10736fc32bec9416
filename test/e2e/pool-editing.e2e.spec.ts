import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { runningCluster } from '../support/clusters';
import { eventually, gpuNode, cpuNode, report } from '../support/reports';

type Operation = {
  operationId: string;
  type: string;
  status: string;
  clusterId: string;
  poolId: string | null;
  desiredSize: number | null;
  createdAt: string;
};
type Pool = {
  poolId: string;
  size: number;
  autoscaling: Record<string, unknown> | null;
  access: { tenants: string[] };
  operation: { operationId: string; type: string } | null;
};

const CLUSTER = {
  name: 'editing',
  k8sVersion: '1.30.4',
  podCidr: '10.244.0.0/16',
  serviceCidr: '10.96.0.0/12',
};

describe('node-pool editing, GPU types, cluster states and the operations list', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let clusterId: string;
  beforeAll(async () => {
    t = await startApp({ OPERATION_DEADLINE_SEC: '60' });
    admin = await t.auth('root', ['admin']);
    alice = await t.auth('alice', ['user']);
    bob = await t.auth('bob', ['user']);
    clusterId = await runningCluster(t.url, admin, CLUSTER);
    // Its pools are its owners' and editors' unless their access says otherwise (API.md v1.1).
    await request(t.url)
      .put(`/v1/clusters/${clusterId}/members/alice`)
      .set(admin)
      .send({ role: 'editor' })
      .expect(200);
  });
  afterAll(async () => t.close());

  const createPool = async (cluster: string, body: object): Promise<Pool> =>
    (await request(t.url).post(`/v1/clusters/${cluster}/node-pools`).set(admin).send(body))
      .body as Pool;
  const patch = (poolId: string, body: unknown) =>
    request(t.url)
      .patch(`/v1/node-pools/${poolId}`)
      .set(admin)
      .send(body as object);
  const pool = async (poolId: string): Promise<Pool> =>
    (await request(t.url).get(`/v1/node-pools/${poolId}`).set(admin)).body as Pool;
  const finished = async (operationId: string): Promise<Operation> =>
    (await eventually(async () => {
      const op = (await request(t.url).get(`/v1/operations/${operationId}`).set(admin))
        .body as Operation;
      return ['succeeded', 'failed', 'timeout'].includes(op.status) ? op : null;
    }, 30_000)) as Operation;
  const nodesOf = async (poolId: string): Promise<Array<{ nodeId: string }>> =>
    (await request(t.url).get(`/v1/nodes?poolId=${poolId}`).set(admin)).body.items;
  const scale = (poolId: string, desiredSize: number) =>
    request(t.url).post(`/v1/node-pools/${poolId}/scale`).set(admin).send({ desiredSize });
  const session = (who: Record<string, string>, body: object) =>
    request(t.url).post('/v1/sessions').set(who).send(body);

  it('refuses an empty, unknown or out-of-bounds edit with 400 naming the field, an unknown pool 404', async () => {
    const p = await createPool(clusterId, { name: 'bad-edits', kind: 'cpu' });
    const refusals: Array<[unknown, string]> = [
      [{}, 'autoscaling'],
      [{ nope: 1 }, 'nope'],
      [{ autoscaling: null }, 'autoscaling'],
      [{ access: null, autoscaling: { min: 0, max: 1 } }, 'access'],
      [{ autoscaling: { min: 3, max: 2 } }, 'autoscaling.min'],
      [{ autoscaling: { min: 1 } }, 'autoscaling.max'],
      [{ autoscaling: { min: 0, max: 0 } }, 'autoscaling.max'],
      [{ autoscaling: { enabled: 'yes', min: 0, max: 1 } }, 'autoscaling.enabled'],
      [{ access: { tenants: 'alice' } }, 'access.tenants'],
    ];
    for (const [body, field] of refusals) {
      const res = await patch(p.poolId, body);
      expect([body, res.status, res.body.error?.code]).toEqual([body, 400, 'validation_failed']);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    expect((await pool(p.poolId)).autoscaling).toBeNull();
    const unknown = await patch('00000000-0000-5000-8000-000000000000', {
      access: { tenants: [] },
    });
    expect(unknown.status).toBe(404);
  });

  it('keeps the pool within [min, max]: raising min scales out at once, lowering max scales in, and it turns off and on', async () => {
    const p = await createPool(clusterId, { name: 'bounded', kind: 'cpu' });
    const raised = await patch(p.poolId, { autoscaling: { min: 2, max: 3 } });
    expect(raised.status).toBe(200);
    expect(raised.body.autoscaling).toEqual({
      enabled: true,
      min: 2,
      max: 3,
      queueWaitSec: 60,
      idleCooldownSec: 600,
    });
    // The scale operation started by the edit is in the answer.
    expect(raised.body.operation).toMatchObject({ type: 'scale_node_pool' });
    const out = await finished(raised.body.operation.operationId);
    expect(out).toMatchObject({ status: 'succeeded', desiredSize: 2 });
    expect(await nodesOf(p.poolId)).toHaveLength(2);

    const lowered = await patch(p.poolId, { autoscaling: { min: 1, max: 1 } });
    expect(lowered.status).toBe(200);
    expect(lowered.body.operation).toMatchObject({ type: 'scale_node_pool' });
    expect(await finished(lowered.body.operation.operationId)).toMatchObject({
      status: 'succeeded',
      desiredSize: 1,
    });
    expect(await nodesOf(p.poolId)).toHaveLength(1);

    // Off: the bounds are kept but no longer held; a manual scale beyond max is taken.
    const off = await patch(p.poolId, { autoscaling: { enabled: false } });
    expect([off.status, off.body.autoscaling]).toMatchObject([
      200,
      { enabled: false, min: 1, max: 1 },
    ]);
    expect(off.body.operation).toBeNull();
    const beyond = await scale(p.poolId, 3);
    expect(beyond.status).toBe(202);
    expect(await finished(beyond.body.operationId)).toMatchObject({ status: 'succeeded' });
    expect(await nodesOf(p.poolId)).toHaveLength(3);

    // On again with the kept bounds: above max, so it scales in at once.
    const on = await patch(p.poolId, { autoscaling: { enabled: true } });
    expect(on.body.autoscaling).toMatchObject({ enabled: true, min: 1, max: 1 });
    expect(on.body.operation).toMatchObject({ type: 'scale_node_pool' });
    expect(await finished(on.body.operation.operationId)).toMatchObject({
      status: 'succeeded',
      desiredSize: 1,
    });
    expect((await pool(p.poolId)).size).toBe(1);
  });

  it('takes a node out of its pool with poolId null; not while an operation runs on the pool', async () => {
    const p = await createPool(clusterId, { name: 'leaving', kind: 'cpu' });
    expect(await finished((await scale(p.poolId, 2)).body.operationId)).toMatchObject({
      status: 'succeeded',
    });
    const [first] = await nodesOf(p.poolId);
    const leave = (nodeId: string) =>
      request(t.url).put(`/v1/nodes/${nodeId}/pool`).set(admin).send({ poolId: null });

    const growing = await scale(p.poolId, 3);
    expect(growing.status).toBe(202);
    const held = await leave(first.nodeId);
    expect([held.status, held.body.error.code]).toEqual([409, 'operation_in_progress']);
    expect(held.body.error.details).toMatchObject({ operationId: growing.body.operationId });
    await finished(growing.body.operationId);

    const left = await leave(first.nodeId);
    expect([left.status, left.body.poolId, left.body.nodeId]).toEqual([200, null, first.nodeId]);
    // A node in no pool is answered as it is.
    const again = await leave(first.nodeId);
    expect([again.status, again.body.poolId]).toEqual([200, null]);
    expect((await pool(p.poolId)).size).toBe(2);
    expect((await nodesOf(p.poolId)).map((n) => n.nodeId)).not.toContain(first.nodeId);
    const bad = await request(t.url).put(`/v1/nodes/${first.nodeId}/pool`).set(admin).send({});
    expect(bad.status).toBe(400);
    expect((await leave('00000000-0000-5000-8000-000000000000')).status).toBe(404);
  });

  it('applies an access change to the next session', async () => {
    const p = await createPool(clusterId, { name: 'access', kind: 'cpu' });
    expect(await finished((await scale(p.poolId, 1)).body.operationId)).toMatchObject({
      status: 'succeeded',
    });
    const ask = { kind: 'cpu', cpu: 2, memoryGiB: 4, poolId: p.poolId };
    const open = await session(alice, ask);
    expect([open.status, open.body.status]).toEqual([201, 'running']);

    const closed = await patch(p.poolId, { access: { tenants: ['bob', 'bob'] } });
    expect([closed.status, closed.body.access]).toEqual([200, { tenants: ['bob'] }]);
    const refused = await session(alice, ask);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    const bobs = await session(bob, ask);
    expect([bobs.status, bobs.body.status]).toEqual([201, 'running']);

    await patch(p.poolId, { access: { tenants: [] } }).expect(200);
    expect((await session(alice, ask)).body.status).toBe('running');
  });

  it('lists the five GPU types of the catalog to any caller', async () => {
    const res = await request(t.url).get('/v1/gpu-types').set(alice);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      { gpuType: 'L40S', vcpu: 16, memoryGiB: 64, gpuMemoryGiB: 48, mig: null },
      { gpuType: 'HPC_GPU', vcpu: 32, memoryGiB: 128, gpuMemoryGiB: 80, mig: null },
      {
        gpuType: 'MIG_1g',
        vcpu: 4,
        memoryGiB: 16,
        gpuMemoryGiB: 10,
        mig: { profile: '1g.10gb', computeSlices: 1 },
      },
      {
        gpuType: 'MIG_2g',
        vcpu: 8,
        memoryGiB: 32,
        gpuMemoryGiB: 20,
        mig: { profile: '2g.20gb', computeSlices: 2 },
      },
      {
        gpuType: 'MIG_3g',
        vcpu: 12,
        memoryGiB: 48,
        gpuMemoryGiB: 40,
        mig: { profile: '3g.40gb', computeSlices: 3 },
      },
    ]);
    const operator = await t.auth('op', ['operator'], ['c1']);
    expect((await request(t.url).get('/v1/gpu-types').set(operator)).status).toBe(200);
    expect((await request(t.url).get('/v1/gpu-types')).status).toBe(401);
  });

  it('refuses a GPU pool resize off its type shape with 409 gpu_shape_mismatch', async () => {
    const p = await createPool(clusterId, {
      name: 'l40s-shape',
      kind: 'gpu',
      gpuType: 'L40S',
      gpusPerNode: 2,
    });
    const resize = (body: object) =>
      request(t.url).post(`/v1/node-pools/${p.poolId}/resize`).set(admin).send(body);
    const off = await resize({ cpu: 24 });
    expect([off.status, off.body.error.code]).toEqual([409, 'gpu_shape_mismatch']);
    expect(off.body.error.details).toMatchObject({
      gpuType: 'L40S',
      allowed: [
        { cpu: 16, memoryGiB: 64 },
        { cpu: 32, memoryGiB: 128 },
      ],
    });
    const same = await resize({ cpu: 16, memoryGiB: 64 });
    expect([same.status, same.body.error.code]).toEqual([409, 'resize_no_change']);
    const two = await resize({ cpu: 32, memoryGiB: 128 });
    expect(two.status).toBe(202);
    expect(await finished(two.body.operationId)).toMatchObject({ status: 'succeeded' });
  });

  describe('when the cluster is not running', () => {
    it('refuses a pool on a requested cluster with 409 cluster_not_running', async () => {
      const requested = await request(t.url)
        .post('/v1/clusters')
        .set(admin)
        .send({ ...CLUSTER, name: 'still-requested' })
        .expect(201);
      const id = requested.body.clusterId as string;
      const res = await request(t.url)
        .post(`/v1/clusters/${id}/node-pools`)
        .set(admin)
        .send({ name: 'early', kind: 'cpu' });
      expect([res.status, res.body.error.code]).toEqual([409, 'cluster_not_running']);
      expect(res.body.error.details).toEqual({ clusterId: id, status: 'requested' });
      const pools = await request(t.url).get(`/v1/clusters/${id}/node-pools`).set(admin);
      expect(pools.body.items).toEqual([]);
    });

    it('refuses pool changes and sessions on a failed cluster, places nowhere on it, and takes them again once running', async () => {
      const gate = 'gate-c';
      const reporter = await t.auth('op-gate', ['operator'], [gate]);
      const reported = await request(t.url)
        .post('/v1/inventory/reports')
        .set(reporter)
        .send(report(gate, [gpuNode('gate-gpu-1', 2, 'HPC_GPU'), cpuNode('gate-cpu-1')]))
        .expect(200);
      await eventually(
        async () => (await request(t.url).get(`/v1/clusters/${gate}`).set(admin)).ok,
      );
      const p = await createPool(gate, { name: 'gated', kind: 'gpu', gpuType: 'HPC_GPU' });
      await request(t.url)
        .put(`/v1/nodes/${reported.body.nodes[0].nodeId}/pool`)
        .set(admin)
        .send({ poolId: p.poolId })
        .expect(200);
      const hpc = { kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount: 1 };
      const before = await session(alice, hpc);
      expect(before.body.status).toBe('running');
      await request(t.url).post(`/v1/sessions/${before.body.sessionId}/terminate`).set(alice);
      const pinned = await session(alice, { ...hpc, poolId: p.poolId });
      expect(pinned.body.status).toBe('running');
      await request(t.url)
        .post(`/v1/sessions/${pinned.body.sessionId}/pause`)
        .set(alice)
        .expect(200);

      const move = (to: string) =>
        request(t.url).post(`/v1/clusters/${gate}/transitions`).set(admin).send({ to });
      await move('failed').expect(200);
      const notRunning = {
        code: 'cluster_not_running',
        details: { clusterId: gate, status: 'failed' },
      };
      const refusals = [
        await patch(p.poolId, { access: { tenants: ['alice'] } }),
        await scale(p.poolId, 1),
        await request(t.url)
          .post(`/v1/node-pools/${p.poolId}/resize`)
          .set(admin)
          .send({ cpu: 64, memoryGiB: 256 }),
        await request(t.url).delete(`/v1/node-pools/${p.poolId}`).set(admin),
        await request(t.url)
          .post(`/v1/clusters/${gate}/node-pools`)
          .set(admin)
          .send({ name: 'late', kind: 'cpu' }),
        await session(alice, { ...hpc, poolId: p.poolId }),
        await request(t.url).post(`/v1/sessions/${pinned.body.sessionId}/resume`).set(alice),
      ];
      for (const res of refusals) {
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject(notRunning);
      }
      expect((await pool(p.poolId)).access.tenants).toEqual([]);
      const ops = await request(t.url).get(`/v1/operations?poolId=${p.poolId}`).set(admin);
      expect(ops.body.items).toEqual([]);

      // No pool named: placement leaves the failed cluster's nodes out, so it waits.
      const waiting = await session(alice, hpc);
      expect([waiting.status, waiting.body.status]).toEqual([201, 'queued']);
      await move('running').expect(200);
      await eventually(
        async () =>
          (await request(t.url).get(`/v1/sessions/${waiting.body.sessionId}`).set(alice)).body
            .status === 'running',
        15_000,
      );
    });
  });

  it('counts a report without observedAt as observed when received: a later one dated before changes nothing', async () => {
    const cluster = 'obs-c';
    const reporter = await t.auth('op-obs', ['operator'], [cluster]);
    const send = (observedAt?: string, cpu = 32) =>
      request(t.url)
        .post('/v1/inventory/reports')
        .set(reporter)
        .send(report(cluster, [cpuNode('obs-1', cpu, 128, observedAt ? { observedAt } : {})]));
    const first = await send(undefined, 32);
    expect(first.status).toBe(200);
    const nodeId = first.body.nodes[0].nodeId as string;
    const capacity = async () =>
      (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).body.capacity.cpu;
    // Dated a minute before the first was received: out of order, nothing changes.
    await send(new Date(Date.now() - 60_000).toISOString(), 8).expect(200);
    expect(await capacity()).toBe(32);
    // Dated after it: applied.
    await send(new Date(Date.now() + 1_000).toISOString(), 8).expect(200);
    expect(await capacity()).toBe(8);
  });

  it('lets an auditor read the notifications, and no user', async () => {
    const auditor = await t.auth('audit', ['auditor']);
    const res = await request(t.url).get('/v1/notifications').set(auditor);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.items)).toBe(true);
    expect((await request(t.url).get('/v1/notifications').set(alice)).status).toBe(403);
  });

  it('pages the operations newest first, filtered by cluster, pool, type and status', async () => {
    const auditor = await t.auth('audit', ['auditor']);
    const list = (query: string) => request(t.url).get(`/v1/operations?${query}`).set(auditor);
    const all: Operation[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `clusterId=${clusterId}&type=scale_node_pool&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await list(q);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      all.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(all.length).toBeGreaterThanOrEqual(6);
    expect(new Set(all.map((o) => o.operationId)).size).toBe(all.length);
    for (const op of all) expect(op).toMatchObject({ clusterId, type: 'scale_node_pool' });
    const times = all.map((o) => o.createdAt);
    expect([...times].sort().reverse()).toEqual(times);

    const everything = (await list(`clusterId=${clusterId}&limit=1000`)).body.items as Operation[];
    expect(everything.map((o) => o.type)).toContain('resize_node_pool');
    const succeeded = (await list(`clusterId=${clusterId}&status=succeeded`)).body
      .items as Operation[];
    expect(succeeded.length).toBeGreaterThan(0);
    expect(succeeded.every((o) => o.status === 'succeeded')).toBe(true);
    const one = everything[0];
    const ofPool = (await list(`poolId=${one.poolId}`)).body.items as Operation[];
    expect(ofPool.every((o) => o.poolId === one.poolId)).toBe(true);
    expect(ofPool.map((o) => o.operationId)).toContain(one.operationId);

    const firstPage = await list(`clusterId=${clusterId}&limit=1`);
    for (const [query, field] of [
      ['type=grow_pool', 'type'],
      ['status=done', 'status'],
      ['limit=0', 'limit'],
      ['clusterId=Not_A_Cluster', 'clusterId'],
      ['poolId=nope', 'poolId'],
      ['cursor=garbage', 'cursor'],
      [`status=failed&cursor=${encodeURIComponent(firstPage.body.nextCursor)}`, 'cursor'],
    ]) {
      const res = await list(query);
      expect([query, res.status, res.body.error.code]).toEqual([query, 400, 'validation_failed']);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
  });
});
