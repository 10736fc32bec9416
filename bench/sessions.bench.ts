import { performance } from 'node:perf_hooks';
import { LogEvent, Session, api, bearer, eventsAfter, gpuNode, registerNodes } from './client';
import { BenchSuite, Figure, median, percentile } from './lib';
import type { LoadResult } from './load';
import {
  REDIS_URL,
  clockTicks,
  cpuMs,
  failures,
  profiled,
  redisScratch,
  runLoad,
  startServer,
} from './procs';

/** 1,000 GPU nodes of 8 cards: 4 clusters of 250, L40S in two clusters, HPC_GPU in the other two. */
const CLUSTERS = 4;
const PER_CLUSTER = 250;
const CARDS = 8;
const MODELS = ['L40S', 'HPC_GPU'] as const;
const USERS = 20;
/** One-card sessions per round (BENCH_PLACEMENTS overrides): 25 % of the 8,000 cards, all placeable. */
const PLACEMENTS = Number(process.env.BENCH_PLACEMENTS ?? 2000);
const CONNECTIONS = 50;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/**
 * Placements made and force-terminated again before the measured run (BENCH_WARMUP overrides;
 * 0 measures a cold process): a control plane serves placements for days, so the figure is
 * taken with its code compiled and its caches filled, not during V8's first optimisations.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);

/** Queue ticker: 2 nodes of 8 MIG_1g cards full, then this many sessions queued and woken one by one. */
const QUEUE_NODES = 2;
const QUEUED = 60;

/** Every session of `status` (admin), paged. */
const listSessions = async (url: string, admin: string, status: string): Promise<string[]> => {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const q: string = `/v1/sessions?status=${status}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api<{ items: Session[]; nextCursor: string | null }>(url, 'GET', q, admin);
    ids.push(...page.body.items.map((s) => s.sessionId));
    cursor = page.body.nextCursor;
  } while (cursor);
  return ids;
};

/** Force-terminates every running session (admin), 20 at a time; fails on any refusal. */
const terminateAll = async (url: string, admin: string): Promise<number> => {
  const ids = await listSessions(url, admin, 'running');
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++];
      const res = await api(url, 'POST', `/v1/sessions/${id}/force-terminate`, admin);
      if (res.status !== 200) throw new Error(`force-terminate ${id} answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  return ids.length;
};

const sessionBodies = (): string[] =>
  MODELS.map((gpuModel) => JSON.stringify({ kind: 'gpu', gpuModel, gpuCount: 1 }));

/**
 * Placement throughput: a fresh app per round (embedded stores, no Redis), 1,000 GPU nodes
 * registered over HTTP, then exactly PLACEMENTS `POST /v1/sessions` (one card, models
 * alternating) from USERS user tokens over CONNECTIONS connections (autocannon in its own
 * process), after WARMUP placements made and force-terminated again on the same fleet. A
 * placement is a session the app reports `running` afterwards (GET /v1/sessions
 * ?status=running); placements/s is that count over the run's wall time. The ceiling is the bare
 * Fastify POST route fed the same bodies, the same count, the same connections.
 */
