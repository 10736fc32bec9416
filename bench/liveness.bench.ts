import { TokenService } from '../apps/control-plane/src/platform/auth/token-service';
import { reportBody } from './fleet';
import { BenchSuite, Figure, percentile } from './lib';
import { operatorTokens } from './nodes.bench';
import { BENCH_SECRET, REDIS_URL, redisScratch, startServer } from './procs';

const LIVENESS_CLUSTERS = 100;
const LIVENESS_PER_CLUSTER = 10;
const STALE_SEC = 2;

type EventPage = {
  events: Array<{ data: { lastSeenAt: string; at: string; reason: string } }>;
  nextPosition: number | null;
};

/**
 * Liveness at scale: 1000 nodes in 100 clusters (10 each) report once and fall silent together;
 * BullMQ on Redis (unique prefix, deleted afterwards), NODE_STALE_SEC=2. The figure is each
 * NodeWentOffline's `at` minus (lastSeenAt + 2 s). MASS_FAILURE_RATIO=1 switches the
 * mass-failure guard off for this figure: whole clusters going silent is exactly what it holds.
 */
export const livenessFigures = async (): Promise<Figure[]> => {
  const scratch = redisScratch();
  const app = await startServer('app', {
    REDIS_URL,
    REDIS_PREFIX: scratch.prefix,
    NODE_STALE_SEC: String(STALE_SEC),
    MASS_FAILURE_RATIO: '1',
  });
  try {
    const auth = await operatorTokens(LIVENESS_CLUSTERS);
    const total = LIVENESS_CLUSTERS * LIVENESS_PER_CLUSTER;
    await Promise.all(
      Array.from({ length: LIVENESS_CLUSTERS }, async (_, c) => {
        const res = await fetch(`${app.url}/v1/inventory/reports`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: auth[c] },
          body: reportBody(c, 0, LIVENESS_PER_CLUSTER),
        });
        if (res.status !== 200) throw new Error(`registration answered ${res.status}`);
      }),
    );
    const tokens = new TokenService(BENCH_SECRET);
    const auditor = `Bearer ${await tokens.sign({ sub: 'bench-auditor', roles: ['auditor'] })}`;
    const delays: number[] = [];
    const deadline = Date.now() + 30_000 + STALE_SEC * 1000;
    let from = 0;
    while (delays.length < total && Date.now() < deadline) {
      const res = await fetch(
        `${app.url}/v1/events?type=NodeWentOffline&limit=1000&fromPosition=${from}`,
        { headers: { authorization: auditor } },
      );
      const page = (await res.json()) as EventPage;
      for (const e of page.events) {
        if (e.data.reason !== 'heartbeat_timeout') continue;
        delays.push(Date.parse(e.data.at) - (Date.parse(e.data.lastSeenAt) + STALE_SEC * 1000));
      }
      if (page.nextPosition !== null && page.nextPosition !== undefined) from = page.nextPosition;
      if (page.events.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    const p50 = delays.length ? percentile(delays, 50) : Number.NaN;
    const p99 = delays.length === total ? percentile(delays, 99) : Number.POSITIVE_INFINITY;
    return [
      {
        name: 'nodes.offline_after_deadline_1000_nodes_p99',
        value: p99,
        unit: 'ms',
        target: `<= 1000 ms (p50 ${p50} ms, max ${delays.length ? Math.max(...delays) : NaN} ms, ${delays.length}/${total} nodes offline; BullMQ, MASS_FAILURE_RATIO=1)`,
        met: delays.length === total && p99 <= 1000,
      },
    ];
  } finally {
    await app.stop();
    await scratch.drop();
  }
};

/**
 * `--only liveness`: the deadline → offline figure alone, in seconds rather than the minutes the
 * 'nodes' suite spends registering 100,000 nodes first. The figure keeps its 'nodes.' name.
 */
export const livenessBench: BenchSuite = { name: 'liveness', run: livenessFigures };
