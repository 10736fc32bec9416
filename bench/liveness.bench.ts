import { TokenService } from '../apps/control-plane/src/platform/auth/token-service';
import { hostnameOf, reportBody } from './fleet';
import { BenchSuite, Figure, percentile } from './lib';
import { operatorTokens } from './nodes.bench';
import { BENCH_SECRET, REDIS_URL, redisScratch, startServer } from './procs';

const LIVENESS_CLUSTERS = 100;
/** Per cluster: the first SILENT nodes report once; the rest keep reporting. */
const LIVENESS_PER_CLUSTER = 20;
const SILENT_PER_CLUSTER = 10;
/**
 * The stale window, and how often the reporting half reports: 5 reports a window, as a
 * controller reporting every minute does against the default 300 s. The guard counts a node
 * silent for half a window as stale (a mass failure is caught before its first nodes go
 * offline), so reports must come well inside half a window: with a 2 s window and reports
 * every 800 ms, a reporting round delayed 200 ms by the burst of timeouts made the guard hold
 * 52 of the 100 clusters in the 12:34 run.
 */
const STALE_SEC = Number(process.env.BENCH_STALE_SEC ?? 5);
const REPORT_EVERY_MS = Number(process.env.BENCH_REPORT_EVERY_MS ?? 1000);

type EventPage = {
  events: Array<{ data: { hostname: string; lastSeenAt: string; at: string; reason: string } }>;
  nextPosition: number | null;
};

/**
 * Liveness at scale, with the app's defaults (the mass-failure guard included): 100 clusters
 * of 20 nodes register; in each, 10 nodes fall silent at once while the other 10 report every
 * REPORT_EVERY_MS. Half of a cluster going stale is under the guard's 55 %, so the 1,000 silent
 * nodes must go offline and the 1,000 reporting ones must not. BullMQ on Redis (unique prefix,
 * deleted afterwards), NODE_STALE_SEC=STALE_SEC. The figure is each NodeWentOffline's `at`
 * minus (lastSeenAt + STALE_SEC): lastSeenAt is the node's real last report, so a node the
 * guard held counts with its hold.
 */
export const livenessFigures = async (): Promise<Figure[]> => {
  const scratch = redisScratch();
  const app = await startServer('app', {
    REDIS_URL,
    REDIS_PREFIX: scratch.prefix,
    NODE_STALE_SEC: String(STALE_SEC),
  });
  let reporting = true;
  let reporter: Promise<void> = Promise.resolve();
  try {
    const auth = await operatorTokens(LIVENESS_CLUSTERS);
    const total = LIVENESS_CLUSTERS * SILENT_PER_CLUSTER;
    const report = (c: number, from: number, count: number) =>
      fetch(`${app.url}/v1/inventory/reports`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: auth[c] },
        body: reportBody(c, from, count),
      }).then((res) => {
        if (res.status !== 200) throw new Error(`report answered ${res.status}`);
      });
    const clusters = Array.from({ length: LIVENESS_CLUSTERS }, (_, c) => c);
    await Promise.all(clusters.map((c) => report(c, 0, LIVENESS_PER_CLUSTER)));
    // The healthy half: one report per cluster every REPORT_EVERY_MS, on a fixed clock until
    // the measurement ends. Not that long after the last round answered: on a slow box a round
    // takes up to a second while 2,000 timeouts fire, and its nodes then look stale.
    reporter = (async () => {
      const healthy = LIVENESS_PER_CLUSTER - SILENT_PER_CLUSTER;
      const rounds: Promise<void>[] = [];
      let failed: unknown;
      const started = Date.now();
      for (let tick = 1; reporting; tick++) {
        await new Promise((r) =>
          setTimeout(r, Math.max(0, started + tick * REPORT_EVERY_MS - Date.now())),
        );
        if (!reporting) break;
        const round = Promise.all(clusters.map((c) => report(c, SILENT_PER_CLUSTER, healthy)));
        // Caught at once (an unhandled rejection would end the process), rethrown at the end.
        rounds.push(
          round.then(
            () => undefined,
            (error: unknown) => void (failed ??= error),
          ),
        );
      }
      await Promise.all(rounds);
      if (failed) throw failed;
    })();
    const silent = new Set(
      clusters.flatMap((c) =>
        Array.from({ length: SILENT_PER_CLUSTER }, (_, n) => hostnameOf(c, n)),
      ),
    );
    let wronglyOffline = 0;
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
        if (!silent.has(e.data.hostname) || e.data.reason !== 'heartbeat_timeout') {
          wronglyOffline++;
          continue;
        }
        delays.push(Date.parse(e.data.at) - (Date.parse(e.data.lastSeenAt) + STALE_SEC * 1000));
      }
      if (page.nextPosition !== null && page.nextPosition !== undefined) from = page.nextPosition;
      if (page.events.length === 0) await new Promise((r) => setTimeout(r, 200));
    }
    // A reporting node that went offline would show up within one more stale window.
    await new Promise((r) => setTimeout(r, STALE_SEC * 1000));
    const late = await fetch(
      `${app.url}/v1/events?type=NodeWentOffline&limit=1000&fromPosition=${from}`,
      { headers: { authorization: auditor } },
    );
    wronglyOffline += ((await late.json()) as EventPage).events.length;
    reporting = false;
    await reporter;
    // The mass-failure guard holding a cluster explains silent nodes that stay online.
    const stalls = await fetch(`${app.url}/v1/events?type=ClusterReportsStalled&limit=1000`, {
      headers: { authorization: auditor },
    });
    const stalled = ((await stalls.json()) as EventPage).events.length;
    const p50 = delays.length ? percentile(delays, 50) : Number.NaN;
    const p99 = delays.length === total ? percentile(delays, 99) : Number.POSITIVE_INFINITY;
    return [
      {
        name: 'nodes.offline_after_deadline_1000_nodes_p99',
        value: p99,
        unit: 'ms',
        target: `<= 1000 ms (p50 ${p50} ms, max ${delays.length ? Math.max(...delays) : NaN} ms, ${delays.length}/${total} silent nodes offline, ${wronglyOffline} reporting nodes offline, ${stalled} clusters held by the guard; 100 clusters of 20, 10 silent and 10 reporting every ${REPORT_EVERY_MS} ms each; NODE_STALE_SEC=${STALE_SEC}; defaults, mass-failure guard on; BullMQ)`,
        met: delays.length === total && wronglyOffline === 0 && p99 <= 1000,
      },
    ];
  } finally {
    reporting = false;
    await reporter.catch(() => undefined);
    await app.stop();
    await scratch.drop();
  }
};

/**
 * `--only liveness`: the deadline → offline figure alone, in seconds rather than the minutes the
 * 'nodes' suite spends registering 100,000 nodes first. The figure keeps its 'nodes.' name.
 */
export const livenessBench: BenchSuite = { name: 'liveness', run: livenessFigures };