const placementFigures = async (): Promise<Figure[]> => {
  const admin = await bearer('bench-admin', ['admin']);
  const users = await Promise.all(
    Array.from({ length: USERS }, (_, u) => bearer(`user-${u}`, ['user'])),
  );
  const bodies = sessionBodies();
  const plan = (url: string, path: string, amount = PLACEMENTS) => ({
    url,
    connections: CONNECTIONS,
    warmupSec: 0,
    durationSec: 120,
    amount,
    request: { kind: 'rotate' as const, path, bodies, auth: users },
  });
  const bareRuns: LoadResult[] = [];
  const appRuns: LoadResult[] = [];
  const rates: number[] = [];
  const cpuPerPlacement: number[] = [];
  const ticks = clockTicks();
  const notes: string[] = [];
  const bare = await startServer('bare');
  try {
    // The ceiling warmed alike (it serves every round; the app is fresh each round).
    if (WARMUP > 0) await runLoad(plan(bare.url, '/echo', WARMUP));
    for (let round = 0; round < ROUNDS; round++) {
      bareRuns.push(await runLoad(plan(bare.url, '/echo')));
      const app = await startServer('app', { NODE_STALE_SEC: '3600', CORDON_SYNC_SEC: '3600' });
      try {
        const t0 = performance.now();
        for (let c = 0; c < CLUSTERS; c++) {
          for (let n = 0; n < PER_CLUSTER; n += 125) {
            const nodes = Array.from({ length: 125 }, (_, i) =>
              gpuNode(`gpu-${c}-${n + i}`, MODELS[c % MODELS.length]),
            );
            await registerNodes(app.url, admin, `bench-s${c}`, nodes);
          }
        }
        await app.call('settle');
        const registerMs = performance.now() - t0;
        let warmed = 0;
        if (WARMUP > 0) {
          const w = await runLoad(plan(app.url, '/v1/sessions', WARMUP));
          if (w.non2xx > 0) throw new Error(`warm-up: ${w.non2xx} non-2xx`);
          await app.call('settle');
          warmed = await terminateAll(app.url, admin);
          await app.call('settle');
        }
        const cpuBefore = cpuMs(app.pid, ticks);
        // Profiled (BENCH_PROFILE_DIR) with the settle: the work the run left behind counts too.
        const r = await profiled(app, async () => {
          const result = await runLoad(plan(app.url, '/v1/sessions'));
          await app.call('settle');
          return result;
        });
        appRuns.push(r);
        // The app's own CPU for the run and the projections and reactors it left behind: the
        // steadiest figure on a shared box (what other processes do does not count).
        const cpuRun = cpuMs(app.pid, ticks) - cpuBefore;
        const running = (await listSessions(app.url, admin, 'running')).length;
        const queued = (await listSessions(app.url, admin, 'queued')).length;
        // Placements are the sessions running afterwards, over the run's wall time.
        rates.push(Math.round(running / r.seconds));
        if (running > 0) cpuPerPlacement.push(Math.round((cpuRun / running) * 1000) / 1000);
        notes.push(
          `round ${round + 1}: ${running} running, ${queued} queued, ${r.non2xx} non-2xx, ` +
            `${r.seconds.toFixed(2)} s, p99 ${r.p99Ms} ms, app CPU ${Math.round(cpuRun)} ms ` +
            `(${cpuPerPlacement[cpuPerPlacement.length - 1]} ms per placement), ` +
            `register ${Math.round(registerMs)} ms, warm-up ${warmed} placed and terminated`,
        );
      } finally {
        await app.stop();
      }
    }
  } finally {
    await bare.stop();
  }
  console.log(`  ${notes.join('\n  ')}`);
  const rate = median(rates);
  const bareRate = median(bareRuns.map((r) => r.rps));
  const p99 = median(appRuns.map((r) => r.p99Ms));
  return [
    {
      name: 'sessions.placements_1000_nodes',
      value: rate,
      unit: 'placements/s',
      ceiling: { name: 'bare Fastify POST JSON route, same bodies and count', value: bareRate },
      target: `>= 1,000 placements/s (${PLACEMENTS} one-card sessions, ${CONNECTIONS} connections, ${USERS} users, median of ${ROUNDS} fresh fleets, each after ${WARMUP} placements terminated again${failures(appRuns)})`,
      met: rate >= 1000 && failures(appRuns) === '',
    },
    {
      name: 'sessions.placement_p99',
      value: p99,
      unit: 'ms',
      ceiling: { name: 'bare Fastify p99', value: median(bareRuns.map((r) => r.p99Ms)) },
      target: `informational (p50 ${median(appRuns.map((r) => r.p50Ms))} ms)`,
    },
    {
      name: 'sessions.placement_cpu',
      value: median(cpuPerPlacement),
      unit: 'ms CPU per placement',
      target:
        'informational (the app process alone, user + system from /proc, the run through ' +
        'settle; 1,000 placements/s on one core needs <= 1 ms)',
    },
  ];
};

/**
 * Queue ticker: BullMQ on Redis (unique prefix, deleted afterwards). Two nodes of 8 MIG_1g cards
 * are filled with one-card sessions, QUEUED more come back `queued`; then, one at a time, a
 * running session is terminated and the bench waits for the queue head's SessionStarted. The
 * figure is SessionStarted `at` − NodeCapacityReleased `at` of the terminated session (both
 * the app's clock: the release's `at` is when the terminate request entered the app, the start's
 * `at` when the queue pass that placed it began). Informational: terminate response → the
 * SessionStarted visible in the log (client clock, polled every 5 ms; an upper bound).
 */
