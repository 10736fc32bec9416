/**
 * The load generator in a process of its own (forked by bench/procs.ts): on a 2-core box the
 * server gets one core and autocannon the other, instead of both sharing one event loop.
 * Receives one LoadPlan over IPC, runs an unmeasured warmup then the measured run, replies
 * with a LoadResult and exits.
 */
import autocannon from 'autocannon';
import { reportBody } from './fleet';

/** What to send: one fixed request, or inventory reports cycling over a synthetic fleet. */
export type RequestSpec =
  | {
      kind: 'fixed';
      method: 'GET' | 'POST';
      path: string;
      headers: Record<string, string>;
      body?: string;
    }
  | {
      kind: 'reports';
      path: string;
      clusters: number;
      perCluster: number;
      /** Nodes per request. */
      batch: number;
      /** Authorization header per cluster (index = cluster number); one shared header when length 1. */
      auth: string[];
      /** Every node reported with this observedAt (ordered reports: the server reads their heartbeats). */
      observedAt?: string;
    }
  | {
      /** Request k sends bodies[k % bodies.length] with auth[k % auth.length]. */
      kind: 'rotate';
      path: string;
      bodies: string[];
      auth: string[];
    };

export type LoadPlan = {
  url: string;
  connections: number;
  warmupSec: number;
  /** Length of the measured run; with `amount`, only the bound the parent waits for. */
  durationSec: number;
  /** When set, the measured run sends exactly this many requests instead of running for a time. */
  amount?: number;
  request: RequestSpec;
};

export type LoadResult = {
  /** Requests answered 2xx per second over the measured run. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  total: number;
  /** Wall time of the measured run. */
  seconds: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /**
   * The server process's CPU per request over the run (user + system from /proc, warm-up
   * included in both the time and the count), when measured (procs.ts `withServerCpu`).
   */
  serverCpuUs?: number;
};

type Req = { method: string; path: string; headers: Record<string, string>; body?: string };

const requestsOf = (spec: RequestSpec): autocannon.Request[] => {
  if (spec.kind === 'fixed') {
    return [{ method: spec.method, path: spec.path, headers: spec.headers, body: spec.body }];
  }
  if (spec.kind === 'rotate') {
    let k = 0;
    return [
      {
        method: 'POST',
        path: spec.path,
        setupRequest: (req: Req) => {
          const i = k++;
          return {
            ...req,
            body: spec.bodies[i % spec.bodies.length],
            headers: {
              ...req.headers,
              'content-type': 'application/json',
              authorization: spec.auth[i % spec.auth.length],
            },
          };
        },
      } as autocannon.Request,
    ];
  }
  const bodies: Array<{ body: string; auth: string }> = [];
  // Interleave clusters so consecutive requests touch different clusters, as real operators do.
  for (let n = 0; n < spec.perCluster; n += spec.batch) {
    for (let c = 0; c < spec.clusters; c++) {
      bodies.push({
        body: reportBody(c, n, Math.min(spec.batch, spec.perCluster - n), spec.observedAt),
        auth: spec.auth.length === 1 ? spec.auth[0] : spec.auth[c],
      });
    }
  }
  let next = 0;
  return [
    {
      method: 'POST',
      path: spec.path,
      setupRequest: (req: Req) => {
        const b = bodies[next++ % bodies.length];
        return {
          ...req,
          body: b.body,
          headers: { ...req.headers, 'content-type': 'application/json', authorization: b.auth },
        };
      },
    } as autocannon.Request,
  ];
};

const fire = (plan: LoadPlan, seconds: number, requests: autocannon.Request[], amount?: number) =>
  autocannon({
    url: plan.url,
    connections: plan.connections,
    ...(amount ? { amount } : { duration: seconds }),
    requests,
    headers: { 'content-type': 'application/json' },
    // Slow answers count in the latency instead of vanishing as timeouts.
    timeout: 30,
  });

const main = async (plan: LoadPlan): Promise<LoadResult> => {
  const requests = requestsOf(plan.request);
  if (plan.warmupSec > 0) await fire(plan, plan.warmupSec, requests);
  const started = Date.now();
  let lastAnswer = started;
  const run = fire(plan, plan.durationSec, requests, plan.amount);
  // With `amount`, autocannon stops at its next 1 s sampling tick after the last answer, so its
  // duration is rounded up to whole seconds (2,000 requests answered in 1.2 s read as 2.03 s):
  // the run's wall time is taken from the start to the last answer instead.
  if (plan.amount) {
    (run as unknown as NodeJS.EventEmitter).on('response', () => (lastAnswer = Date.now()));
  }
  const r = await run;
  const ok = r['2xx'];
  const seconds = plan.amount
    ? Math.max(0.001, (lastAnswer - started) / 1000)
    : r.duration || plan.durationSec;
  return {
    rps: Math.round(ok / seconds),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    total: r.requests.total,
    seconds,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
  };
};

process.once('message', (plan: LoadPlan) => {
  main(plan).then(
    (result) => process.send?.({ ok: true, result }, () => process.exit(0)),
    (error: unknown) => process.send?.({ ok: false, error: String(error) }, () => process.exit(1)),
  );
});
process.on('disconnect', () => process.exit(0));
