import { TokenService } from '../apps/control-plane/src/platform/auth/token-service';
import { BenchSuite, Figure, median } from './lib';
import type { LoadResult, RequestSpec } from './load';
import {
  BENCH_SECRET,
  failures,
  loadSeconds,
  medianCpuUs,
  quiet,
  runLoad,
  startServer,
  withServerCpu,
} from './procs';
import { reportBody } from './fleet';

const CONNECTIONS = 100;
const ROUNDS = 3;

type Medians = { rps: number; p99Ms: number; cpuUs: number; runs: LoadResult[] };

const medians = (runs: LoadResult[]): Medians => ({
  rps: median(runs.map((r) => r.rps)),
  p99Ms: median(runs.map((r) => r.p99Ms)),
  cpuUs: medianCpuUs(runs),
  runs,
});

/**
 * HTTP overhead of the stack: a bare Fastify 5 POST route (the ceiling) against the real app's
 * cheapest authenticated command, POST /v1/nodes/{id}/cordon on a node already cordoned (JWT
 * check, DTO validation, load + decide → no-op, settle, Node view). Each server runs in a
 * process of its own, the load generator (autocannon, 100 connections) in a third; rounds
 * alternate bare and app so drifting load on the shared box hits both alike.
 *
 * One more server, outside the app, asks what any implementation keeps: the cordon's work (token,
 * role, id and body checks, a no-op decision, metrics, the same Node answer) on bare Fastify
 * with no framework and none of the app's code (bench/lean.ts).
 *
 * Informational rungs between Nest's floor and the cordon show where the app's cost lies:
 * GET /health/live (the app's global hooks and Nest, no token), GET /v1/nodes/{id} (the token
 * checked, the id validated, the node read and shown; no command), and the same cordon on an
 * app that serves it through Nest's request path instead of the lean one (lean-route.ts).
 *
 * The app writes each turn's responses together at its end (http/end-of-turn.ts). Two more
 * servers show what that is worth: the same cordon on an app writing each response as soon as
 * it is ready, and bare Fastify writing at the end of the turn as the app does.
 *
 * The apps run at LOG_LEVEL=silent, as every suite's servers do (procs.ts), except one more:
 * the same cordon at the default level (info), which writes one JSON request line per request
 * (to /dev/null here: the cheapest sink a deployment could give it).
 */
