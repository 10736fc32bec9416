import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { cpuNode, eventually, gpuNode, report } from '../support/reports';
import { EventStore } from '@fleet/eventstore/port';
import { EVENT_STORE } from '../../apps/control-plane/src/platform/runtime/tokens';
import { SessionProcessReactor } from '../../apps/control-plane/src/sessions/session-process.reactor';

describe('sessions over HTTP', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let operator: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '300' });
    admin = await t.auth('root', ['admin']);
    alice = await t.auth('alice', ['user']);
    bob = await t.auth('bob', ['user']);
    operator = await t.auth('op', ['operator'], ['s1', 's2', 's3', 's4', 's5', 's6', 's7']);
  });
  afterAll(async () => t.close());

  const reportNodes = (body: object) =>
    request(t.url).post('/v1/inventory/reports').set(operator).send(body);
  const create = (body: object, auth = alice) =>
    request(t.url).post('/v1/sessions').set(auth).send(body);
  const act = (id: string, action: string, auth = alice) =>
    request(t.url).post(`/v1/sessions/${id}/${action}`).set(auth).send();
  const get = (id: string, auth = alice) => request(t.url).get(`/v1/sessions/${id}`).set(auth);

  it('places a GPU session on a node with free cards of the model, best fit first', async () => {
    await reportNodes(
      report('s1', [gpuNode('big-01', 8), gpuNode('small-01', 2), gpuNode('mig-01', 4, 'MIG_1g')]),
    );
    const res = await create({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      owner: 'alice',
      kind: 'gpu',
      request: { gpuModel: 'L40S', gpuCount: 2 },
      status: 'running',
      terminationReason: null,
    });
    expect(res.body.gpus).toHaveLength(2);
    const nodes = await request(t.url).get('/v1/nodes?clusterId=s1').set(admin);
    const small = nodes.body.items.find((n: { hostname: string }) => n.hostname === 'small-01');
    expect(res.body.nodeId).toBe(small.nodeId);
    const gpus = await request(t.url).get(`/v1/nodes/${small.nodeId}/gpus`).set(admin);
    expect(gpus.body.items.map((g: { sessionId: string }) => g.sessionId)).toEqual([
      res.body.sessionId,
      res.body.sessionId,
    ]);
    expect((await get(res.body.sessionId)).body.status).toBe('running');
  });

  it('queues a session that fits nowhere and places it when cards free up', async () => {
    await reportNodes(report('s2', [gpuNode('hpc-01', 2, 'HPC_GPU')]));
    const first = await create({ kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount: 2 });
    expect(first.body.status).toBe('running');
    const second = await create({ kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount: 1 }, bob);
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ status: 'queued', nodeId: null, gpus: [] });
    await act(first.body.sessionId, 'terminate');
    const placed = await eventually(async () => {
      const s = await get(second.body.sessionId, bob);
      return s.body.status === 'running' ? s.body : null;
    });
    expect(placed.nodeId).toBe(first.body.nodeId);
  });

  it('does not let a big head of the queue block a smaller session that fits', async () => {
    await reportNodes(report('s3', [gpuNode('mig2-01', 2, 'MIG_2g')]));
    const holder = await create({ kind: 'gpu', gpuModel: 'MIG_2g', gpuCount: 1 });
    const big = await create({ kind: 'gpu', gpuModel: 'MIG_2g', gpuCount: 2 });
    expect(big.body.status).toBe('queued');
    const small = await create({ kind: 'gpu', gpuModel: 'MIG_2g', gpuCount: 1 });
    expect(small.body.status).toBe('running');
    expect(holder.body.status).toBe('running');
  });

  it('pauses (cards released), resumes anywhere that fits, and refuses invalid moves', async () => {
    const s = await create({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 });
    const paused = await act(s.body.sessionId, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused', nodeId: null, gpus: [] });
    const again = await act(s.body.sessionId, 'pause');
    expect(again.status).toBe(200);
    const resumed = await act(s.body.sessionId, 'resume');
    expect(resumed.body.status).toBe('running');
    const ended = await act(s.body.sessionId, 'terminate');
    expect(ended.body).toMatchObject({ status: 'terminated', terminationReason: 'user' });
    const refused = await act(s.body.sessionId, 'resume');
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('invalid_transition');
  });

  it('places CPU sessions on CPU nodes by vCPU and memory', async () => {
    await reportNodes(report('s4', [cpuNode('cpu-01', 16, 64)]));
    const s = await create({ kind: 'cpu', cpu: 8, memoryGiB: 32 });
    expect(s.body).toMatchObject({
      status: 'running',
      kind: 'cpu',
      request: { cpu: 8, memoryGiB: 32 },
    });
    const tooBig = await create({ kind: 'cpu', cpu: 16, memoryGiB: 32 });
    expect(tooBig.body.status).toBe('queued');
  });

  it('keeps users to their own sessions', async () => {
    const s = await create({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 });
    expect((await get(s.body.sessionId, bob)).status).toBe(404);
    expect((await act(s.body.sessionId, 'pause', bob)).status).toBe(404);
    expect((await get(s.body.sessionId)).body.status).toBe('running');
    // A user who is also an auditor reads it, so its command is forbidden, not "not found".
    const carol = await t.auth('carol', ['user', 'auditor']);
    expect((await get(s.body.sessionId, carol)).status).toBe(200);
    for (const action of ['pause', 'resume', 'terminate']) {
      const refused = await act(s.body.sessionId, action, carol);
      expect([action, refused.status, refused.body.error.code]).toEqual([action, 403, 'forbidden']);
    }
    expect((await get(s.body.sessionId)).body.status).toBe('running');
    const bobs = await request(t.url).get('/v1/sessions').set(bob);
    expect(bobs.body.items.every((x: { owner: string }) => x.owner === 'bob')).toBe(true);
    expect((await request(t.url).get('/v1/sessions?owner=alice').set(bob)).status).toBe(403);
    expect((await act(s.body.sessionId, 'force-terminate')).status).toBe(403);
    const forced = await act(s.body.sessionId, 'force-terminate', admin);
    expect(forced.body).toMatchObject({ status: 'terminated', terminationReason: 'admin_force' });
    expect(
      (await create({ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1, owner: 'bob' })).status,
    ).toBe(403);
    const forBob = await create(
      { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1, owner: 'bob' },
      admin,
    );
    expect(forBob.body.owner).toBe('bob');
  });

  it.each([
    [{ kind: 'gpu', gpuModel: 'H100', gpuCount: 1 }, 'gpuModel'],
    [{ kind: 'gpu', gpuModel: 'L40S', gpuCount: 0 }, 'gpuCount'],
    [{ kind: 'gpu', gpuModel: 'L40S' }, 'gpuCount'],
    [{ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1, cpu: 4 }, 'cpu'],
    [{ kind: 'cpu', cpu: 4 }, 'memoryGiB'],
    [{ kind: 'tpu' }, 'kind'],
    [{ kind: 'gpu', gpuModel: 'L40S', gpuCount: 1, color: 'red' }, 'color'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('creates one session for a retried create with the same Idempotency-Key', async () => {
    const body = { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 };
    const a = await request(t.url)
      .post('/v1/sessions')
      .set(alice)
      .set('Idempotency-Key', 'create-once-1')
      .send(body);
    const b = await request(t.url)
      .post('/v1/sessions')
      .set(alice)
      .set('Idempotency-Key', 'create-once-1')
      .send(body);
    expect(b.body.sessionId).toBe(a.body.sessionId);
    const reused = await request(t.url)
      .post('/v1/sessions')
      .set(alice)
      .set('Idempotency-Key', 'create-once-1')
      .send({ ...body, gpuCount: 2 });
    expect(reused.status).toBe(409);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });

  it('terminates running sessions of a node that goes offline and keeps the paused ones', async () => {
    const first = await reportNodes(report('s5', [gpuNode('doomed-01', 4, 'MIG_3g')]));
    const nodeId = first.body.nodes[0].nodeId;
    const running = await create({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 2 });
    const pausing = await create({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 2 }, bob);
    expect(running.body.nodeId).toBe(nodeId);
    expect(pausing.body.nodeId).toBe(nodeId);
    await act(pausing.body.sessionId, 'pause', bob);
    await reportNodes(report('s5', [gpuNode('doomed-01', 4, 'MIG_3g', { kubeletReady: false })]));
    const ended = await eventually(async () => {
      const s = await get(running.body.sessionId);
      return s.body.status === 'terminated' ? s.body : null;
    });
    expect(ended.terminationReason).toBe('node_offline');
    expect((await get(pausing.body.sessionId, bob)).body.status).toBe('paused');
    // Its cards are free again on the node's stream, so an offline node with no sessions can go.
    await eventually(
      async () => (await request(t.url).delete(`/v1/nodes/${nodeId}`).set(admin)).status === 204,
    );
    // The paused session resumes elsewhere once capacity exists.
    await reportNodes(report('s5', [gpuNode('spare-01', 2, 'MIG_3g')]));
    const resumed = await act(pausing.body.sessionId, 'resume', bob);
    expect(resumed.body.status).toBe('running');
    expect(resumed.body.nodeId).not.toBe(nodeId);
  });

  it('ends only the sessions a node held when it went offline, even when that is handled late', async () => {
    // Three cards fit on no other node of the suite.
    const first = await reportNodes(report('s7', [gpuNode('flap-01', 8, 'HPC_GPU')]));
    const nodeId = first.body.nodes[0].nodeId;
    const before = await create({ kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount: 3 });
    expect(before.body.nodeId).toBe(nodeId);
    await reportNodes(report('s7', [gpuNode('flap-01', 8, 'HPC_GPU', { kubeletReady: false })]));
    await eventually(async () => (await get(before.body.sessionId)).body.status === 'terminated');
    // Back, and a session placed on it since.
    await reportNodes(report('s7', [gpuNode('flap-01', 8, 'HPC_GPU')]));
    const since = await eventually(async () => {
      const s = await create({ kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount: 3 }, bob);
      return s.body.status === 'running' ? s.body : null;
    });
    expect(since.nodeId).toBe(nodeId);
    // The offline handled again, late (a replay after a crash before its checkpoint, say).
    const events = t.app.get<EventStore>(EVENT_STORE);
    const offline = (await events.readStream(`node-${nodeId}`)).find((e) =>
      e.type.startsWith('NodeWentOffline'),
    )!;
    await t.app.get(SessionProcessReactor).react(offline);
    expect((await get(since.sessionId, bob)).body.status).toBe('running');
    expect((await get(before.body.sessionId)).body.terminationReason).toBe('node_offline');
  });

  it('bills exactly the running intervals: two records for run, pause, resume, terminate; none for the gap', async () => {
    const first = await reportNodes(report('s6', [gpuNode('bill-01', 2, 'HPC_GPU')]));
    const nodeId = first.body.nodes[0].nodeId;
    const s = await create({ kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount: 2 });
    const cards = s.body.gpus;
    await new Promise((r) => setTimeout(r, 300));
    await act(s.body.sessionId, 'pause');
    await new Promise((r) => setTimeout(r, 400)); // the paused gap: never billed
    await act(s.body.sessionId, 'resume');
    await new Promise((r) => setTimeout(r, 200));
    await act(s.body.sessionId, 'terminate');
    const stream = await request(t.url).get(`/v1/streams/session-${s.body.sessionId}`).set(admin);
    const at = (type: string) =>
      stream.body.events
        .filter((e: { type: string }) => e.type === type)
        .map((e: { data: { at: string; endedAt?: string } }) => e.data);
    const [started] = at('SessionStarted.v1');
    const [paused] = at('SessionPaused.v1');
    const [resumed] = at('SessionResumed.v1');
    const [ended] = at('SessionTerminated.v1');
    const records = await eventually(async () => {
      const r = await request(t.url)
        .get(`/v1/billing/records?sessionId=${s.body.sessionId}`)
        .set(alice);
      return r.body.items.length === 2 ? r.body : null;
    });
    const ms = (a: string, b: string) => Date.parse(b) - Date.parse(a);
    const expected = [
      { from: started.at, to: paused.at, ms: ms(started.at, paused.at) },
      { from: resumed.at, to: ended.endedAt, ms: ms(resumed.at, ended.endedAt) },
    ];
    records.items.sort((a: { from: string }, b: { from: string }) => (a.from < b.from ? -1 : 1));
    expected.forEach((e, i) => {
      const rec = records.items[i];
      expect(rec).toMatchObject({
        sessionId: s.body.sessionId,
        owner: 'alice',
        nodeId,
        hostname: 'bill-01',
        gpuModel: 'HPC_GPU',
        from: e.from,
        to: e.to,
        seconds: e.ms / 1000,
        unitPricePerHour: 7200,
        currency: 'KRW',
      });
      expect(rec.gpuUuids.sort()).toEqual([...cards].sort());
      // round_half_up(ms × cards × price / 3_600_000)
      expect(rec.amount).toBe(Math.floor((2 * e.ms * 2 * 7200 + 3_600_000) / 7_200_000));
    });
    expect(records.total).toBe(records.items[0].amount + records.items[1].amount);
    const verify = await request(t.url)
      .get(`/v1/billing/sessions/${s.body.sessionId}/verify`)
      .set(alice);
    expect(verify.body).toMatchObject({
      recorded: records.total,
      recomputed: records.total,
      ok: true,
    });
    // Bob sees neither the records nor the verification of Alice's session.
    expect((await request(t.url).get(`/v1/billing/records?owner=alice`).set(bob)).status).toBe(403);
    expect(
      (await request(t.url).get(`/v1/billing/sessions/${s.body.sessionId}/verify`).set(bob)).status,
    ).toBe(404);
    // Deleting the node afterwards leaves every record, card uuids included.
    await reportNodes(report('s6', [gpuNode('bill-01', 2, 'HPC_GPU', { kubeletReady: false })]));
    await eventually(
      async () => (await request(t.url).delete(`/v1/nodes/${nodeId}`).set(admin)).status === 204,
    );
    const after = await request(t.url)
      .get(`/v1/billing/records?sessionId=${s.body.sessionId}`)
      .set(admin);
    expect(after.body.items.map((r: { recordId: string }) => r.recordId).sort()).toEqual(
      records.items.map((r: { recordId: string }) => r.recordId).sort(),
    );
    expect(after.body.items.every((r: { gpuUuids: string[] }) => r.gpuUuids.length === 2)).toBe(
      true,
    );
  });
});
