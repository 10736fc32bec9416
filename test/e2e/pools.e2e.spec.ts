import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { cpuNode, eventually, gpuNode, report } from '../support/reports';

describe('node pools over HTTP', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let operator: Record<string, string>;
  beforeAll(async () => {
    t = await startApp();
    admin = await t.auth('root', ['admin']);
    operator = await t.auth('op', ['operator'], ['pc1', 'pc2']);
  });
  afterAll(async () => t.close());

  const nodeIdOf = async (clusterId: string, hostname: string): Promise<string> => {
    const list = await request(t.url).get(`/v1/nodes?clusterId=${clusterId}`).set(admin);
    return list.body.items.find((n: { hostname: string }) => n.hostname === hostname).nodeId;
  };
  const createPool = (clusterId: string, body: object) =>
    request(t.url).post(`/v1/clusters/${clusterId}/node-pools`).set(admin).send(body);
  const assign = (nodeId: string, poolId: string) =>
    request(t.url).put(`/v1/nodes/${nodeId}/pool`).set(admin).send({ poolId });

  beforeAll(async () => {
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(
        report('pc1', [
          gpuNode('l40s-01', 2, 'L40S'),
          gpuNode('l40s-02', 2, 'L40S'),
          gpuNode('mig-01', 2, 'MIG_1g'),
          cpuNode('cpu-01'),
        ]),
      )
      .expect(200);
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('pc2', [gpuNode('far-01', 2, 'L40S')]))
      .expect(200);
    await eventually(async () => (await request(t.url).get('/v1/clusters/pc2').set(admin)).ok);
  });

  it('creates a GPU pool with the catalog shape and lists it', async () => {
    const res = await createPool('pc1', {
      name: 'l40s-a',
      kind: 'gpu',
      gpuType: 'L40S',
      mode: 'shared',
      autoscaling: { min: 0, max: 8 },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      clusterId: 'pc1',
      name: 'l40s-a',
      kind: 'gpu',
      gpuType: 'L40S',
      spec: { cpu: 16, memoryGiB: 64, gpusPerNode: 1 },
      access: { tenants: [] },
      autoscaling: { min: 0, max: 8 },
      status: 'active',
      size: 0,
    });
    const got = await request(t.url).get(`/v1/node-pools/${res.body.poolId}`).set(admin);
    expect(got.body.poolId).toBe(res.body.poolId);
    const list = await request(t.url).get('/v1/clusters/pc1/node-pools').set(admin);
    expect(list.body.items.map((p: { name: string }) => p.name)).toContain('l40s-a');
    expect((await createPool('pc1', { name: 'l40s-a', kind: 'gpu', gpuType: 'L40S' })).status).toBe(
      409,
    );
    expect((await createPool('pc1', { name: 'x', kind: 'gpu' })).status).toBe(400);
    expect((await createPool('nope', { name: 'x', kind: 'cpu' })).status).toBe(404);
    expect(
      (await createPool('pc1', { name: 'y', kind: 'cpu', autoscaling: { min: 3, max: 1 } })).status,
    ).toBe(400);
  });

  it('takes one of several pools created at once under one name, refusing the rest', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `twin-${round}`;
      const answers = await Promise.all(
        [0, 1, 2].map(() => createPool('pc2', { name, kind: 'cpu' })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
      for (const a of answers.filter((x) => x.status === 409))
        expect(a.body.error.code).toBe('pool_name_taken');
      const list = await request(t.url).get('/v1/clusters/pc2/node-pools').set(admin);
      expect(list.body.items.filter((p: { name: string }) => p.name === name)).toHaveLength(1);
    }
  });

  it('moves a node into a pool at once, and refuses other clusters, kinds and models', async () => {
    const pool = (await createPool('pc1', { name: 'l40s-b', kind: 'gpu', gpuType: 'L40S' })).body;
    const cpuPool = (await createPool('pc1', { name: 'cpu-a', kind: 'cpu' })).body;
    const l40s = await nodeIdOf('pc1', 'l40s-01');
    const moved = await assign(l40s, pool.poolId);
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ nodeId: l40s, poolId: pool.poolId });
    expect((await request(t.url).get(`/v1/node-pools/${pool.poolId}`).set(admin)).body.size).toBe(
      1,
    );
    const refusals: Array<[string, string, string]> = [
      [await nodeIdOf('pc1', 'mig-01'), pool.poolId, 'gpu_model_mismatch'],
      [await nodeIdOf('pc1', 'cpu-01'), pool.poolId, 'pool_kind_mismatch'],
      [l40s, cpuPool.poolId, 'pool_kind_mismatch'],
      [await nodeIdOf('pc2', 'far-01'), pool.poolId, 'pool_cluster_mismatch'],
    ];
    for (const [nodeId, poolId, code] of refusals) {
      const res = await assign(nodeId, poolId);
      expect([res.status, res.body.error?.code]).toEqual([409, code]);
    }
    expect((await assign(l40s, '00000000-0000-5000-8000-000000000000')).status).toBe(404);
    expect((await request(t.url).put(`/v1/nodes/${l40s}/pool`).set(admin).send({})).status).toBe(
      400,
    );
  });

  it('takes a node that registers with the fleet/pool label into that pool', async () => {
    const pool = (await createPool('pc1', { name: 'labelled', kind: 'gpu', gpuType: 'HPC_GPU' }))
      .body;
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(
        report('pc1', [
          gpuNode('hpc-01', 1, 'HPC_GPU', {
            labels: { 'fleet/mode': 'shared', 'fleet/pool': pool.poolId },
          }),
          gpuNode('odd-01', 1, 'MIG_2g', {
            labels: { 'fleet/mode': 'shared', 'fleet/pool': pool.poolId },
          }),
        ]),
      )
      .expect(200);
    const hpc = await nodeIdOf('pc1', 'hpc-01');
    await eventually(
      async () =>
        (await request(t.url).get(`/v1/nodes/${hpc}`).set(admin)).body.poolId === pool.poolId,
    );
    const odd = await nodeIdOf('pc1', 'odd-01');
    expect((await request(t.url).get(`/v1/nodes/${odd}`).set(admin)).body.poolId).toBeNull();
  });

  it('places sessions only for the tenants of a restricted pool', async () => {
    const pool = (
      await createPool('pc1', {
        name: 'mig-team',
        kind: 'gpu',
        gpuType: 'MIG_1g',
        access: { tenants: ['alice'] },
      })
    ).body;
    await assign(await nodeIdOf('pc1', 'mig-01'), pool.poolId).expect(200);
    const bob = await t.auth('bob', ['user']);
    const alice = await t.auth('alice', ['user']);
    const denied = await request(t.url)
      .post('/v1/sessions')
      .set(bob)
      .send({ kind: 'gpu', gpuModel: 'MIG_1g', gpuCount: 1 });
    expect(denied.body.status).toBe('queued');
    const allowed = await request(t.url)
      .post('/v1/sessions')
      .set(alice)
      .send({ kind: 'gpu', gpuModel: 'MIG_1g', gpuCount: 1 });
    expect(allowed.body.status).toBe('running');
  });
});
