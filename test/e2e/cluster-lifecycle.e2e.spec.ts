import request from 'supertest';
import { SimulatedProvisioner } from '../../apps/control-plane/src/provisioner/simulated-provisioner';
import { startApp, TestApp } from '../support/app';
import { eventually } from '../support/reports';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The cluster lifecycle the simulated provisioner carries out (SIM_PROVISION_SEC=0: at once). */
describe('the cluster lifecycle over HTTP, carried out by the simulated provisioner', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let alice: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({ SIM_PROVISION_SEC: '0', K8S_VERSIONS: '1.29,1.30*,1.31,1.32' });
    admin = await t.auth('root', ['admin']);
    alice = await t.auth('alice', ['user']);
  });
  afterAll(async () => t.close());

  const base = {
    k8sVersion: '1.30',
    podCidr: '10.244.0.0/16',
    serviceCidr: '10.96.0.0/12',
  };
  const twoPools = [
    { name: 'gpu-a', kind: 'gpu', gpuType: 'L40S', gpusPerNode: 2, size: 2 },
    { name: 'cpu-a', kind: 'cpu', cpu: 8, memoryGiB: 32, autoscaling: { min: 1, max: 3 } },
  ];
  const get = async (path: string, who = admin): Promise<Json> =>
    (await request(t.url).get(path).set(who)).body;
  const cluster = (id: string) => get(`/v1/clusters/${id}`);
  const finished = (operationId: string): Promise<Json> =>
    eventually(async () => {
      const op = await get(`/v1/operations/${operationId}`);
      return ['succeeded', 'failed', 'timeout'].includes(op.status) ? op : null;
    });
  const create = async (name: string, extra: object = {}, who = admin) => {
    const res = await request(t.url)
      .post('/v1/clusters')
      .set(who)
      .send({ ...base, name, ...extra });
    expect(res.status).toBe(201);
    return res.body as { clusterId: string; status: string; operationId: string };
  };
  const created = async (name: string, extra: object = {}) => {
    const made = await create(name, extra);
    expect(await finished(made.operationId)).toMatchObject({ status: 'succeeded' });
    return made.clusterId;
  };

  it('lists the Kubernetes versions to any authenticated caller', async () => {
    const operator = await t.auth('op', ['operator'], ['c1']);
    for (const who of [admin, alice, operator]) {
      const res = await request(t.url).get('/v1/kubernetes-versions').set(who);
      expect([res.status, res.body]).toEqual([
        200,
        {
          items: [
            { version: '1.29', default: false },
            { version: '1.30', default: true },
            { version: '1.31', default: false },
            { version: '1.32', default: false },
          ],
        },
      ]);
    }
    expect((await request(t.url).get('/v1/kubernetes-versions')).status).toBe(401);
  });

  it('creates a cluster with two pools: running with its endpoint and CA, nodes reporting in its pools', async () => {
    const velero = { enabled: true, schedule: '0 3 * * *', ttlHours: 72 };
    const made = await create('two-pools', { nodePools: twoPools, velero }, alice);
    expect(made).toEqual({
      clusterId: expect.any(String),
      status: 'requested',
      operationId: expect.any(String),
    });
    // The pools are records at once.
    const pools = (await get(`/v1/clusters/${made.clusterId}/node-pools`)).items as Json[];
    expect(pools.map((p) => p.name).sort()).toEqual(['cpu-a', 'gpu-a']);
    const op = await finished(made.operationId);
    expect(op).toMatchObject({ type: 'create_cluster', status: 'succeeded' });
    expect(op.steps.map((s: Json) => s.name)).toEqual([
      'requested',
      'provisioning',
      'bootstrapping',
      'await_nodes',
    ]);
    expect(op.steps.at(-1)).toMatchObject({
      status: 'succeeded',
      detail: '3 node(s) registered in their pools',
    });
    const view = await cluster(made.clusterId);
    expect(view).toMatchObject({
      status: 'running',
      k8sVersion: '1.30',
      apiEndpoint: `https://${made.clusterId}.k8s.sim.local:6443`,
      caCertificate: expect.stringMatching(/^-----BEGIN CERTIFICATE-----\n/),
      velero,
    });
    expect(view.history.map((h: Json) => h.to)).toEqual([
      'requested',
      'provisioning',
      'bootstrapping',
      'running',
    ]);
    // The view lists its pools with their names, kinds, GPU types and sizes (API.md v1.1), in
    // the view and in the list, sized as GET /v1/node-pools/{id} sizes them.
    const summary = (name: string, kind: string, gpuType: string | null, size: number) => ({
      poolId: pools.find((p) => p.name === name)!.poolId,
      name,
      kind,
      gpuType,
      size,
    });
    const expected = [summary('gpu-a', 'gpu', 'L40S', 2), summary('cpu-a', 'cpu', null, 1)];
    const sorted = (list: Json[]) => [...list].sort((a, b) => a.name.localeCompare(b.name));
    await eventually(async () => {
      const shown = (await cluster(made.clusterId)).pools as Json[];
      return JSON.stringify(sorted(shown)) === JSON.stringify(sorted(expected)) || null;
    });
    const listed = ((await get('/v1/clusters', alice)).items as Json[]).find(
      (c) => c.clusterId === made.clusterId,
    )!;
    expect(sorted(listed.pools)).toEqual(sorted(expected));
    for (const p of expected) {
      expect((await get(`/v1/node-pools/${p.poolId}`)).size).toBe(p.size);
    }
    const nodes = (await get(`/v1/nodes?clusterId=${made.clusterId}`)).items as Json[];
    const byPool = (name: string) => {
      const poolId = pools.find((p) => p.name === name)!.poolId;
      return nodes.filter((n) => n.poolId === poolId);
    };
    expect(byPool('gpu-a')).toHaveLength(2);
    expect(byPool('gpu-a').every((n) => n.gpuCount === 2 && n.status === 'ready')).toBe(true);
    expect(byPool('cpu-a')).toEqual([
      expect.objectContaining({ role: 'cpu', capacity: expect.objectContaining({ cpu: 8 }) }),
    ]);
  });

  it('refuses a version not listed, and bad pools, naming the field and recording nothing', async () => {
    const before = (await get('/v1/events?limit=1000')).events.length as number;
    const bad = async (body: object, field: string) => {
      const res = await request(t.url)
        .post('/v1/clusters')
        .set(admin)
        .send({ ...base, name: 'refused', ...body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.fields.map((f: Json) => f.field)).toContain(field);
    };
    await bad({ k8sVersion: '1.28' }, 'k8sVersion');
    await bad({ k8sVersion: '1.33.1' }, 'k8sVersion');
    await bad({ nodePools: [{ name: 'x', kind: 'tpu' }] }, 'nodePools[0].kind');
    await bad({ nodePools: [{ name: 'x', kind: 'cpu', gpuType: 'L40S' }] }, 'nodePools[0].gpuType');
    await bad({ nodePools: [{ name: 'x', kind: 'cpu', size: -1 }] }, 'nodePools[0].size');
    await bad({ nodePools: [{ name: 'x', kind: 'cpu', extra: 1 }] }, 'nodePools[0].extra');
    await bad({ nodePools: [twoPools[1], twoPools[1]] }, 'nodePools[1].name');
    await bad({ nodePools: ['cpu'] }, 'nodePools');
    await bad({ velero: { enabled: 'yes' } }, 'velero.enabled');
    // velero becomes the backup policy: its schedule is held to the policy's rule at create.
    await bad({ velero: { enabled: true, schedule: '0 0 3 * * *' } }, 'velero.schedule');
    await bad({ velero: { enabled: true, schedule: '61 3 * * *' } }, 'velero.schedule');
    await bad({ velero: { enabled: true } }, 'velero.schedule');
    await bad({ velero: { enabled: false, schedule: 'daily' } }, 'velero.schedule');
    expect((await get('/v1/events?limit=1000')).events.length).toBe(before);
  });

  it('makes velero at create the backup policy, which the cluster view shows with its next runs', async () => {
    const velero = { enabled: true, schedule: '0 3 * * *', ttlHours: 48 };
    const made = await create('velero-at-create', { velero }, alice);
    // At once, in the creator's next request: the policy adopted, its next three runs shown.
    const view = await cluster(made.clusterId);
    expect(view.velero).toEqual({
      ...velero,
      includeNamespaces: null,
      nextRuns: expect.any(Array),
    });
    expect(view.velero.nextRuns).toHaveLength(3);
    for (const at of view.velero.nextRuns as string[]) expect(at).toMatch(/T03:00:00\.000Z$/);
    const policy = await get(`/v1/clusters/${made.clusterId}/backup-policy`, alice);
    expect(policy).toMatchObject({ ...velero, updatedBy: 'alice', nextRuns: view.velero.nextRuns });
    const listed = ((await get('/v1/clusters', alice)).items as Json[]).find(
      (c) => c.clusterId === made.clusterId,
    )!;
    expect(listed.velero).toEqual(view.velero);
    // The policy set since is what the view shows.
    expect(await finished(made.operationId)).toMatchObject({ status: 'succeeded' });
    const put = await request(t.url)
      .put(`/v1/clusters/${made.clusterId}/backup-policy`)
      .set(alice)
      .send({ enabled: true, schedule: '30 1 * * *', ttlHours: 24, includeNamespaces: ['apps'] });
    expect(put.status).toBe(200);
    const changed = (await cluster(made.clusterId)).velero;
    expect(changed).toMatchObject({
      enabled: true,
      schedule: '30 1 * * *',
      ttlHours: 24,
      includeNamespaces: ['apps'],
    });
    expect(changed.nextRuns).toHaveLength(3);
    expect(changed.nextRuns.every((at: string) => at.endsWith('T01:30:00.000Z'))).toBe(true);
    // Switched off: no next runs.
    await request(t.url)
      .put(`/v1/clusters/${made.clusterId}/backup-policy`)
      .set(alice)
      .send({ enabled: false, ttlHours: 24 })
      .expect(200);
    expect((await cluster(made.clusterId)).velero).toMatchObject({ enabled: false, nextRuns: [] });
    // A cluster created without velero shows the disabled default.
    const plain = await created('no-velero');
    expect((await cluster(plain)).velero).toEqual({
      enabled: false,
      schedule: null,
      ttlHours: 720,
      includeNamespaces: null,
      nextRuns: [],
    });
  });

  it('fails a step it is told to fail, and a repair brings the cluster to running', async () => {
    t.app.get(SimulatedProvisioner).failNext('bootstrapping');
    const made = await create('doomed', { nodePools: [twoPools[1]] });
    expect(await finished(made.operationId)).toMatchObject({
      status: 'failed',
      error: 'cluster failed during bootstrapping',
    });
    const failed = await cluster(made.clusterId);
    expect(failed.status).toBe('failed');
    expect(failed.history.at(-1)).toMatchObject({
      from: 'bootstrapping',
      to: 'failed',
      reason: 'simulated failure during bootstrapping',
    });
    const repair = await request(t.url).post(`/v1/clusters/${made.clusterId}/repair`).set(admin);
    expect(repair.status).toBe(202);
    expect(await finished(repair.body.operationId)).toMatchObject({
      type: 'repair_cluster',
      status: 'succeeded',
    });
    const repaired = await cluster(made.clusterId);
    expect(repaired).toMatchObject({ status: 'running', apiEndpoint: expect.any(String) });
    // The repair made the pool's node the failed create never did.
    expect((await get(`/v1/nodes?clusterId=${made.clusterId}`)).items).toHaveLength(1);
  });

  it('upgrades one minor at a time: two minors ahead is 409 version_skew and changes nothing', async () => {
    const id = await created('upgraded');
    const upgrade = (k8sVersion: string) =>
      request(t.url).post(`/v1/clusters/${id}/upgrade`).set(admin).send({ k8sVersion });
    for (const version of ['1.32', '1.30', '1.29', '1.33']) {
      const res = await upgrade(version);
      expect([res.status, res.body.error?.code]).toEqual([409, 'version_skew']);
    }
    expect((await cluster(id)).history).toHaveLength(4);
    const res = await upgrade('1.31');
    expect(res.status).toBe(202);
    expect(await finished(res.body.operationId)).toMatchObject({
      type: 'upgrade_cluster',
      status: 'succeeded',
    });
    expect(await cluster(id)).toMatchObject({ status: 'running', k8sVersion: '1.31' });
    expect((await upgrade('1.32')).status).toBe(202);
  });

  it('refuses delete while a session runs, then deletes: nodes gone, cluster deleted, bill verifies', async () => {
    const made = await create('to-delete', { nodePools: [twoPools[0]] });
    await finished(made.operationId);
    const poolId = (await get(`/v1/clusters/${made.clusterId}/node-pools`)).items[0].poolId;
    // Its pools are its owners' and editors' (API.md v1.1): alice runs there as an editor.
    await request(t.url)
      .put(`/v1/clusters/${made.clusterId}/members/alice`)
      .set(admin)
      .send({ role: 'editor' })
      .expect(200);
    const session = await request(t.url)
      .post('/v1/sessions')
      .set(alice)
      .send({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1, poolId });
    expect([session.status, session.body.status]).toEqual([201, 'running']);
    const sessionId = session.body.sessionId as string;
    const del = () => request(t.url).delete(`/v1/clusters/${made.clusterId}`).set(admin);
    const refused = await del();
    expect([refused.status, refused.body.error.code]).toEqual([409, 'cluster_in_use']);
    expect((await cluster(made.clusterId)).status).toBe('running');

    await new Promise((resolve) => setTimeout(resolve, 50)); // a billable moment
    await request(t.url).post(`/v1/sessions/${sessionId}/terminate`).set(alice).expect(200);
    const accepted = await eventually(async () => {
      const res = await del();
      return res.status === 202 ? res.body : null;
    });
    expect((await cluster(made.clusterId)).status).toMatch(/^delet(ing|ed)$/);
    const again = await del();
    const op = await finished(accepted.operationId);
    expect(op).toMatchObject({ type: 'delete_cluster', status: 'succeeded' });
    expect(op.steps.map((s: Json) => s.name)).toEqual([
      'disconnect_meshes',
      'remove_nodes',
      'delete_pools',
    ]);
    // Asked again while deleting: the running operation; once deleted: 409.
    if (again.status === 202) expect(again.body.operationId).toBe(accepted.operationId);
    else expect(again.body.error.code).toBe('invalid_transition');
    const deleted = await del();
    expect([deleted.status, deleted.body.error.code]).toEqual([409, 'invalid_transition']);

    const view = await cluster(made.clusterId);
    expect(view.status).toBe('deleted');
    expect(view.history.slice(-2).map((h: Json) => h.to)).toEqual(['deleting', 'deleted']);
    expect((await get(`/v1/nodes?clusterId=${made.clusterId}`)).items).toEqual([]);
    expect((await get(`/v1/node-pools/${poolId}`)).status).toBe('deleted');
    const verify = await get(`/v1/billing/sessions/${sessionId}/verify`, alice);
    expect(verify).toMatchObject({ sessionId, ok: true });
    const records = await get(`/v1/billing/records?sessionId=${sessionId}`, alice);
    expect(records.items.length).toBeGreaterThan(0);

    // Its operator's reports are refused: they would register its nodes again.
    const operator = await t.auth('op-deleted', ['operator'], [made.clusterId]);
    const node = (hostname: string) => ({
      hostname,
      role: 'cpu',
      capacity: { cpu: 8, memoryGiB: 32, diskGiB: 100 },
      gpus: [],
      kubeletReady: true,
      unschedulable: false,
    });
    const since = (await get('/v1/events?limit=1000')).events.length as number;
    for (const nodes of [[node('back-1')], [node('back-1'), node('back-2')]]) {
      const report = await request(t.url)
        .post('/v1/inventory/reports')
        .set(operator)
        .send({ clusterId: made.clusterId, nodes });
      expect([report.status, report.body.error?.code]).toEqual([409, 'cluster_deleted']);
      expect(report.body.error.details).toMatchObject({ clusterId: made.clusterId });
    }
    expect((await get(`/v1/nodes?clusterId=${made.clusterId}`)).items).toEqual([]);
    expect((await get('/v1/events?limit=1000')).events.length).toBe(since);
    // A live cluster's reports go on as before.
    const live = await created('still-live');
    const liveOperator = await t.auth('op-live', ['operator'], [live]);
    const fine = await request(t.url)
      .post('/v1/inventory/reports')
      .set(liveOperator)
      .send({ clusterId: live, nodes: [node('live-1')] });
    expect(fine.status).toBe(200);
    expect(fine.body.nodes).toEqual([expect.objectContaining({ hostname: 'live-1' })]);
  });

  it('lists the new routes in the OpenAPI document with their schemas', async () => {
    const doc = (await request(t.url).get('/docs-json')).body;
    const ok = (path: string, method: string, status: string) =>
      doc.paths[path][method].responses[status].content['application/json'].schema.$ref;
    expect(ok('/v1/kubernetes-versions', 'get', '200')).toBe(
      '#/components/schemas/KubernetesVersionsView',
    );
    expect(ok('/v1/clusters/{clusterId}', 'delete', '202')).toBe(
      '#/components/schemas/OperationAccepted',
    );
    const create = doc.components.schemas.CreateClusterDto.properties;
    expect(create.nodePools.items.$ref).toBe('#/components/schemas/ClusterPoolSpecDto');
    expect(create.velero.$ref ?? create.velero.allOf?.[0]?.$ref).toBe(
      '#/components/schemas/VeleroDto',
    );
    const spec = doc.components.schemas.ClusterPoolSpecDto.properties;
    expect(Object.keys(spec)).toEqual(expect.arrayContaining(['name', 'kind', 'gpuType', 'size']));
    const transition = doc.components.schemas.TransitionClusterDto.properties;
    expect(Object.keys(transition)).toEqual(
      expect.arrayContaining(['apiEndpoint', 'caCertificate']),
    );
  });

  it('takes a deleted cluster’s meshes down before its nodes', async () => {
    const x = await created('mesh-x', { podCidr: '10.41.0.0/16', serviceCidr: '10.141.0.0/16' });
    const y = await created('mesh-y', { podCidr: '10.42.0.0/16', serviceCidr: '10.142.0.0/16' });
    const opened = await request(t.url)
      .post('/v1/mesh-requests')
      .set(admin)
      .send({ fromClusterId: x, toClusterId: y });
    expect(opened.status).toBe(201);
    const meshId = opened.body.meshRequestId as string;
    await request(t.url).post(`/v1/mesh-requests/${meshId}/approve`).set(admin).send({});
    const mesh = () => get(`/v1/mesh-requests/${meshId}`);
    await eventually(async () => (await mesh()).status === 'connected');
    const res = await request(t.url).delete(`/v1/clusters/${x}`).set(admin);
    expect(res.status).toBe(202);
    const op = await finished(res.body.operationId);
    expect(op).toMatchObject({ status: 'succeeded' });
    expect(op.steps[0]).toMatchObject({ name: 'disconnect_meshes', status: 'succeeded' });
    expect((await mesh()).status).toBe('disconnected');
    expect((await cluster(x)).status).toBe('deleted');
    expect((await cluster(y)).status).toBe('running');
  });

  it('answers 404 for deleting a cluster that does not exist', async () => {
    const res = await request(t.url).delete('/v1/clusters/no-such-cluster').set(admin);
    expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
  });
});
