import request from 'supertest';
import { CommandContext, uuidFrom } from '@fleet/kernel';
import { PlacementService } from '../../apps/control-plane/src/sessions/placement.service';
import { startApp, TestApp } from '../support/app';
import { eventually, gpuNode, report, sleep } from '../support/reports';

type Drain = {
  drainId: string;
  status: string;
  outcome: string;
  relocated: string[];
  queued: string[];
  terminated: string[];
};
type StreamEvent = { type: string; data: { at: string; reason?: string; drainId?: string } };

/** A promise the test opens: a step of the drain is held at it, deterministically. */
const gate = () => {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const arrived = new Promise<void>((r) => (reached = r));
  return { open, opened, reached, arrived };
};

/**
 * A pause its owner is answered 2xx for holds, whatever step the drain moving the session is
 * at: the drain neither resumes nor places it, and still completes. Each case holds the drain
 * at one step of its relocation (spying on the placement service of the in-process app), so
 * the owner's pause lands exactly in the window the probe hit by timing.
 */
describe('an owner pausing a session a drain is moving (BullMQ on the real Redis)', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let alice: Record<string, string>;
  let operator: Record<string, string>;
  let placement: PlacementService;
  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '300' });
    admin = await t.auth('root', ['admin']);
    alice = await t.auth('alice', ['user']);
    operator = await t.auth('op', ['operator'], ['op1', 'op2', 'op3', 'op4']);
    placement = t.app.get(PlacementService, { strict: false });
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => t.close());

  const reportNodes = (body: object) =>
    request(t.url).post('/v1/inventory/reports').set(operator).send(body).expect(200);
  const nodeIdOf = async (clusterId: string, hostname: string): Promise<string> => {
    const list = await request(t.url).get(`/v1/nodes?clusterId=${clusterId}`).set(admin);
    return list.body.items.find((n: { hostname: string }) => n.hostname === hostname).nodeId;
  };
  const start = async (model: string) =>
    (
      await request(t.url)
        .post('/v1/sessions')
        .set(alice)
        .send({ kind: 'gpu', gpuModel: model, gpuCount: 1 })
        .expect(201)
    ).body as { sessionId: string; nodeId: string };
  const session = async (id: string) =>
    (await request(t.url).get(`/v1/sessions/${id}`).set(alice)).body;
  const pause = (id: string) => request(t.url).post(`/v1/sessions/${id}/pause`).set(alice).send();
  const drain = async (nodeId: string) =>
    (
      await request(t.url)
        .post(`/v1/nodes/${nodeId}/drain`)
        .set(admin)
        .send({ mode: 'relocate' })
        .expect(202)
    ).body.drainId as string;
  const drainDone = (drainId: string): Promise<Drain> =>
    eventually<Drain | null>(async () => {
      const d = (await request(t.url).get(`/v1/drains/${drainId}`).set(admin)).body as Drain;
      return d.status === 'completed' ? d : null;
    }, 10_000) as Promise<Drain>;
  const stream = async (id: string): Promise<StreamEvent[]> =>
    (
      (await request(t.url).get(`/v1/streams/session-${id}`).set(admin)).body.events as Array<
        StreamEvent & { type: string }
      >
    ).map((e) => ({ ...e, type: e.type.replace(/\.v\d+$/, '') }));

  /** Paused and not billed since: one record, from its start to the drain's pause; no resume. */
  const expectHeldPaused = async (id: string) => {
    await sleep(500); // a resume or placement the drain still had in hand would land by now
    expect(await session(id)).toMatchObject({ status: 'paused', nodeId: null, gpus: [] });
    const events = await stream(id);
    expect(events.map((e) => e.type)).not.toContain('SessionResumed');
    const paused = events.filter((e) => e.type === 'SessionPaused');
    expect(paused.map((e) => e.data.reason)).toEqual(['drain', 'user']);
    const started = events.find((e) => e.type === 'SessionStarted')!.data.at;
    const records = await eventually(async () => {
      const r = await request(t.url).get(`/v1/billing/records?sessionId=${id}`).set(admin);
      return r.body.items.length > 0 ? r.body.items : null;
    });
    expect(records.map((r: { from: string; to: string }) => [r.from, r.to])).toEqual([
      [started, paused[0].data.at],
    ]);
    const verify = await request(t.url).get(`/v1/billing/sessions/${id}/verify`).set(admin);
    expect(verify.body.ok).toBe(true);
  };

  it('holds a pause made while the drain has the session paused for its move', async () => {
    await reportNodes(report('op1', [gpuNode('src-01', 2, 'L40S')]));
    const [held, moved] = [await start('L40S'), await start('L40S')];
    await reportNodes(report('op1', [gpuNode('src-01', 2, 'L40S'), gpuNode('dst-01', 2, 'L40S')]));
    const src = await nodeIdOf('op1', 'src-01');
    const dst = await nodeIdOf('op1', 'dst-01');
    expect([held.nodeId, moved.nodeId]).toEqual([src, src]);
    // The drain's own release of the cards comes between its pause and its resume request.
    const g = gate();
    const release = placement.release.bind(placement);
    jest
      .spyOn(placement, 'release')
      .mockImplementation(async (nodeId: string, sessionId: string, ctx: CommandContext) => {
        if (
          sessionId === held.sessionId &&
          ctx.commandId === uuidFrom(ctx.causationId, 'release', sessionId)
        ) {
          g.reached();
          await g.opened;
        }
        return release(nodeId, sessionId, ctx);
      });
    const drainId = await drain(src);
    await g.arrived;
    await eventually(async () => (await session(held.sessionId)).status === 'paused');
    const answered = await pause(held.sessionId);
    g.open();
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ status: 'paused', nodeId: null, gpus: [] });
    const done = await drainDone(drainId);
    expect(done).toMatchObject({ outcome: 'drained', relocated: [moved.sessionId], queued: [] });
    expect(await session(moved.sessionId)).toMatchObject({ status: 'running', nodeId: dst });
    await expectHeldPaused(held.sessionId);
  });

  it('accepts and holds a pause made while the drain has the session queued for its move', async () => {
    await reportNodes(report('op2', [gpuNode('src-02', 1, 'MIG_1g')]));
    const held = await start('MIG_1g');
    await reportNodes(
      report('op2', [gpuNode('src-02', 1, 'MIG_1g'), gpuNode('dst-02', 1, 'MIG_1g')]),
    );
    const src = await nodeIdOf('op2', 'src-02');
    expect(held.nodeId).toBe(src);
    // Queued (resume requested, displaced) and not yet placed: every placement of it waits.
    const g = gate();
    const tryPlace = placement.tryPlace.bind(placement);
    jest.spyOn(placement, 'tryPlace').mockImplementation(async (sessionId, ctx, known) => {
      if (sessionId === held.sessionId) {
        g.reached();
        await g.opened;
      }
      return tryPlace(sessionId, ctx, known);
    });
    const drainId = await drain(src);
    await g.arrived;
    await eventually(async () => (await session(held.sessionId)).status === 'queued');
    const answered = await pause(held.sessionId);
    g.open();
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ status: 'paused', nodeId: null, gpus: [] });
    const done = await drainDone(drainId);
    expect(done).toMatchObject({ outcome: 'drained', relocated: [], queued: [] });
    await expectHeldPaused(held.sessionId);
    const dst = await nodeIdOf('op2', 'dst-02');
    const cards = (await request(t.url).get(`/v1/nodes/${dst}/gpus`).set(admin)).body.items;
    expect(cards.map((c: { sessionId: string | null }) => c.sessionId)).toEqual([null]);
  });

  it('holds a pause of a session the drain left queued, once room frees', async () => {
    await reportNodes(report('op3', [gpuNode('src-03', 1, 'MIG_2g')]));
    const held = await start('MIG_2g');
    await reportNodes(
      report('op3', [gpuNode('src-03', 1, 'MIG_2g'), gpuNode('spare-03', 1, 'MIG_2g')]),
    );
    const src = await nodeIdOf('op3', 'src-03');
    const spare = await nodeIdOf('op3', 'spare-03');
    await request(t.url).post(`/v1/nodes/${spare}/cordon`).set(admin).send({}).expect(200);
    const done = await drainDone(await drain(src));
    expect(done.queued).toEqual([held.sessionId]);
    const answered = await pause(held.sessionId);
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ status: 'paused', nodeId: null, gpus: [] });
    await request(t.url).post(`/v1/nodes/${spare}/uncordon`).set(admin).expect(200);
    await expectHeldPaused(held.sessionId);
  });

  it('appends nothing for a pause it refuses', async () => {
    await reportNodes(report('op4', [gpuNode('only-04', 1, 'MIG_3g')]));
    const ended = await start('MIG_3g');
    await request(t.url).post(`/v1/sessions/${ended.sessionId}/terminate`).set(alice).expect(200);
    const before = await stream(ended.sessionId);
    const refused = await pause(ended.sessionId);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('invalid_transition');
    expect(await stream(ended.sessionId)).toEqual(before);
  });
});