const queueFigures = async (): Promise<Figure[]> => {
  const scratch = redisScratch();
  const app = await startServer('app', {
    REDIS_URL,
    REDIS_PREFIX: scratch.prefix,
    NODE_STALE_SEC: '3600',
    CORDON_SYNC_SEC: '3600',
  });
  try {
    const admin = await bearer('bench-admin', ['admin']);
    const user = await bearer('queue-user', ['user']);
    await registerNodes(
      app.url,
      admin,
      'bench-q',
      Array.from({ length: QUEUE_NODES }, (_, i) => gpuNode(`q-${i}`, 'MIG_1g')),
    );
    const body = { kind: 'gpu', gpuModel: 'MIG_1g', gpuCount: 1 };
    const running: string[] = [];
    for (let i = 0; i < QUEUE_NODES * CARDS; i++) {
      const s = await api<Session>(app.url, 'POST', '/v1/sessions', user, body);
      if (s.status !== 201 || s.body.status !== 'running')
        throw new Error(`fill: ${s.status} ${s.body.status}`);
      running.push(s.body.sessionId);
    }
    const queued: string[] = [];
    for (let i = 0; i < QUEUED; i++) {
      const s = await api<Session>(app.url, 'POST', '/v1/sessions', user, body);
      if (s.status !== 201 || s.body.status !== 'queued')
        throw new Error(`queue: ${s.status} ${s.body.status}`);
      queued.push(s.body.sessionId);
    }
    await app.call('settle');
    const waiting = new Set(queued);
    const fromRelease: number[] = [];
    const fromResponse: number[] = [];
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    for (let i = 0; i < QUEUED; i++) {
      const victim = running.shift()!;
      const head = await app.call<number>('head');
      const res = await api<Session>(app.url, 'POST', `/v1/sessions/${victim}/terminate`, user);
      const responded = Date.now();
      if (res.status !== 200) throw new Error(`terminate answered ${res.status}`);
      const until = Date.now() + 10_000;
      let started: LogEvent | undefined;
      let released: LogEvent | undefined;
      let seen = 0;
      while (!started && Date.now() < until) {
        const events = await eventsAfter(
          app.url,
          admin,
          'SessionStarted,NodeCapacityReleased',
          head,
        );
        released = events.find(
          (e) => e.type.startsWith('NodeCapacityReleased') && e.data.sessionId === victim,
        );
        started = events.find(
          (e) => e.type.startsWith('SessionStarted') && waiting.has(e.data.sessionId ?? ''),
        );
        seen = Date.now();
        if (!started) await sleep(5);
      }
      if (!started || !released) throw new Error(`round ${i}: no SessionStarted within 10 s`);
      waiting.delete(started.data.sessionId!);
      running.push(started.data.sessionId!);
      fromRelease.push(Date.parse(started.data.at) - Date.parse(released.data.at));
      fromResponse.push(seen - responded);
    }
    const p = (xs: number[], q: number) => percentile(xs, q);
    return [
      {
        name: 'sessions.queue_ticker_p99',
        value: p(fromRelease, 99),
        unit: 'ms',
        target:
          `<= 100 ms (NodeCapacityReleased at → SessionStarted at, ${fromRelease.length} samples; ` +
          `p50 ${p(fromRelease, 50)} ms, max ${Math.max(...fromRelease)} ms; BullMQ. Terminate ` +
          `response → SessionStarted seen in the log, 5 ms polls: p50 ${p(fromResponse, 50)}, ` +
          `p99 ${p(fromResponse, 99)} ms)`,
        met: fromRelease.length >= 50 && p(fromRelease, 99) <= 100,
      },
    ];
  } finally {
    await app.stop();
    await scratch.drop();
  }
};

const run = async (): Promise<Figure[]> => [
  ...(await placementFigures()),
  ...(await queueFigures()),
];

export const sessionsBench: BenchSuite = { name: 'sessions', run };
