import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { BenchSuite, Figure, machine, median } from './lib';
import type { LoadResult, RequestSpec } from './load';
import { operatorTokens } from './nodes.bench';
import {
  BenchServer,
  REDIS_URL,
  clockTicks,
  cpuMs,
  failures,
  loadSeconds,
  medianCpuUs,
  profiled,
  quiet,
  redisScratch,
  runLoad,
  startServer,
  withServerCpu,
} from './procs';

/**
 * The fleet, `<clusters>x<nodes per cluster>` (BENCH_PRODUCTION_FLEET): 100 x 1000 by default,
 * as the nodes suite; a small one (`2x1000`) to try the suite out on a busy box.
 */
const fleet = (): { clusters: number; perCluster: number } => {
  const text = process.env.BENCH_PRODUCTION_FLEET ?? '100x1000';
  const m = /^(\d+)x(\d+)$/.exec(text);
  if (!m) throw new Error(`BENCH_PRODUCTION_FLEET must read <clusters>x<nodes>, not ${text}`);
  return { clusters: Number(m[1]), perCluster: Number(m[2]) };
};

const BATCH = 100;
const CONNECTIONS = 100;
/** As the nodes suite: 10 connections keep the app saturated with 100-node requests. */
const BATCH_CONNECTIONS = 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** The Redis server's pid, when it runs on this machine (its CPU is read from /proc). */
const redisPid = async (): Promise<number | null> => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const info = await redis.info('server');
    const pid = Number(/^process_id:(\d+)/m.exec(info)?.[1]);
    try {
      readFileSync(`/proc/${pid}/stat`);
      return pid;
    } catch {
      return null; // another machine (or container): not counted
    }
  } finally {
    redis.disconnect();
  }
};

/** `run`, with the Redis server's CPU per request over it (µs; warm-up counted as in withServerCpu). */
const withRedisCpu = async (
  pid: number | null,
  warmupSec: number,
  run: () => Promise<LoadResult>,
): Promise<{ result: LoadResult; redisUs: number | null }> => {
  if (pid === null) return { result: await run(), redisUs: null };
  const ticks = clockTicks();
  const before = cpuMs(pid, ticks);
  const result = await run();
  const requests = result.rps * (result.seconds + warmupSec);
  const used = cpuMs(pid, ticks) - before;
  return { result, redisUs: requests > 0 ? (used * 1000) / requests : 0 };
};

/** What a load run sends: `batch` nodes a request, with an observedAt on each node or not. */
type Kind = 'batch' | 'single' | 'batchOrdered' | 'singleOrdered';
const KINDS: ReadonlyArray<{ kind: Kind; batch: number; ordered: boolean }> = [
  { kind: 'batch', batch: BATCH, ordered: false },
  { kind: 'single', batch: 1, ordered: false },
  { kind: 'batchOrdered', batch: BATCH, ordered: true },
  { kind: 'singleOrdered', batch: 1, ordered: true },
];
type Runs = Record<Kind, LoadResult[]>;
const noRuns = (): Runs => ({ batch: [], single: [], batchOrdered: [], singleOrdered: [] });

/**
 * The production hot path: the same fleet served by the embedded app (heartbeats in memory,
 * in-process jobs) and by the app with REDIS_URL (heartbeats and idempotency keys in Redis,
 * BullMQ; a REDIS_PREFIX of its own, its keys deleted afterwards), each registered through
 * InventoryService and settled, then no-change reports over HTTP in rounds that alternate the
 * two: embedded, Redis, embedded, Redis. Each target is judged on the median of the rounds'
 * ratios (Redis over the embedded run just before it), so the box's drift between rounds hits
 * both alike. The judged figures send the nodes suite's bodies (no observedAt: nothing to read
 * from Redis); the same loads with an observedAt on every node (a report of them reads their
 * heartbeats from Redis) are measured beside them. NODE_STALE_SEC=3600: no node times out.
 */
