import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { startApp, TestApp } from '../support/app';
import { eventually, gpuNode, report } from '../support/reports';
import { recordMade } from '../support/test-run';

type AuditEvent = {
  eventId: string;
  type: string;
  data: { sessionId?: string };
  metadata: { correlationId: string; causationId: string; actor: { sub: string } };
};

/**
 * An auditor follows a session placed from the queue back to the request that queued it: the
 * queue pass is a system command caused by that request's event (its id is the causation) and
 * in its correlation, as every reactor's command is (docs/ARCHITECTURE.md, Commands).
 */
describe('sessions placed from the queue, as the audit log shows them', () => {
  let t: TestApp;
  let auditor: Record<string, string>;
  let operator: Record<string, string>;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '300' });
    auditor = await t.auth('audit', ['auditor']);
    operator = await t.auth('op', ['operator'], ['qa1', 'qa2']);
  });
  afterAll(async () => t.close());

  const user = (sub: string) => t.auth(sub, ['user']);
  const create = async (sub: string, body: object, correlationId: string) =>
    request(t.url)
      .post('/v1/sessions')
      .set(await user(sub))
      .set('x-correlation-id', correlationId)
      .send(body);
  const act = async (sub: string, id: string, action: string, correlationId: string) =>
    request(t.url)
      .post(`/v1/sessions/${id}/${action}`)
      .set(await user(sub))
      .set('x-correlation-id', correlationId)
      .send();
  const stream = async (streamId: string): Promise<AuditEvent[]> => {
    const res = await request(t.url).get(`/v1/streams/${streamId}?limit=1000`).set(auditor);
    expect(res.status).toBe(200);
    return res.body.events;
  };
  const running = (sub: string, id: string) =>
    eventually(async () => {
      const res = await request(t.url)
        .get(`/v1/sessions/${id}`)
        .set(await user(sub));
      return res.body.status === 'running' ? res.body : null;
    });
  const only = (events: AuditEvent[], type: string, sessionId?: string): AuditEvent => {
    const found = events.filter(
      (e) => e.type === `${type}.v1` && (sessionId === undefined || e.data.sessionId === sessionId),
    );
    expect(found).toHaveLength(1);
    return found[0];
  };

  it('a queued create: its start and its allocation carry the request’s correlation, caused by SessionRequested', async () => {
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('qa1', [gpuNode('qa-01', 2, 'L40S')]));
    const demand = { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 };
    const holder = await create('alice', { ...demand, gpuCount: 2 }, 'qa-holder');
    expect(holder.body.status).toBe('running');
    const bob = await create('bob', demand, 'qa-bob-create');
    const carol = await create('carol', demand, 'qa-carol-create');
    expect([bob.body.status, carol.body.status]).toEqual(['queued', 'queued']);

    await act('alice', holder.body.sessionId, 'terminate', 'qa-holder-end');
    const placed = [
      await running('bob', bob.body.sessionId),
      await running('carol', carol.body.sessionId),
    ];

    const correlations = [];
    for (const [session, asked] of [
      [placed[0], 'qa-bob-create'],
      [placed[1], 'qa-carol-create'],
    ] as const) {
      const events = await stream(`session-${session.sessionId}`);
      const requested = only(events, 'SessionRequested');
      expect(requested.metadata.correlationId).toBe(asked);
      const started = only(events, 'SessionStarted');
      expect(started.metadata).toMatchObject({
        correlationId: requested.metadata.correlationId,
        causationId: requested.eventId,
        actor: { sub: 'system' },
      });
      const allocated = only(
        await stream(`node-${session.nodeId}`),
        'NodeCapacityAllocated',
        session.sessionId,
      );
      expect(allocated.metadata).toMatchObject({
        correlationId: requested.metadata.correlationId,
        causationId: requested.eventId,
      });
      correlations.push(started.metadata.correlationId);
    }
    // Two placements of one pass are two chains, not one shared fake one.
    expect(new Set(correlations).size).toBe(2);
  });

  it('a queued resume: SessionResumed carries the resume request’s correlation, caused by SessionResumeRequested', async () => {
    await request(t.url)
      .post('/v1/inventory/reports')
      .set(operator)
      .send(report('qa2', [gpuNode('qa-02', 1, 'HPC_GPU')]));
    const demand = { kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount: 1 };
    const dave = await create('dave', demand, 'qa-dave-create');
    expect(dave.body.status).toBe('running');
    expect((await act('dave', dave.body.sessionId, 'pause', 'qa-dave-pause')).body.status).toBe(
      'paused',
    );
    const erin = await create('erin', demand, 'qa-erin-create');
    expect(erin.body.status).toBe('running');
    const resume = await act('dave', dave.body.sessionId, 'resume', 'qa-dave-resume');
    expect(resume.body.status).toBe('queued');

    await act('erin', erin.body.sessionId, 'terminate', 'qa-erin-end');
    const session = await running('dave', dave.body.sessionId);

    const events = await stream(`session-${session.sessionId}`);
    const asked = only(events, 'SessionResumeRequested');
    expect(asked.metadata.correlationId).toBe('qa-dave-resume');
    expect(only(events, 'SessionResumed').metadata).toMatchObject({
      correlationId: 'qa-dave-resume',
      causationId: asked.eventId,
      actor: { sub: 'system' },
    });
    const allocations = (await stream(`node-${session.nodeId}`)).filter(
      (e) => e.type === 'NodeCapacityAllocated.v1' && e.data.sessionId === session.sessionId,
    );
    expect(allocations.at(-1)?.metadata).toMatchObject({
      correlationId: 'qa-dave-resume',
      causationId: asked.eventId,
    });
  });

  it('after a restart (read models rebuilt from the log) a queued session is still placed in its request’s chain', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-e2e-'));
    recordMade('dir', dataDir); // removed when the run ends
    let app = await startApp({ NODE_STALE_SEC: '300' }, { dataDir });
    await request(app.url)
      .post('/v1/inventory/reports')
      .set(await app.auth('op', ['operator'], ['qa3']))
      .send(report('qa3', [gpuNode('qa-03', 1, 'MIG_3g')]));
    const holder = await request(app.url)
      .post('/v1/sessions')
      .set(await app.auth('alice', ['user']))
      .send({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 1 });
    expect(holder.body.status).toBe('running');
    const waiting = await request(app.url)
      .post('/v1/sessions')
      .set(await app.auth('frank', ['user']))
      .set('x-correlation-id', 'qa-frank-create')
      .send({ kind: 'gpu', gpuModel: 'MIG_3g', gpuCount: 1 });
    expect(waiting.body.status).toBe('queued');
    await app.close();

    app = await startApp({ NODE_STALE_SEC: '300' }, { dataDir });
    try {
      await request(app.url)
        .post(`/v1/sessions/${holder.body.sessionId}/terminate`)
        .set(await app.auth('alice', ['user']))
        .send();
      const frank = await app.auth('frank', ['user']);
      await eventually(async () => {
        const res = await request(app.url).get(`/v1/sessions/${waiting.body.sessionId}`).set(frank);
        return res.body.status === 'running';
      });
      const res = await request(app.url)
        .get(`/v1/streams/session-${waiting.body.sessionId}`)
        .set(await app.auth('audit', ['auditor']));
      const events: AuditEvent[] = res.body.events;
      const requested = events.find((e) => e.type === 'SessionRequested.v1')!;
      expect(requested.metadata.correlationId).toBe('qa-frank-create');
      expect(events.find((e) => e.type === 'SessionStarted.v1')?.metadata).toMatchObject({
        correlationId: 'qa-frank-create',
        causationId: requested.eventId,
      });
    } finally {
      await app.close();
    }
  });
});
