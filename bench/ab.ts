/**
 * A/B of builds on one hot route, for a change too small to see in `npm run bench` on a noisy
 * box: each build's app (and bare Fastify, for scale) in a process of its own, loaded in turn
 * for short rounds, the order reversed every other round. Each round gives every server its
 * rate and its CPU per request (user + system from /proc, warm-up included in both the time
 * and the count); what is reported is, per server, the median over rounds of its figure
 * divided by the first build's in the same round, so drift on the box hits both sides alike.
 *
 *   npm run bench:ab -- NAME=BUILD [NAME=BUILD ...]
 *     BUILD: a compiled bench directory (this tree's is dist/bench), e.g. a copy made before
 *     a change: `cp -r dist /tmp/before` then `npm run bench:ab -- before=/tmp/before/bench
 *     after=dist/bench`. The first build is the reference. Identical builds read up to ~5 %
 *     apart: pass a second copy of the reference (`before2=/tmp/before2/bench`) as a control.
 *     A copy outside this tree takes its packages from this tree's node_modules (NODE_PATH).
 *     A build may carry settings for its server: `NAME=BUILD,KEY=VALUE[,KEY=VALUE...]` (e.g.
 *     `tuned=dist/bench,HEAP_GROWTH_PERCENT=0`), to A/B a setting on one build;
 *     `BENCH_NODE_FLAGS` there is node's command line for that server only (space-separated:
 *     `ss64=dist/bench,BENCH_NODE_FLAGS=--max-semi-space-size=64`), after the app's own
 *     (APP_NODE_FLAGS, as `npm start` runs it; `--max-semi-space-size=16` is V8's default).
 *   BENCH_AB_ROUTE=cordon|report|ladder  the no-op cordon (default), a single-node no-change
 *     report (of 1000 registered nodes in turn), or the cordon beside its work in steps (bench/ladder.ts) as routes of the same
 *     app process, named `NAME step`: each step's cost over HTTP is its figure less the step
 *     before's, and the cordon's less `cordon`'s is the lean path's own work
 *   BENCH_AB_FLEET=100x1000  the report route on the nodes suite's fleet (clusters x nodes, one
 *     node per request across it) instead of 1000 nodes: each app registers it first
 *   BENCH_AB_ROUNDS=10, BENCH_AB_SECONDS=3
 *   BENCH_AB_VERBOSE=1  also print each round's rate and CPU per request, per server
 */
import path from 'node:path';
import { TokenService } from '../apps/control-plane/src/platform/auth/token-service';
import { reportBody } from './fleet';
import { median, percentile } from './lib';
import type { RequestSpec } from './load';
import { LADDER_STEPS, ladderPath } from './ladder';
import { operatorTokens } from './nodes.bench';
import { BENCH_SECRET, BenchServer, runLoad, startServer, withServerCpu } from './procs';

type Contender = { name: string; server: BenchServer; request: RequestSpec };
type Round = { rps: number; cpuUs: number };

const CONNECTIONS = 100;
const WARMUP_SEC = 1;

type Build = { name: string; build: string; env: Record<string, string> };

const parseBuilds = (args: readonly string[]): Build[] => {
  const builds = args.map((arg) => {
    const at = arg.indexOf('=');
    if (at <= 0) throw new Error(`expected NAME=BUILD[,KEY=VALUE...], got ${arg}`);
    const [build, ...settings] = arg.slice(at + 1).split(',');
    const env: Record<string, string> = {};
    for (const setting of settings) {
      const eq = setting.indexOf('=');
      if (eq <= 0) throw new Error(`expected KEY=VALUE after ${build}, got ${setting}`);
      env[setting.slice(0, eq)] = setting.slice(eq + 1);
    }
    return { name: arg.slice(0, at), build: path.resolve(build), env };
  });
  if (builds.length === 0) throw new Error('usage: ab.js NAME=BUILD [NAME=BUILD ...]');
  return builds;
};

type Route = 'cordon' | 'report' | 'ladder';

/** Nodes registered in each app; the report route reports them one per request in turn. */
const REPORT_NODES = 1000;

/** BENCH_AB_FLEET=CLUSTERSxNODES: the report route on a fleet of that size instead. */
const fleetOf = (text: string | undefined): [number, number] | null => {
  if (text === undefined) return null;
  const m = /^(\d+)x(\d+)$/.exec(text);
  if (!m) throw new Error(`BENCH_AB_FLEET: expected CLUSTERSxNODES, got ${text}`);
  return [Number(m[1]), Number(m[2])];
};
const fleet = fleetOf(process.env.BENCH_AB_FLEET);

/** One app from `build`, with a node registered and cordoned, and the route's requests. */

