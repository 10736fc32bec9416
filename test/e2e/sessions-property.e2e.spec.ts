import fc from 'fast-check';
import { startApp, TestApp } from '../support/app';
import { invariantChecker, InvariantChecker } from '../support/invariants';
import { gpuNode, NodeInput, report } from '../support/reports';

/**
 * Random interleavings of session commands and node changes over a small GPU fleet, against
 * one real app (BullMQ on Redis): after every batch the placement and billing invariants hold.
 * Each run has its own cluster and takes its nodes offline at the end, so runs do not meet.
 */

const MODELS = ['L40S', 'HPC_GPU'] as const;
const OWNERS = ['pa', 'pb', 'pc'] as const;
const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 60);
const TIME_LIMIT_MS = Number(process.env.PROPERTY_TIME_MS ?? 60_000);

type FleetNode = { model: number; cards: number };
type Op =
  | { kind: 'create'; model: number; count: number; owner: number }
  | { kind: 'pause' | 'resume' | 'terminate' | 'force-terminate'; session: number }
  | { kind: 'offline' | 'online'; node: number }
  | { kind: 'register'; model: number; cards: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      model: fc.nat(1),
      count: fc.integer({ min: 1, max: 3 }),
      owner: fc.nat(2),
    }),
  },
  ...(['pause', 'resume', 'terminate', 'force-terminate'] as const).map((kind) => ({
    weight: kind === 'force-terminate' ? 1 : 3,
    arbitrary: fc.record({ kind: fc.constant(kind), session: fc.nat(40) }),
  })),
  ...(['offline', 'online'] as const).map((kind) => ({
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant(kind), node: fc.nat(10) }),
  })),
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('register' as const),
      model: fc.nat(1),
      cards: fc.integer({ min: 2, max: 4 }),
    }),
  },
);

const fleetArb = fc.array(fc.record({ model: fc.nat(1), cards: fc.integer({ min: 2, max: 4 }) }), {
  minLength: 3,
  maxLength: 4,
});
/** Each batch runs its commands concurrently; batches run one after the other. */
const batchesArb = fc.array(fc.array(opArb, { minLength: 1, maxLength: 3 }), {
  minLength: 4,
  maxLength: 14,
});

