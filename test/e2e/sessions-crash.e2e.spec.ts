import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import {
  ApiClient,
  invariantChecker,
  InvariantChecker,
  listSessions,
  stuckHalfPlaced,
} from '../support/invariants';
import { gpuNode, report, sleep } from '../support/reports';

/**
 * Placement spans a node stream and a session stream. SIGKILL the compiled app in the middle
 * of a burst of concurrent session commands, start it again on the same DATA_DIR, and the
 * process reactor must finish or compensate every placement it cut: no card held twice or by
 * a session that is not running, no session stuck half placed, billing equal to running time.
 */

const ENV = { NODE_STALE_SEC: '3600', CORDON_SYNC_SEC: '3600' };
const CLUSTER = 'crash-s1';
const MODELS = ['L40S', 'HPC_GPU'] as const;
const OWNERS = ['ua', 'ub', 'uc'] as const;
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 5);
const BURST = 30;

// A deterministic PRNG, so a failing seed can be replayed (printed on failure).
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
let prng = SEED;
const random = (): number => {
  prng = (prng * 1103515245 + 12345) % 2147483648;
  return prng / 2147483648;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

type Reply = { status: number; body: Record<string, unknown> | null } | { status: 'lost' };

describe('killing the app in the middle of a burst of session commands', () => {
  let app: ChildApp;
  let admin: Record<string, string>;
  let client: ApiClient;
  let checker: InvariantChecker;
  const known: string[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    app = await startChildApp(ENV);
    admin = await app.auth('root', ['admin']);
    client = { url: () => app.url, headers: await app.auth('audit', ['auditor']) };
    checker = invariantChecker(client);
  }, 180_000);
  afterAll(async () => {
    await app?.kill('SIGKILL');
  });

  const call = async (method: string, route: string, body?: object): Promise<Reply> => {
    try {
      const res = await fetch(`${app.url}${route}`, {
        method,
        headers: { ...admin, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      return {
        status: res.status,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
      };
    } catch {
      return { status: 'lost' };
    }
  };

  it('converges after each SIGKILL: invariants hold, nothing half placed, billing verifies', async () => {
    const operator = await app.auth('op', ['operator'], [CLUSTER]);
    const fleet = report(CLUSTER, [
      gpuNode('crash-l40s-01', 4, 'L40S'),
      gpuNode('crash-l40s-02', 3, 'L40S'),
      gpuNode('crash-hpc-01', 4, 'HPC_GPU'),
      gpuNode('crash-hpc-02', 2, 'HPC_GPU'),
    ]);
    const registered = await fetch(`${app.url}/v1/inventory/reports`, {
      method: 'POST',
      headers: { ...operator, 'content-type': 'application/json' },
      body: JSON.stringify(fleet),
    });
    expect(registered.status).toBe(200);

    let acknowledged = 0;
    let lost = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Kill once some answers came back, plus a random bit: inside the burst, whatever the machine's speed.
      const killAfterReplies = 2 + Math.floor(random() * (BURST / 2));
      const killAfterMs = Math.floor(random() * 40);
      const context = `round ${round} (seed ${SEED}, kill ${killAfterMs} ms after ${killAfterReplies} replies)`;
      let replied = 0;
      let enough: () => void = () => undefined;
      const enoughReplies = new Promise<void>((resolve) => (enough = resolve));
      const ops = Array.from(
        { length: BURST },
        (): { what: string; send: () => Promise<Reply> } => {
          const r = random();
          if (r < 0.45 || known.length === 0) {
            const body = {
              kind: 'gpu',
              gpuModel: pick(MODELS),
              gpuCount: 1 + Math.floor(random() * 3),
              owner: pick(OWNERS),
            };
            return {
              what: `create ${JSON.stringify(body)}`,
              send: () => call('POST', '/v1/sessions', body),
            };
          }
          const id = pick(known);
          const action = pick(['pause', 'resume', 'terminate', 'pause', 'resume'] as const);
          return {
            what: `${action} ${id}`,
            send: () => call('POST', `/v1/sessions/${id}/${action}`),
          };
        },
      );
      const burst = Promise.all(
        ops.map(async (op, i) => {
          await sleep(i * 2); // spread a little, so the kill lands between commands and inside them
          const reply = await op.send();
          if (++replied >= killAfterReplies) enough();
          return { op, reply };
        }),
      );
      await Promise.race([enoughReplies, sleep(5000)]);
      await sleep(killAfterMs);
      await app.kill('SIGKILL');
      const replies = await burst;
      await app.restart();

      const acknowledgedTerminations: string[] = [];
      for (const { op, reply } of replies) {
        if (reply.status === 'lost') {
          lost++;
          continue;
        }
        acknowledged++;
        // Refusals are fine (409 for a move the session cannot make); server errors are not.
        if (reply.status >= 500)
          throw new Error(`${context}: ${op.what} → ${JSON.stringify(reply)}`);
        const id = reply.body?.sessionId;
        if (reply.status === 201 && typeof id === 'string') known.push(id);
        if (op.what.startsWith('terminate') && reply.status === 200)
          acknowledgedTerminations.push(op.what.split(' ')[1]);
      }
      // Sessions whose create answer was cut off exist too: the checker reads every session.
      const stuck = await stuckHalfPlaced(client, {
        windowMs: 6000,
        graceMs: 3000,
        clusterIds: [CLUSTER],
      });
      expect({ context, stuck }).toEqual({ context, stuck: [] });
      await checker.assert({ clusterIds: [CLUSTER] }, 10_000).catch((error: Error) => {
        throw new Error(`${context}: ${error.message}\n${app.output().slice(-2000)}`);
      });
      const all = new Map((await listSessions(client)).map((s) => [s.sessionId, s]));
      for (const id of known)
        expect({ context, id, listed: all.has(id) }).toMatchObject({ listed: true });
      for (const id of acknowledgedTerminations)
        expect({ context, id, status: all.get(id)?.status }).toMatchObject({
          status: 'terminated',
        });
      for (const s of all.values()) if (!known.includes(s.sessionId)) known.push(s.sessionId);
    }

    // End every session: then each one's whole bill is closed and must verify.
    for (const id of known) {
      const r = await call('POST', `/v1/sessions/${id}/force-terminate`);
      expect({ id, status: r.status }).toEqual({ id, status: 200 });
    }
    await checker.assert({ clusterIds: [CLUSTER] }, 10_000);
    const sessions = await listSessions(client);
    expect(sessions.filter((s) => s.status !== 'terminated')).toEqual([]);
    // The kills landed inside the bursts: some commands were answered, some were cut off.

    console.log(
      `seed ${SEED}: ${sessions.length} sessions, ${acknowledged} answered, ${lost} cut off`,
    );
    expect({ seed: SEED, someAnswered: acknowledged > 0, someLost: lost > 0 }).toEqual({
      seed: SEED,
      someAnswered: true,
      someLost: true,
    });
  }, 240_000);
});