const startApp = async (
  { name, build, env }: Build,
  route: Route,
  headers: Record<string, string>,
): Promise<Contender[]> => {
  const server = await startServer(
    'app',
    { CORDON_SYNC_SEC: '3600', ...(route === 'ladder' ? { BENCH_LADDER: '1' } : {}), ...env },
    build,
  );
  const registered = await fetch(`${server.url}/v1/inventory/reports`, {
    method: 'POST',
    headers,
    body: reportBody(0, 0, REPORT_NODES),
  });
  const { nodes } = (await registered.json()) as { nodes: Array<{ nodeId: string }> };
  const nodeId = nodes[0].nodeId;
  const cordonPath = `/v1/nodes/${nodeId}/cordon`;
  const body = JSON.stringify({ reason: 'bench' });
  const cordoned = await fetch(`${server.url}${cordonPath}`, { method: 'POST', headers, body });
  if (cordoned.status !== 200) throw new Error(`${name}: cordon answered ${cordoned.status}`);
  const post = (path: string, sent: string): RequestSpec => ({
    kind: 'fixed',
    method: 'POST',
    path,
    headers,
    body: sent,
  });
  if (route === 'report' && fleet !== null) {
    // The nodes suite's fleet, registered as that suite registers it, reported one node per
    // request across all of it from each cluster's operator token.
    const [clusters, perCluster] = fleet;
    await server.call('register', { clusters, perCluster });
    await server.call('settle');
    const request: RequestSpec = {
      kind: 'reports',
      path: '/v1/inventory/reports',
      clusters,
      perCluster,
      batch: 1,
      auth: await operatorTokens(clusters),
    };
    return [{ name, server, request }];
  }
  if (route === 'report') {
    // One node per request, over a thousand of them, as the nodes suite's fleet is reported
    // (a report waits for another of the same node: a hundred at once of one node would
    // measure that queue, not the route).
    const request: RequestSpec = {
      kind: 'rotate',
      path: '/v1/inventory/reports',
      bodies: Array.from({ length: REPORT_NODES }, (_, i) => reportBody(0, i, 1)),
      auth: [headers.authorization],
    };
    return [{ name, server, request }];
  }
  const cordon = { name, server, request: post(cordonPath, body) };
  if (route === 'cordon') return [cordon];
  // The real cordon first (the reference), then its work in steps in the same process.
  return [
    cordon,
    ...LADDER_STEPS.map((step) => ({
      name: `${name} ${step}`,
      server,
      request: post(ladderPath(step, nodeId), body),
    })),
  ];
};

const main = async (): Promise<void> => {
  const builds = parseBuilds(process.argv.slice(2));
  const route = (process.env.BENCH_AB_ROUTE ?? 'cordon') as Route;
  if (route !== 'cordon' && route !== 'report' && route !== 'ladder') {
    throw new Error(`unknown route ${route}`);
  }
  const rounds = Number(process.env.BENCH_AB_ROUNDS ?? 10);
  const seconds = Number(process.env.BENCH_AB_SECONDS ?? 3);
  const admin = `Bearer ${await new TokenService(BENCH_SECRET).sign({ sub: 'bench-admin', roles: ['admin'] })}`;
  const headers = { 'content-type': 'application/json', authorization: admin };

  const contenders: Contender[] = [];
  try {
    for (const build of builds) contenders.push(...(await startApp(build, route, headers)));
    contenders.push({
      name: 'bare Fastify',
      server: await startServer('bare'),
      request: {
        kind: 'fixed',
        method: 'POST',
        path: '/echo',
        headers,
        body: '{"reason":"bench"}',
      },
    });
    const results = new Map<string, Round[]>(contenders.map((c) => [c.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? contenders : [...contenders].reverse();
      for (const c of order) {
        // The CPU spans the warm-up too, its requests counted at the measured rate.
        const run = await withServerCpu(c.server, WARMUP_SEC, () =>
          runLoad({
            url: c.server.url,
            connections: CONNECTIONS,
            warmupSec: WARMUP_SEC,
            durationSec: seconds,
            request: c.request,
          }),
        );
        if (run.non2xx + run.errors + run.timeouts > 0) {
          throw new Error(
            `${c.name}: ${run.non2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts`,
          );
        }
        const cpuUs = run.serverCpuUs ?? 0;
        results.get(c.name)!.push({ rps: run.rps, cpuUs });
        if (process.env.BENCH_AB_VERBOSE) {
          process.stdout.write(
            `round ${round + 1} ${c.name}: ${Math.round(run.rps)} req/s, ${cpuUs.toFixed(1)} µs CPU per request, p99 ${run.p99Ms} ms\n`,
          );
        }
      }
    }
    const reference = results.get(contenders[0].name)!;
    process.stdout.write(
      `route: ${route}; ${rounds} rounds of ${seconds} s at ${CONNECTIONS} connections; ratios to ${contenders[0].name}, same round (median, quartiles)\n`,
    );
    for (const c of contenders) {
      const mine = results.get(c.name)!;
      const summary = (f: (r: Round, i: number) => number): string => {
        const xs = mine.map(f);
        return `${median(xs).toFixed(3)} (${percentile(xs, 25).toFixed(3)}-${percentile(xs, 75).toFixed(3)})`;
      };
      process.stdout.write(
        `  ${c.name.padEnd(14)} ${Math.round(median(mine.map((r) => r.rps)))} req/s, ${median(mine.map((r) => r.cpuUs)).toFixed(1)} µs CPU per request; ` +
          `rate ${summary((r, i) => r.rps / reference[i].rps)}, CPU ${summary((r, i) => r.cpuUs / reference[i].cpuUs)}\n`,
      );
    }
  } finally {
    await Promise.all([...new Set(contenders.map((c) => c.server))].map((s) => s.stop()));
  }
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