describe('sessions under random interleavings (property)', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let checker: InvariantChecker;
  let runNo = 0;

  beforeAll(async () => {
    t = await startApp({ NODE_STALE_SEC: '300', CORDON_SYNC_SEC: '3600' });
    admin = await t.auth('root', ['admin']);
    const auditor = await t.auth('audit', ['auditor']);
    checker = invariantChecker({ url: () => t.url, headers: auditor });
  });
  afterAll(async () => t?.close());

  const send = async (
    method: string,
    route: string,
    headers: Record<string, string>,
    body?: object,
  ): Promise<{ status: number; body: Record<string, unknown> | null }> => {
    const res = await fetch(`${t.url}${route}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
    };
  };

  const runOnce = async (fleet: FleetNode[], batches: Op[][]): Promise<void> => {
    const clusterId = `prop-${++runNo}-${Date.now().toString(36)}`;
    const operator = await t.auth('op', ['operator'], [clusterId]);
    const users = await Promise.all(OWNERS.map((o) => t.auth(o, ['user'])));
    const nodes: Array<NodeInput & { ready: boolean }> = [];
    const sessions: string[] = [];
    const log: string[] = [`cluster ${clusterId}, fleet ${JSON.stringify(fleet)}`];
    const scope = (): { clusterIds: string[]; sessionIds: string[] } => ({
      clusterIds: [clusterId],
      sessionIds: sessions,
    });
    const fail = (why: string): never => {
      throw new Error(`${why}\ncommands:\n  ${log.join('\n  ')}`);
    };
    const reportNode = async (n: NodeInput & { ready: boolean }): Promise<number> => {
      const { ready, ...input } = n;
      const r = await send(
        'POST',
        '/v1/inventory/reports',
        operator,
        report(clusterId, [{ ...input, kubeletReady: ready }]),
      );
      return r.status;
    };
    const addNode = async (model: number, cards: number): Promise<string> => {
      const n = {
        ...gpuNode(`${clusterId}-n${nodes.length}`, cards, MODELS[model]),
        ready: true,
      };
      nodes.push(n);
      return `register ${n.hostname} (${cards}× ${MODELS[model]}) → ${await reportNode(n)}`;
    };
    // Session commands: 200 (done or a no-op) or 409 (refused) are fine; anything else is a bug.
    const act = async (op: Op): Promise<string> => {
      switch (op.kind) {
        case 'create': {
          const owner = op.owner;
          const r = await send('POST', '/v1/sessions', users[owner], {
            kind: 'gpu',
            gpuModel: MODELS[op.model],
            gpuCount: op.count,
          });
          if (r.status !== 201 || !r.body) fail(`create → ${r.status} ${JSON.stringify(r.body)}`);
          const id = String(r.body!.sessionId);
          sessions.push(id);
          return `create ${op.count}× ${MODELS[op.model]} for ${OWNERS[owner]} → s${sessions.length - 1} ${String(r.body!.status)}`;
        }
        case 'pause':
        case 'resume':
        case 'terminate':
        case 'force-terminate': {
          if (sessions.length === 0) return `${op.kind} (no session yet)`;
          const i = op.session % sessions.length;
          const r = await send('POST', `/v1/sessions/${sessions[i]}/${op.kind}`, admin);
          if (r.status !== 200 && r.status !== 409)
            fail(`${op.kind} s${i} → ${r.status} ${JSON.stringify(r.body)}`);
          const outcome =
            r.status === 200
              ? String(r.body?.status)
              : String((r.body?.error as { code?: string } | undefined)?.code);
          return `${op.kind} s${i} → ${r.status} ${outcome}`;
        }
        case 'offline':
        case 'online': {
          const n = nodes[op.node % nodes.length];
          n.ready = op.kind === 'online';
          const status = await reportNode(n);
          if (status !== 200) fail(`report ${n.hostname} ${op.kind} → ${status}`);
          return `${n.hostname} ${op.kind} → ${status}`;
        }
        case 'register':
          return addNode(op.model, op.cards);
        default:
          return fail(`unknown op ${JSON.stringify(op)}`);
      }
    };

    try {
      for (const n of fleet) log.push(await addNode(n.model, n.cards));
      for (const [b, batch] of batches.entries()) {
        const lines = await Promise.all(batch.map(act));
        log.push(`batch ${b}: ${lines.join(' | ')}`);
        try {
          await checker.assert(scope(), 2500);
        } catch (error) {
          fail((error as Error).message);
        }
      }
    } finally {
      // Out of the way of later runs: nodes offline (their sessions end), the rest terminated.
      for (const n of nodes) {
        n.ready = false;
        await reportNode(n);
      }
      for (const id of sessions) await send('POST', `/v1/sessions/${id}/force-terminate`, admin);
    }
    try {
      await checker.assert(scope(), 2500);
    } catch (error) {
      fail(`after the cleanup: ${(error as Error).message}`);
    }
    const left = await Promise.all(
      sessions.map(async (id) => (await send('GET', `/v1/sessions/${id}`, admin)).body?.status),
    );
    if (left.some((s) => s !== 'terminated')) fail(`not all terminated: ${left.join(',')}`);
  };

  it('keeps cards, sessions and billing consistent', async () => {
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(fleetArb, batchesArb, (fleet, batches) => runOnce(fleet, batches)),
      {
        numRuns: NUM_RUNS,
        interruptAfterTimeLimit: TIME_LIMIT_MS,
        markInterruptAsFailure: false,
        endOnFailure: process.env.PROPERTY_SHRINK !== '1',
        verbose: 1,
      },
    );
    console.log(`${runNo} runs in ${Date.now() - started} ms`);
  }, 120_000);
});