const productionFigures = async (): Promise<Figure[]> => {
  const { clusters, perCluster } = fleet();
  const nodes = clusters * perCluster;
  const scratch = redisScratch();
  const embedded = await startServer('app', { NODE_STALE_SEC: '3600' });
  let redis: BenchServer | null = null;
  try {
    redis = await startServer('app', {
      NODE_STALE_SEC: '3600',
      REDIS_URL,
      REDIS_PREFIX: scratch.prefix,
    });
    const register = async (server: BenchServer): Promise<number> => {
      const t0 = performance.now();
      const registered = await server.call<number>('register', { clusters, perCluster });
      if (registered !== nodes) throw new Error(`registered ${registered} nodes, not ${nodes}`);
      // Projections and reactors (the Redis app's BullMQ offline timers) have caught up.
      await server.call('settle');
      await quiet(server);
      return (performance.now() - t0) / 1000;
    };
    const registerSec = { embedded: await register(embedded), redis: await register(redis) };
    const auth = await operatorTokens(clusters);
    const heads = {
      embedded: await embedded.call<unknown>('head'),
      redis: await redis.call<unknown>('head'),
    };
    const pid = await redisPid();
    const { warmupSec, durationSec } = loadSeconds();
    // Every ordered report carries the same time: in order (not older than the newest), unchanged.
    const observedAt = new Date().toISOString();
    const plan = (url: string, batch: number, ordered: boolean) => ({
      url,
      connections: batch > 1 ? BATCH_CONNECTIONS : CONNECTIONS,
      warmupSec,
      durationSec,
      request: {
        kind: 'reports',
        path: '/v1/inventory/reports',
        clusters,
        perCluster,
        batch,
        auth,
        ...(ordered ? { observedAt } : {}),
      } satisfies RequestSpec,
    });
    const servers = { embedded, redis };
    const runs = { embedded: noRuns(), redis: noRuns() };
    /** redis-server's CPU per request during each side's runs (µs). */
    const redisUs = { embedded: noUs(), redis: noUs() };
    for (let round = 0; round < ROUNDS; round++) {
      for (const { kind, batch, ordered } of KINDS) {
        for (const side of ['embedded', 'redis'] as const) {
          const server = servers[side];
          const { result, redisUs: us } = await withRedisCpu(pid, warmupSec, () =>
            withServerCpu(server, warmupSec, () =>
              profiled(server, () => runLoad(plan(server.url, batch, ordered))),
            ),
          );
          await quiet(server);
          runs[side][kind].push(result);
          redisUs[side][kind].push(us ?? 0);
        }
      }
    }
    for (const side of ['embedded', 'redis'] as const) {
      const head = await servers[side].call<unknown>('head');
      if (JSON.stringify(head) !== JSON.stringify(heads[side])) {
        throw new Error(`no-change reports appended events on the ${side} app`);
      }
    }

    const rps = (rs: LoadResult[]) => median(rs.map((r) => r.rps));
    const p99 = (rs: LoadResult[]) => median(rs.map((r) => r.p99Ms));
    const ratios = (kind: Kind) =>
      runs.redis[kind].map((r, i) => r.rps / runs.embedded[kind][i].rps);
    const perRound = (xs: number[]) =>
      `per round ${xs.map((x) => x.toFixed(2)).join(', ')}: median ${median(xs).toFixed(2)}`;
    const clean = (kind: Kind) =>
      failures(runs.redis[kind]) === '' && failures(runs.embedded[kind]) === '';
    const dirty = (kind: Kind) => `${failures(runs.redis[kind])}${failures(runs.embedded[kind])}`;
    const us = (xs: number[]) => Math.round(median(xs) * 10) / 10;
    const redisCpu = (kind: Kind) =>
      pid === null
        ? 'Redis runs elsewhere, its CPU is not counted'
        : `redis-server ${us(redisUs.redis[kind])} µs a request (its whole process, other clients too; ${us(redisUs.embedded[kind])} µs during the embedded runs)`;
    const where = `${nodes.toLocaleString('en-US')} nodes (${clusters} x ${perCluster}), ${ROUNDS} rounds of ${durationSec} s; ${machine()}`;
    const figures: Figure[] = [
      {
        name: 'production.register_via_service',
        value: Math.round(registerSec.redis),
        unit: 's (REDIS_URL)',
        ceiling: { name: 'embedded', value: Math.round(registerSec.embedded) },
        target: `informational: ${where}; reports of 1000 new nodes, projections and reactors settled`,
      },
    ];
    for (const ordered of [false, true]) {
      const batch: Kind = ordered ? 'batchOrdered' : 'batch';
      const single: Kind = ordered ? 'singleOrdered' : 'single';
      const suffix = ordered ? '_observed_at' : '';
      const note = ordered ? 'every node with an observedAt (its heartbeat read from Redis); ' : '';
      const singleP99s = runs.redis[single].map((r) => r.p99Ms);
      figures.push(
        {
          name: `production.report_no_change_batches_of_100${suffix}`,
          value: rps(runs.redis[batch]) * BATCH,
          unit: 'node reports/s (REDIS_URL)',
          ceiling: { name: 'embedded app, same fleet', value: rps(runs.embedded[batch]) * BATCH },
          target: `${note}>= 0.7 of embedded, ${perRound(ratios(batch))} (p99 ${p99(runs.redis[batch])} ms, embedded ${p99(runs.embedded[batch])} ms; CPU a request: app ${medianCpuUs(runs.redis[batch])} µs, embedded ${medianCpuUs(runs.embedded[batch])} µs, ${redisCpu(batch)})${dirty(batch)}`,
          met: median(ratios(batch)) >= 0.7 && clean(batch),
        },
        {
          name: `production.report_single_node${suffix}`,
          value: rps(runs.redis[single]),
          unit: 'req/s (REDIS_URL)',
          ceiling: { name: 'embedded app, same fleet', value: rps(runs.embedded[single]) },
          target: `${note}>= 0.5 of embedded, ${perRound(ratios(single))} (CPU a request: app ${medianCpuUs(runs.redis[single])} µs, embedded ${medianCpuUs(runs.embedded[single])} µs, ${redisCpu(single)})${dirty(single)}`,
          met: median(ratios(single)) >= 0.5 && clean(single),
        },
        {
          name: `production.report_single_node_p99${suffix}`,
          value: median(singleP99s),
          unit: 'ms (REDIS_URL)',
          ceiling: { name: 'embedded p99', value: p99(runs.embedded[single]) },
          target: `${note}<= 25 ms, the median of the rounds' (${singleP99s.join(', ')} ms)`,
          met: rps(runs.redis[single]) > 0 && median(singleP99s) <= 25,
        },
      );
    }
    return figures;
  } finally {
    await Promise.all([embedded.stop(), redis?.stop()]);
    await scratch.drop();
  }
};

const noUs = (): Record<Kind, number[]> => ({
  batch: [],
  single: [],
  batchOrdered: [],
  singleOrdered: [],
});

export const productionBench: BenchSuite = { name: 'production', run: productionFigures };
