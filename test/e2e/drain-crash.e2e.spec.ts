import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import {
  ApiClient,
  countEvents,
  getJson,
  invariantChecker,
  InvariantChecker,
  sessionStream,
} from '../support/invariants';
import { eventually, gpuNode, report, sleep } from '../support/reports';

/**
 * A drain is a saga over many streams. SIGKILL the compiled app shortly after the drain was
 * asked for (0 to 100 ms: before, between and during its relocations), start it again on the
 * same DATA_DIR: the drain completes, no session was paused or resumed twice, every bill
 * verifies and the placement invariants hold.
 */

const ENV = { NODE_STALE_SEC: '3600', CORDON_SYNC_SEC: '3600' };
const DELAYS_MS = [0, 20, 50, 100];
// One model per round, so one round's sessions cannot land on another round's nodes.
const MODELS = ['L40S', 'HPC_GPU', 'MIG_1g', 'MIG_2g', 'MIG_3g'] as const;
const SESSIONS = 8;

type Drain = {
  drainId: string;
  nodeId: string;
  status: string;
  relocated: string[];
  queued: string[];
  terminated: string[];
};

describe('killing the app while it drains a node', () => {
  let app: ChildApp;
  let admin: Record<string, string>;
  let client: ApiClient;
  let checker: InvariantChecker;

  beforeAll(async () => {
    await ensureBuilt();
    // A start after a kill may wait for the dead worker's BullMQ job locks to expire (30 s).
    app = await startChildApp(ENV, { readyTimeoutMs: 60_000 });
    admin = await app.auth('root', ['admin']);
    client = { url: () => app.url, headers: await app.auth('audit', ['auditor']) };
    checker = invariantChecker(client);
  }, 180_000);
  afterAll(async () => {
    await app?.kill('SIGKILL');
  });

  const post = async (route: string, headers: Record<string, string>, body: object = {}) => {
    const res = await fetch(`${app.url}${route}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };

  it.each(DELAYS_MS.map((delay, round) => [delay, round]))(
    'completes a drain killed %i ms after it was asked for, moving each session once',
    async (delay, round) => {
      if (!app.running) await app.restart(); // an earlier round's failed start must not fail this one
      const clusterId = `drain-crash-${round}`;
      const model = MODELS[round];
      const operator = await app.auth('op', ['operator'], [clusterId]);
      const source = gpuNode(`${clusterId}-src`, SESSIONS, model);
      const target = gpuNode(`${clusterId}-dst`, SESSIONS, model);
      const reg = await post('/v1/inventory/reports', operator, report(clusterId, [source]));
      expect(reg.status).toBe(200);
      const sourceId = String((reg.body.nodes as Array<{ nodeId: string }>)[0].nodeId);
      const sessions: string[] = [];
      for (let i = 0; i < SESSIONS; i++) {
        const s = await post('/v1/sessions', admin, {
          kind: 'gpu',
          gpuModel: model,
          gpuCount: 1,
          owner: `owner-${i % 3}`,
        });
        expect(s.body).toMatchObject({ status: 'running', nodeId: sourceId });
        sessions.push(String(s.body.sessionId));
      }
      // The target joins only now, so every session started on the source.
      expect(
        (await post('/v1/inventory/reports', operator, report(clusterId, [source, target]))).status,
      ).toBe(200);
      await sleep(300); // let the sessions run a little, so every bill has a length

      const started = await post(`/v1/nodes/${sourceId}/drain`, admin, { mode: 'relocate' });
      expect(started.status).toBe(202);
      const drainId = String(started.body.drainId);
      await sleep(delay);
      await app.kill('SIGKILL');
      const killedAt = Date.now();
      await app.restart();
      const readyAfterMs = Date.now() - killedAt;

      const context = `round ${round} (kill ${delay} ms after the drain ${drainId}, ready again after ${readyAfterMs} ms)`;
      console.log(context);
      const done = (await eventually(
        async () => {
          const d = await getJson<Drain>(client, `/v1/drains/${drainId}`);
          return d.status === 'completed' ? d : undefined;
        },
        60_000,
        100,
      ).catch((error: Error) => {
        throw new Error(
          `${context}: not completed: ${error.message}\n${app.output().slice(-2000)}`,
        );
      })) as Drain;
      expect({ context, moved: [...done.relocated, ...done.queued].sort() }).toEqual({
        context,
        moved: [...sessions].sort(),
      });
      // The target has room for all of them.
      expect({ context, relocated: done.relocated.length }).toEqual({
        context,
        relocated: SESSIONS,
      });

      for (const id of sessions) {
        const events = await sessionStream(client, id);
        const pausedByDrain = events.filter(
          (e) => e.type === 'SessionPaused' && e.data.drainId === drainId,
        ).length;
        expect({
          context,
          id,
          pausedByDrain,
          paused: countEvents(events, 'SessionPaused'),
          resumeRequested: countEvents(events, 'SessionResumeRequested'),
          resumed: countEvents(events, 'SessionResumed'),
          terminated: countEvents(events, 'SessionTerminated'),
        }).toEqual({
          context,
          id,
          pausedByDrain: 1,
          paused: 1,
          resumeRequested: 1,
          resumed: 1,
          terminated: 0,
        });
        const now = await getJson<{ status: string; nodeId: string }>(client, `/v1/sessions/${id}`);
        expect({ context, id, status: now.status, onSource: now.nodeId === sourceId }).toEqual({
          context,
          id,
          status: 'running',
          onSource: false,
        });
      }
      await checker.assert({ clusterIds: [clusterId], sessionIds: sessions }, 10_000);

      // Closing every bill: each session's whole bill (two segments) must verify.
      for (const id of sessions) {
        expect((await post(`/v1/sessions/${id}/terminate`, admin)).status).toBe(200);
      }
      await checker.assert({ clusterIds: [clusterId], sessionIds: sessions }, 10_000);
    },
    150_000,
  );
});
