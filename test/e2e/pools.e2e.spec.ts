import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CommandPipeline } from '@fleet/cqrs';
import { systemContext } from '@fleet/kernel';
import { clusterAggregate } from '../../apps/control-plane/src/clusters/cluster.decider';
import { poolAggregate } from '../../apps/control-plane/src/pools/pool.decider';
import { EventStore } from '@fleet/eventstore/port';
import { EVENT_STORE } from '../../apps/control-plane/src/platform/runtime/tokens';
import { startApp, TestApp } from '../support/app';
import { cpuNode, eventually, gpuNode, report, sleep } from '../support/reports';

/** A cluster adopted from one CPU node's report, with CPU pools of these names (their bodies, in order). */
const adoptedWithCpuPools = async (
  t: TestApp,
  clusterId: string,
  names: string[],
): Promise<Array<{ poolId: string }>> => {
  const admin = await t.auth('root', ['admin']);
  const reporter = await t.auth(`op-${clusterId}`, ['operator'], [clusterId]);
  await request(t.url)
    .post('/v1/inventory/reports')
    .set(reporter)
    .send(report(clusterId, [cpuNode(`${clusterId}-cpu`)]))
    .expect(200);
  await eventually(
    async () => (await request(t.url).get(`/v1/clusters/${clusterId}`).set(admin)).ok,
  );
  const pools: Array<{ poolId: string }> = [];
  for (const name of names) {
    const created = await request(t.url)
      .post(`/v1/clusters/${clusterId}/node-pools`)
      .set(admin)
      .send({ name, kind: 'cpu' })
      .expect(201);
    pools.push(created.body);
  }
  return pools;
};

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

  it('refuses a name with a hyphen at either end, naming that rule', async () => {
    for (const name of ['a-', '-a', '-', 'A', 'a'.repeat(41)]) {
      const res = await createPool('pc1', { name, kind: 'cpu' });
      expect([res.status, res.body.error.details.fields]).toEqual([
        400,
        [
          {
            field: 'name',
            problems: [
              'name must be 1-40 characters of [a-z0-9-], starting and ending with a letter or digit',
            ],
          },
        ],
      ]);
    }
    expect((await createPool('pc1', { name: 'a-1', kind: 'cpu' })).status).toBe(201);
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

  it('names the node by its hostname in pool_emptied when its last GPU node moves to another pool', async () => {
    const from = (
      await createPool('pc1', { name: 'ded-from', kind: 'gpu', gpuType: 'L40S', mode: 'dedicated' })
    ).body;
    const to = (await createPool('pc1', { name: 'ded-to', kind: 'gpu', gpuType: 'L40S' })).body;
    const nodeId = await nodeIdOf('pc1', 'l40s-02');
    await assign(nodeId, from.poolId).expect(200);
    await assign(nodeId, to.poolId).expect(200);
    const note = await eventually(async () => {
      const res = await request(t.url).get('/v1/notifications').set(admin);
      return res.body.items.find(
        (n: { type: string; reason: string }) =>
          n.type === 'pool_emptied' && n.reason.includes(from.poolId),
      );
    });
    expect(note).toMatchObject({ nodeId, hostname: 'l40s-02', clusterId: 'pc1' });
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

    // A node that did not fit when it registered (its cards not reported yet, or another
    // model) joins once a report shows it fits.
    const labels = { 'fleet/mode': 'shared', 'fleet/pool': pool.poolId };
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('pc1', [gpuNode('late-01', 0, 'HPC_GPU', { labels })]))
      .expect(200);
    const late = await nodeIdOf('pc1', 'late-01');
    await sleep(300);
    expect((await request(t.url).get(`/v1/nodes/${late}`).set(admin)).body.poolId).toBeNull();
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(
        report('pc1', [
          gpuNode('late-01', 1, 'HPC_GPU', { labels }),
          gpuNode('odd-01', 1, 'HPC_GPU', { labels }),
        ]),
      )
      .expect(200);
    for (const nodeId of [late, odd]) {
      await eventually(
        async () =>
          (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).body.poolId === pool.poolId,
      );
    }
  });

  it('appends nothing for a pool delete refused because a scale took the pool first, and deletes the other pool', async () => {
    type Event = {
      position: number;
      streamId: string;
      type: string;
      metadata: { correlationId: string };
    };
    const eventsFrom = async (position: number): Promise<Event[]> => {
      const all: Event[] = [];
      for (let from = position; ;) {
        const page = await request(t.url)
          .get(`/v1/events?fromPosition=${from}&limit=1000`)
          .set(admin);
        all.push(...page.body.events);
        if (page.body.events.length < 1000) return all;
        from = page.body.nextPosition;
      }
    };
    const within = <T>(ms: number, p: Promise<T>) =>
      Promise.race([p, new Promise<void>((resolve) => setTimeout(resolve, ms))]);
    // The race the probe found, made to happen every time: the scale's lock on A is held at the
    // store until the delete of A has read A (free) and appended something, or 500 ms passed.
    const store = t.app.get<symbol, EventStore>(EVENT_STORE);
    const append = store.append.bind(store);
    let hold: { correlationId: string; held: () => void; release: Promise<void> } | null = null;
    let delAWrote: (() => void) | null = null;
    let delAId = '';
    store.append = async (streamId, events, expected) => {
      const correlationId = events[0]?.metadata.correlationId;
      if (hold && correlationId === hold.correlationId && streamId.startsWith('pool-')) {
        hold.held();
        await hold.release;
      }
      const result = await append(streamId, events, expected);
      if (correlationId === delAId) delAWrote?.();
      return result;
    };
    const clusters = ['race-0', 'race-1', 'race-2'];
    try {
      for (const clusterId of clusters) {
        const [a, b] = await adoptedWithCpuPools(t, clusterId, ['a', 'b']);
        const head = (await request(t.url).get(`/v1/streams/cluster-${clusterId}`).set(admin)).body
          .events as Event[];
        const since = head[head.length - 1].position;
        const ids = {
          scale: `${clusterId}-scale-a`,
          delA: `${clusterId}-del-a`,
          delB: `${clusterId}-del-b`,
        };
        delAId = ids.delA;
        let release = () => undefined as void;
        const held = new Promise<void>((resolve) => {
          hold = {
            correlationId: ids.scale,
            held: resolve,
            release: new Promise<void>((r) => (release = r)),
          };
        });
        const wrote = new Promise<void>((resolve) => (delAWrote = resolve));
        const scale = request(t.url)
          .post(`/v1/node-pools/${a.poolId}/scale`)
          .set({ ...admin, 'x-correlation-id': ids.scale })
          .send({ desiredSize: 1 })
          .then((r) => r);
        await held;
        const delA = request(t.url)
          .delete(`/v1/node-pools/${a.poolId}`)
          .set({ ...admin, 'x-correlation-id': ids.delA })
          .then((r) => r);
        await within(500, Promise.race([wrote, delA]));
        const delB = request(t.url)
          .delete(`/v1/node-pools/${b.poolId}`)
          .set({ ...admin, 'x-correlation-id': ids.delB })
          .then((r) => r);
        await within(500, delB);
        release();
        hold = null;
        const answers = { scale: await scale, delA: await delA, delB: await delB };
        expect([answers.scale.status, answers.delA.status, answers.delA.body.error?.code]).toEqual([
          202,
          409,
          'operation_in_progress',
        ]);
        // The refused delete appended nothing, anywhere.
        const appended = await eventsFrom(since);
        const byDelA = appended.filter((e) => e.metadata.correlationId === ids.delA);
        expect(byDelA.map((e) => `${e.streamId} ${e.type}`)).toEqual([]);
        // A stays (its scale runs), so B was not the cluster's last pool.
        expect([answers.delB.status, answers.delB.body.error?.code]).toEqual([202, undefined]);
        const poolA = (await request(t.url).get(`/v1/node-pools/${a.poolId}`).set(admin)).body;
        expect([poolA.status, poolA.operation?.type]).toEqual(['active', 'scale_node_pool']);
        const cluster = (await request(t.url).get(`/v1/clusters/${clusterId}`).set(admin)).body;
        expect(cluster.pools.map((p: { poolId: string }) => p.poolId)).toEqual([a.poolId]);
      }
    } finally {
      store.append = append;
    }
  });

  it('keeps one of two pools deleted at once, refusing the other with last_pool and appending nothing for it', async () => {
    const clusters = ['pair-0', 'pair-1', 'pair-2', 'pair-3', 'pair-4'];
    for (const clusterId of clusters) {
      const pools = await adoptedWithCpuPools(t, clusterId, ['a', 'b']);
      const answers = await Promise.all(
        pools.map((p, i) =>
          request(t.url)
            .delete(`/v1/node-pools/${p.poolId}`)
            .set({ ...admin, 'x-correlation-id': `${clusterId}-del-${i}` }),
        ),
      );
      expect(answers.map((a) => [a.status, a.body.error?.code]).sort()).toEqual([
        [202, undefined],
        [409, 'last_pool'],
      ]);
      const refused = answers.findIndex((a) => a.status === 409);
      const cluster = (await request(t.url).get(`/v1/clusters/${clusterId}`).set(admin)).body;
      expect(cluster.pools.map((p: { poolId: string }) => p.poolId)).toEqual([
        pools[refused].poolId,
      ]);
      const stream = (await request(t.url).get(`/v1/streams/cluster-${clusterId}`).set(admin)).body
        .events as Array<{ metadata: { correlationId: string } }>;
      expect(
        stream.filter((e) => e.metadata.correlationId === `${clusterId}-del-${refused}`),
      ).toEqual([]);
    }
  });

  it("answers last_pool only once another replica's removal of a pool has settled", async () => {
    // Another replica's delete of A between its two appends: A off the cluster's list, not yet
    // locked. Its end decides B's answer: undone → B is deleted; kept (A locked for deletion) →
    // last_pool; never settled (that replica died) → last_pool after the bounded wait.
    const pipeline = t.app.get(CommandPipeline);
    const clusters = ['other-0', 'other-1', 'other-2'];
    const results: Array<{ status: number; code: string | undefined; ms: number }> = [];
    for (const [round, clusterId] of clusters.entries()) {
      const [a, b] = await adoptedWithCpuPools(t, clusterId, ['a', 'b']);
      const at = new Date().toISOString();
      const other = systemContext(randomUUID());
      await pipeline.handle(
        clusterAggregate,
        `cluster-${clusterId}`,
        { type: 'RemovePoolFromCluster', data: { clusterId, poolId: a.poolId, at } },
        other,
      );
      const settle = async () => {
        await sleep(200);
        if (round === 0) {
          await pipeline.handle(
            clusterAggregate,
            `cluster-${clusterId}`,
            { type: 'AddPoolToCluster', data: { clusterId, poolId: a.poolId, at } },
            { ...other, commandId: randomUUID() },
          );
        } else if (round === 1) {
          const begin = {
            operationId: randomUUID(),
            operationType: 'delete_node_pool' as const,
            desiredSize: null,
            at,
          };
          await pipeline.handle(
            poolAggregate,
            `pool-${a.poolId}`,
            { type: 'BeginPoolOperation', data: begin },
            { ...other, commandId: randomUUID() },
          );
        }
      };
      const started = Date.now();
      const [del] = await Promise.all([
        request(t.url).delete(`/v1/node-pools/${b.poolId}`).set(admin),
        settle(),
      ]);
      results.push({ status: del.status, code: del.body.error?.code, ms: Date.now() - started });
    }
    expect(results.map((r) => [r.status, r.code])).toEqual([
      [202, undefined],
      [409, 'last_pool'],
      [409, 'last_pool'],
    ]);
    expect(results[2].ms).toBeGreaterThanOrEqual(900);
    expect(results[2].ms).toBeLessThan(3000);
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

describe('a pool left off its cluster list by a delete that died halfway (JOBS_REPAIR_SEC=1)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ JOBS_REPAIR_SEC: '1' });
  });
  afterAll(async () => t.close());

  it('is listed again within a few repair periods, while a pool being deleted is not', async () => {
    const admin = await t.auth('root', ['admin']);
    const [a, b, c] = (await adoptedWithCpuPools(t, 'stray', ['a', 'b', 'c'])).map((p) => p.poolId);
    const pipeline = t.app.get(CommandPipeline);
    const at = new Date().toISOString();
    const died = systemContext(randomUUID());
    // A's delete died after its first append; C's removal was followed by its lock.
    for (const poolId of [a, c]) {
      await pipeline.handle(
        clusterAggregate,
        'cluster-stray',
        { type: 'RemovePoolFromCluster', data: { clusterId: 'stray', poolId, at } },
        { ...died, commandId: randomUUID() },
      );
    }
    await pipeline.handle(
      poolAggregate,
      `pool-${c}`,
      {
        type: 'BeginPoolOperation',
        data: {
          operationId: randomUUID(),
          operationType: 'delete_node_pool',
          desiredSize: null,
          at,
        },
      },
      { ...died, commandId: randomUUID() },
    );
    const listed = async () =>
      (
        (await request(t.url).get('/v1/clusters/stray').set(admin)).body.pools as Array<{
          poolId: string;
        }>
      ).map((p) => p.poolId);
    expect(await listed()).toEqual([b]);
    await eventually(async () => (await listed()).includes(a), 8_000);
    expect((await listed()).sort()).toEqual([a, b].sort());
  });
});
