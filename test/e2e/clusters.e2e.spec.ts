import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { cpuNode, eventually, gpuNode, report } from '../support/reports';
import { startProvisionerDouble } from '../support/provisioner-double';

/**
 * The lifecycle walked by hand, as an HTTP provisioner reports it: the provisioner here is a
 * double that accepts every request and reports nothing (cluster-lifecycle.e2e.spec.ts runs
 * the simulated one).
 */
describe('clusters over HTTP', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let alice: Record<string, string>;
  let provisioner: Awaited<ReturnType<typeof startProvisionerDouble>>;
  beforeAll(async () => {
    provisioner = await startProvisionerDouble();
    t = await startApp({
      PROVISIONER_URL: provisioner.url,
      K8S_VERSIONS: '1.29,1.30*,1.31,1.32,1.33',
    });
    admin = await t.auth('root', ['admin']);
    alice = await t.auth('alice', ['user']);
  });
  afterAll(async () => {
    await t.close();
    await provisioner.close();
  });

  const create = (body: object, who = admin) =>
    request(t.url).post('/v1/clusters').set(who).send(body);
  const move = (id: string, to: string) =>
    request(t.url).post(`/v1/clusters/${id}/transitions`).set(admin).send({ to });
  const valid = {
    name: 'prod-kr1',
    k8sVersion: '1.30.4',
    podCidr: '10.244.0.0/16',
    serviceCidr: '10.96.0.0/12',
  };

  it('creates a cluster as requested and walks it to running through the command API', async () => {
    const res = await create(valid);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      clusterId: expect.any(String),
      status: 'requested',
      operationId: expect.any(String),
    });
    const id = res.body.clusterId as string;
    // The create_cluster operation asked the provisioner, keyed by the operation.
    const asked = await eventually(async () =>
      provisioner.calls.find(
        (c) => c.path === '/v1/cluster-requests/create' && c.body.clusterId === id,
      ),
    );
    expect(asked).toMatchObject({
      key: `${res.body.operationId}:cluster-create`,
      body: {
        operationId: res.body.operationId,
        name: valid.name,
        k8sVersion: '1.30.4',
        pools: [],
      },
    });
    for (const to of ['provisioning', 'bootstrapping', 'running', 'degraded', 'running']) {
      const step = await move(id, to);
      expect(step.status).toBe(200);
      expect(step.body.status).toBe(to);
    }
    const got = await request(t.url).get(`/v1/clusters/${id}`).set(admin);
    expect(got.body).toMatchObject({ ...valid, clusterId: id, status: 'running', adopted: false });
    expect(got.body.history.map((h: { to: string }) => h.to)).toEqual([
      'requested',
      'provisioning',
      'bootstrapping',
      'running',
      'degraded',
      'running',
    ]);
  });

  const operation = (id: string) =>
    eventually(async () => {
      const op = (await request(t.url).get(`/v1/operations/${id}`).set(admin)).body;
      return ['succeeded', 'failed', 'timeout'].includes(op.status) ? op : null;
    });

  it('runs create, upgrade and repair as operations that follow the lifecycle', async () => {
    const created = (await create({ ...valid, name: 'lifecycle' })).body;
    const id = created.clusterId as string;
    for (const to of ['provisioning', 'bootstrapping', 'running']) await move(id, to).expect(200);
    const made = await operation(created.operationId);
    expect(made).toMatchObject({ type: 'create_cluster', status: 'succeeded' });
    expect(made.steps.map((s: { name: string; status: string }) => s.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    expect(made.steps[made.steps.length - 1].name).toBe('bootstrapping');

    const early = await request(t.url)
      .post(`/v1/clusters/${(await create({ ...valid, name: 'early' })).body.clusterId}/upgrade`)
      .set(admin)
      .send({ k8sVersion: '1.31.1' });
    expect([early.status, early.body.error.code]).toEqual([409, 'invalid_transition']);
    const upgrade = await request(t.url)
      .post(`/v1/clusters/${id}/upgrade`)
      .set(admin)
      .send({ k8sVersion: '1.31.1' });
    expect(upgrade.status).toBe(202);
    expect((await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body.status).toBe(
      'upgrading',
    );
    await move(id, 'running').expect(200);
    expect(await operation(upgrade.body.operationId)).toMatchObject({
      type: 'upgrade_cluster',
      status: 'succeeded',
      steps: [expect.objectContaining({ name: 'upgrading', status: 'succeeded' })],
    });
    expect((await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body.k8sVersion).toBe(
      '1.31.1',
    );

    expect((await request(t.url).post(`/v1/clusters/${id}/repair`).set(admin)).status).toBe(409);
    await move(id, 'degraded').expect(200);
    const repair = await request(t.url).post(`/v1/clusters/${id}/repair`).set(admin);
    expect(repair.status).toBe(202);
    await move(id, 'running').expect(200);
    expect(await operation(repair.body.operationId)).toMatchObject({
      type: 'repair_cluster',
      status: 'succeeded',
    });
  });

  it('retries a failed upgrade to the version it was asked for, as a step or under a repair', async () => {
    const get = async (id: string) =>
      (await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body;
    for (const viaRepair of [false, true]) {
      const id = (await create({ ...valid, name: `retried-${viaRepair}` })).body.clusterId;
      for (const to of ['provisioning', 'bootstrapping', 'running']) await move(id, to).expect(200);
      await request(t.url)
        .post(`/v1/clusters/${id}/upgrade`)
        .set(admin)
        .send({ k8sVersion: '1.31.2' })
        .expect(202);
      await move(id, 'failed').expect(200);
      const repair = viaRepair
        ? (await request(t.url).post(`/v1/clusters/${id}/repair`).set(admin).expect(202)).body
        : null;
      const retried = await move(id, 'upgrading').expect(200);
      expect(retried.body).toMatchObject({ k8sVersion: '1.30.4', targetVersion: '1.31.2' });
      await move(id, 'running').expect(200);
      expect(await get(id)).toMatchObject({
        status: 'running',
        k8sVersion: '1.31.2',
        targetVersion: null,
      });
      if (repair) {
        expect(await operation(repair.operationId)).toMatchObject({ status: 'succeeded' });
      }
    }
  });

  it('fails the create_cluster operation when the cluster fails', async () => {
    const created = (await create({ ...valid, name: 'doomed' })).body;
    await move(created.clusterId, 'provisioning').expect(200);
    await move(created.clusterId, 'failed').expect(200);
    expect(await operation(created.operationId)).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('provisioning'),
    });
  });

  it('takes the endpoint and CA an HTTP provisioner reports on → running', async () => {
    const id = (await create({ ...valid, name: 'reported' })).body.clusterId as string;
    for (const to of ['provisioning', 'bootstrapping']) await move(id, to).expect(200);
    const post = (body: object) =>
      request(t.url).post(`/v1/clusters/${id}/transitions`).set(admin).send(body);
    const caCertificate = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const apiEndpoint = 'https://api.prod.example:6443';
    for (const [body, field] of [
      [{ to: 'running', apiEndpoint: 'http://api.prod.example' }, 'apiEndpoint'],
      [{ to: 'running', caCertificate: 'not a pem' }, 'caCertificate'],
    ] as const) {
      const bad = await post(body);
      expect([bad.status, bad.body.error.details.fields[0].field]).toEqual([400, field]);
    }
    const ran = await post({ to: 'running', apiEndpoint, caCertificate });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ status: 'running', apiEndpoint, caCertificate });
    await move(id, 'degraded').expect(200);
    expect((await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body.apiEndpoint).toBe(
      apiEndpoint,
    );
  });

  it('deletes through the HTTP provisioner: deleting at once, asked again the running operation, deleted once its nodes are gone', async () => {
    const id = (await create({ ...valid, name: 'leaving' })).body.clusterId as string;
    for (const to of ['provisioning', 'bootstrapping', 'running']) await move(id, to).expect(200);
    const operator = await t.auth('op-leaving', ['operator'], [id]);
    const inventory = (ready: boolean) =>
      request(t.url)
        .post('/v1/inventory/reports')
        .set(operator)
        .send(report(id, [cpuNode('leaving-1', 8, 32, { kubeletReady: ready })]))
        .expect(200);
    await inventory(true);
    const del = () => request(t.url).delete(`/v1/clusters/${id}`).set(admin);
    const first = await del();
    expect(first.status).toBe(202);
    expect((await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body.status).toBe(
      'deleting',
    );
    const asked = await eventually(async () =>
      provisioner.calls.find(
        (c) => c.path === '/v1/cluster-requests/delete' && c.body.clusterId === id,
      ),
    );
    expect(asked).toMatchObject({
      key: `${first.body.operationId}:cluster-delete`,
      body: { nodes: [expect.objectContaining({ hostname: 'leaving-1', poolId: null })] },
    });
    // The node still reports: the operation waits, and a second delete answers it.
    const second = await del();
    expect([second.status, second.body.operationId]).toEqual([202, first.body.operationId]);
    await inventory(false); // the provisioner took it down
    expect(await operation(first.body.operationId)).toMatchObject({
      type: 'delete_cluster',
      status: 'succeeded',
    });
    expect((await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body.status).toBe('deleted');
    const after = await del();
    expect([after.status, after.body.error.code]).toEqual([409, 'invalid_transition']);
    expect((await move(id, 'running')).status).toBe(409);
  });

  it('refuses an invalid transition with 409 invalid_transition and changes nothing', async () => {
    const id = (await create({ ...valid, name: 'other' })).body.clusterId as string;
    const res = await move(id, 'running');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('invalid_transition');
    expect((await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body.status).toBe(
      'requested',
    );
    expect((await move(id, 'sleeping')).status).toBe(400);
    expect((await move('no-such-cluster', 'provisioning')).status).toBe(404);
  });

  it('takes one upgrade at a time: another while upgrading is 409 and appends nothing, sequential or concurrent', async () => {
    const created = (await create({ ...valid, name: 'one-upgrade' })).body;
    const id = created.clusterId as string;
    for (const to of ['provisioning', 'bootstrapping', 'running']) await move(id, to).expect(200);
    const upgrade = (k8sVersion: string) =>
      request(t.url).post(`/v1/clusters/${id}/upgrade`).set(admin).send({ k8sVersion });
    const log = async () =>
      (await request(t.url).get(`/v1/streams/cluster-${id}?limit=1000`).set(admin)).body.events
        .length as number;
    expect((await upgrade('1.31.0')).status).toBe(202);
    const before = await log();
    for (const version of ['1.32.0', '1.31.0']) {
      const again = await upgrade(version);
      expect([again.status, again.body.error?.code]).toEqual([409, 'invalid_transition']);
    }
    expect(await log()).toBe(before);
    await move(id, 'running').expect(200);
    expect((await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body.k8sVersion).toBe(
      '1.31.0',
    );

    // Ten at once: one is taken, and the version reached is the one it asked for.
    const versions = Array.from({ length: 10 }, (_, i) => `1.32.${i}`);
    const answers = await Promise.all(versions.map((v) => upgrade(v)));
    const taken = answers.flatMap((a, i) => (a.status === 202 ? [versions[i]] : []));
    expect(taken).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(9);
    await move(id, 'running').expect(200);
    const cluster = (await request(t.url).get(`/v1/clusters/${id}`).set(admin)).body;
    expect(cluster.k8sVersion).toBe(taken[0]);

    // One minor forward only: the version it runs, an older one, or two ahead is 409
    // version_skew and appends nothing.
    const at = await log();
    for (const version of [taken[0], '1.31.0', '1.20', '1.34']) {
      const back = await upgrade(version);
      expect([back.status, back.body.error?.code]).toEqual([409, 'version_skew']);
    }
    expect(await log()).toBe(at);
  });

  it('names the unknown cluster a transition or an upgrade was asked for', async () => {
    const moved = await move('no-such-cluster', 'provisioning');
    const upgraded = await request(t.url)
      .post('/v1/clusters/no-such-cluster/upgrade')
      .set(admin)
      .send({ k8sVersion: '1.31.0' });
    for (const res of [moved, upgraded]) {
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({
        code: 'not_found',
        message: 'cluster no-such-cluster does not exist',
        details: { id: 'no-such-cluster' },
      });
    }
  });

  it('refuses bad and overlapping CIDRs, and a user naming another owner', async () => {
    const overlap = await create({ ...valid, serviceCidr: '10.244.128.0/17' });
    expect(overlap.status).toBe(400);
    expect(overlap.body.error.details.fields[0].field).toBe('serviceCidr');
    const rule = 'must be an IPv4 CIDR a.b.c.d/n (octets 0-255 without leading zeros, n 0-32)';
    const told: Record<string, string> = {
      '10.244.0.1/16': 'must have no host bits set (10.244.0.1/16 lies in 10.244.0.0/16)',
      '10.244.0.0/40': `${rule}: prefix /40 is above 32`,
      '10.244.0.0/33': `${rule}: prefix /33 is above 32`,
      '010.244.0.0/16': `${rule}: octet 010 has a leading zero`,
      '256.1.0.0/16': `${rule}: octet 256 is above 255`,
      '10.244.0/16': `podCidr ${rule}`,
    };
    for (const [podCidr, problem] of Object.entries(told)) {
      const res = await create({ ...valid, podCidr });
      expect([res.status, res.body.error.details.fields]).toEqual([
        400,
        [{ field: 'podCidr', problems: [problem] }],
      ]);
    }
    expect((await create({ ...valid, extra: 1 })).status).toBe(400);
    // A user may create a cluster (API.md v1.1: it becomes its owner); an operator may not.
    expect((await create(valid, alice)).status).toBe(201);
    const operator = await t.auth('op', ['operator'], ['c1']);
    expect((await create(valid, operator)).status).toBe(403);
    // A user creates clusters of its own (cluster-members.e2e.spec.ts), for nobody else.
    const forBob = await create({ ...valid, owner: 'bob' }, alice);
    expect([forBob.status, forBob.body.error.code]).toEqual([403, 'forbidden']);
  });

  it('adopts a cluster first seen in an operator report as running', async () => {
    const operator = await t.auth('op', ['operator'], ['legacy-1']);
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('legacy-1', [gpuNode('g-01'), gpuNode('g-02')]))
      .expect(200);
    const cluster = await eventually(async () => {
      const res = await request(t.url).get('/v1/clusters/legacy-1').set(admin);
      return res.status === 200 ? res.body : null;
    });
    expect(cluster).toMatchObject({ clusterId: 'legacy-1', status: 'running', adopted: true });
    expect(cluster.history).toHaveLength(1);
  });
});