const run = async (): Promise<Figure[]> => {
  const bare = await startServer('bare');
  // The framework floor: the same trivial route on bare Express and on Nest with each adapter.
  const floor = {
    'bare-express': await startServer('bare-express'),
    'nest-fastify': await startServer('nest-fastify'),
    'nest-express': await startServer('nest-express'),
  };
  // Nothing but the measured cordons may append during the run, so that the no-op check below
  // holds: no cordon_sync_overdue reminder (15 s by default) and no heartbeat timeout of the
  // one node, which reports once (the run outlasts the default 300 s).
  const quietApp = { CORDON_SYNC_SEC: '3600', NODE_STALE_SEC: '3600' };
  const app = await startServer('app', quietApp);
  const nest = await startServer('app', { ...quietApp, BENCH_NEST_ONLY: '1' });
  const logged = await startServer('app', { ...quietApp, LOG_LEVEL: 'info' });
  // Each response written as soon as it is ready, not at the end of the loop's turn.
  const eachSend = await startServer('app', { ...quietApp, BENCH_EACH_SEND: '1' });
  // The ceiling with the app's end-of-turn writes: what the same trick gives bare Fastify.
  const bareBatched = await startServer('bare', { BENCH_END_OF_TURN: '1' });
  let lean: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const tokens = new TokenService(BENCH_SECRET);
    const admin = `Bearer ${await tokens.sign({ sub: 'bench-admin', roles: ['admin'] })}`;
    const headers = { 'content-type': 'application/json', authorization: admin };

    // One node, registered by one report and cordoned once: every measured cordon is a no-op.
    const registered = await fetch(`${app.url}/v1/inventory/reports`, {
      method: 'POST',
      headers,
      body: reportBody(0, 0, 1),
    });
    const { nodes } = (await registered.json()) as { nodes: Array<{ nodeId: string }> };
    const nodeId = nodes[0].nodeId;
    const cordonPath = `/v1/nodes/${nodeId}/cordon`;
    const first = await fetch(`${app.url}${cordonPath}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ reason: 'bench' }),
    });
    if (first.status !== 200) throw new Error(`cordon answered ${first.status}`);
    // The same node (its id derives from cluster and hostname), cordoned, on the Nest-path app
    // and on the app that logs.
    for (const other of [nest, logged, eachSend]) {
      for (const [path, body] of [
        ['/v1/inventory/reports', reportBody(0, 0, 1)],
        [cordonPath, JSON.stringify({ reason: 'bench' })],
      ]) {
        const res = await fetch(`${other.url}${path}`, { method: 'POST', headers, body });
        if (res.status !== 200) throw new Error(`${path} answered ${res.status} on ${other.url}`);
      }
    }
    // The cordon's work without the app, answering the Node the app answered (bench/lean.ts).
    lean = await startServer('lean-fastify', { BENCH_NODE_VIEW: await first.text() });
    const leanServer = lean;
    const headBefore = await app.call<number>('head');

    const { warmupSec, durationSec } = loadSeconds();
    /** One measured run against `url`: the same connections and seconds for every route. */
    const load = (url: string, request: RequestSpec): Promise<LoadResult> =>
      runLoad({ url, connections: CONNECTIONS, warmupSec, durationSec, request });
    const body = JSON.stringify({ reason: 'bench' });
    /** The ceilings' route: bare Fastify's and each framework floor's JSON echo, same body. */
    const echo: RequestSpec = { kind: 'fixed', method: 'POST', path: '/echo', headers, body };
    const bareRuns: LoadResult[] = [];
    const appRuns: LoadResult[] = [];
    const liveRuns: LoadResult[] = [];
    const readRuns: LoadResult[] = [];
    const leanRuns: LoadResult[] = [];
    const nestRuns: LoadResult[] = [];
    const loggedRuns: LoadResult[] = [];
    const eachSendRuns: LoadResult[] = [];
    const bareBatchedRuns: LoadResult[] = [];
    const floorRuns: Record<keyof typeof floor, LoadResult[]> = {
      'bare-express': [],
      'nest-fastify': [],
      'nest-express': [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      const b = await withServerCpu(bare, warmupSec, () => load(bare.url, echo));
      bareRuns.push(b);
      const a = await withServerCpu(app, warmupSec, () =>
        load(app.url, { kind: 'fixed', method: 'POST', path: cordonPath, headers, body }),
      );
      appRuns.push(a);
      await quiet(app);
      leanRuns.push(
        await withServerCpu(leanServer, warmupSec, () =>
          load(leanServer.url, { kind: 'fixed', method: 'POST', path: cordonPath, headers, body }),
        ),
      );
      nestRuns.push(
        await load(nest.url, { kind: 'fixed', method: 'POST', path: cordonPath, headers, body }),
      );
      await quiet(nest);
      loggedRuns.push(
        await load(logged.url, { kind: 'fixed', method: 'POST', path: cordonPath, headers, body }),
      );
      await quiet(logged);
      eachSendRuns.push(
        await withServerCpu(eachSend, warmupSec, () =>
          load(eachSend.url, { kind: 'fixed', method: 'POST', path: cordonPath, headers, body }),
        ),
      );
      await quiet(eachSend);
      bareBatchedRuns.push(
        await withServerCpu(bareBatched, warmupSec, () => load(bareBatched.url, echo)),
      );
      liveRuns.push(
        await load(app.url, { kind: 'fixed', method: 'GET', path: '/health/live', headers: {} }),
      );
      readRuns.push(
        await load(app.url, {
          kind: 'fixed',
          method: 'GET',
          path: `/v1/nodes/${nodeId}`,
          headers: { authorization: admin },
        }),
      );
      await quiet(app);
      for (const kind of Object.keys(floor) as Array<keyof typeof floor>) {
        floorRuns[kind].push(await load(floor[kind].url, echo));
      }
    }
    const appended = (await app.call<number>('head')) - headBefore;
    if (appended !== 0) throw new Error(`no-op cordons appended ${appended} events`);

    const b = medians(bareRuns);
    const a = medians(appRuns);
    const live = medians(liveRuns);
    const read = medians(readRuns);
    const floorCordon = medians(leanRuns);
    const nestCordon = medians(nestRuns);
    const loggedCordon = medians(loggedRuns);
    const eachSendCordon = medians(eachSendRuns);
    const bareBatchedEcho = medians(bareBatchedRuns);
    const f = {
      bareExpress: medians(floorRuns['bare-express']),
      nestFastify: medians(floorRuns['nest-fastify']),
      nestExpress: medians(floorRuns['nest-express']),
    };
    return [
      {
        name: 'http.bare_express_post_json',
        value: f.bareExpress.rps,
        unit: 'req/s',
        ceiling: { name: 'bare Fastify 5, same run', value: b.rps },
        target: `informational (p99 ${f.bareExpress.p99Ms} ms)`,
      },
      {
        name: 'http.nest_fastify_echo',
        value: f.nestFastify.rps,
        unit: 'req/s',
        ceiling: { name: 'bare Fastify 5, same run', value: b.rps },
        target: `platform choice: Nest's floor on Fastify (p99 ${f.nestFastify.p99Ms} ms)`,
      },
      {
        name: 'http.nest_express_echo',
        value: f.nestExpress.rps,
        unit: 'req/s',
        ceiling: { name: 'Nest on Fastify, same route, same run', value: f.nestFastify.rps },
        target: `platform choice: Nest's floor on Express (p99 ${f.nestExpress.p99Ms} ms)`,
      },
      {
        name: 'http.bare_fastify_post_json',
        value: b.rps,
        unit: 'req/s',
        target: `ceiling (p99 ${b.p99Ms} ms)`,
      },
      {
        name: 'http.app_health_live',
        value: live.rps,
        unit: 'req/s',
        ceiling: { name: 'bare Fastify 5, same run', value: b.rps },
        target: `informational: the app's hooks and Nest, no token (p99 ${live.p99Ms} ms)${failures(liveRuns)}`,
      },
      {
        name: 'http.app_get_node',
        value: read.rps,
        unit: 'req/s',
        ceiling: { name: 'bare Fastify 5, same run', value: b.rps },
        target: `informational: token, id validation, read model, Node view; no command (p99 ${read.p99Ms} ms)${failures(readRuns)}`,
      },
      {
        name: 'http.lean_fastify_cordon_noop',
        value: floorCordon.rps,
        unit: 'req/s',
        ceiling: { name: 'bare Fastify 5, same run', value: b.rps },
        target: `informational: the cordon's work on bare Fastify, no app, same answer (p99 ${floorCordon.p99Ms} ms)${failures(leanRuns)}`,
      },
      {
        name: 'http.app_cordon_noop_nest_path',
        value: nestCordon.rps,
        unit: 'req/s',
        ceiling: { name: 'bare Fastify 5, same run', value: b.rps },
        target: `informational: the same cordon through Nest's request path, not the lean one (p99 ${nestCordon.p99Ms} ms)${failures(nestRuns)}`,
      },
      {
        name: 'http.app_cordon_noop_logged',
        value: loggedCordon.rps,
        unit: 'req/s',
        ceiling: { name: 'the same cordon at LOG_LEVEL=silent, same run', value: a.rps },
        target: `informational: the default LOG_LEVEL=info, a request line each (p99 ${loggedCordon.p99Ms} ms)${failures(loggedRuns)}`,
      },
      {
        name: 'http.app_cordon_noop_each_send',
        value: eachSendCordon.rps,
        unit: 'req/s',
        ceiling: {
          name: 'the same cordon, responses written at the end of the turn',
          value: a.rps,
        },
        target: `informational: each response written as soon as it is ready (p99 ${eachSendCordon.p99Ms} ms, ${eachSendCordon.cpuUs} µs CPU per request)${failures(eachSendRuns)}`,
      },
      {
        name: 'http.bare_fastify_end_of_turn',
        value: bareBatchedEcho.rps,
        unit: 'req/s',
        ceiling: { name: 'bare Fastify 5, same run', value: b.rps },
        target: `informational: bare Fastify writing its responses at the end of the turn, as the app does (p99 ${bareBatchedEcho.p99Ms} ms, ${bareBatchedEcho.cpuUs} µs CPU per request)${failures(bareBatchedRuns)}`,
      },
      {
        name: 'http.app_cordon_noop',
        value: a.rps,
        unit: 'req/s',
        ceiling: { name: 'bare Fastify 5 POST JSON route, same run', value: b.rps },
        target: `>= 60 % of ceiling${failures(appRuns)}${failures(bareRuns)}`,
        met: a.rps / b.rps >= 0.6 && failures(appRuns) === '',
      },
      {
        name: 'http.app_cordon_noop_cpu',
        value: a.cpuUs,
        unit: 'µs CPU per request (server process)',
        ceiling: { name: "bare Fastify's echo, same run", value: b.cpuUs },
        target: `informational: user + system from /proc, warm-up included; the lean floor ${floorCordon.cpuUs} µs. Bare's over the app's (${(b.cpuUs / a.cpuUs).toFixed(2)}) is the rate ratio the server's CPU alone would give`,
      },
      {
        name: 'http.app_cordon_noop_p99',
        value: a.p99Ms,
        unit: 'ms',
        ceiling: { name: 'bare Fastify p99', value: b.p99Ms },
        target: '<= 15 ms',
        met: a.rps > 0 && a.p99Ms <= 15,
      },
    ];
  } finally {
    await Promise.all([
      bare.stop(),
      app.stop(),
      nest.stop(),
      logged.stop(),
      eachSend.stop(),
      bareBatched.stop(),
      ...(lean ? [lean.stop()] : []),
      ...Object.values(floor).map((s) => s.stop()),
    ]);
  }
};

export const httpBench: BenchSuite = { name: 'http', run };
