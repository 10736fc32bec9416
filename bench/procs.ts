import { ChildProcess, execFileSync, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { APP_NODE_FLAGS } from '../apps/control-plane/src/config/node-flags';
import { median } from './lib';
import type { LoadPlan, LoadResult } from './load';
import type { ServerReply } from './server';

export const BENCH_SECRET = 'bench-secret-0123456789abcdef-0123456789';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export type BenchServer = {
  readonly url: string;
  readonly pid: number;
  call<T>(cmd: string, args?: Record<string, number>): Promise<T>;
  /** Peak and current resident set of the server process, from /proc (bytes). */
  memory(): { rss: number; peakRss: number };
  stop(): Promise<void>;
};

/** Extra node flags for server processes, e.g. BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/p". */
const serverFlags = (): string[] =>
  (process.env.BENCH_SERVER_FLAGS ?? '').split(' ').filter(Boolean);

const kib = (status: string, field: string): number => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return m ? Number(m[1]) * 1024 : 0;
};

/**
 * Forks bench/server.js: 'bare' Fastify, or the real app with `env` on a temp DATA_DIR.
 * `build`: another compiled tree's bench directory to take server.js from (bench/ab.ts).
 */
export const startServer = async (
  kind: 'bare' | 'app' | 'bare-express' | 'nest-fastify' | 'nest-express' | 'lean-fastify',
  env: Record<string, string> = {},
  build: string = __dirname,
): Promise<BenchServer> => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'fleet-bench-'));
  const child: ChildProcess = fork(path.join(build, 'server.js'), [], {
    // The app as `npm start` runs it (APP_NODE_FLAGS), then BENCH_NODE_FLAGS from a build's
    // settings (bench/ab.ts): node flags for that server only, the last of a name winning.
    execArgv: [
      ...serverFlags(),
      ...(kind === 'app' ? APP_NODE_FLAGS : []),
      ...(env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    ],
    env: {
      PATH: process.env.PATH,
      // A build copied out of this tree (bench/ab.ts) still finds this tree's packages.
      NODE_PATH: path.resolve(__dirname, '../../node_modules'),
      NODE_ENV: 'production',
      BENCH_SERVER: kind,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      AUTH_JWT_SECRET: BENCH_SECRET,
      LOG_LEVEL: 'silent',
      ...(process.env.BENCH_PROFILE_DIR
        ? { BENCH_PROFILE_DIR: process.env.BENCH_PROFILE_DIR }
        : {}),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const pending = new Map<number, (reply: ServerReply) => void>();
  let nextId = 1;
  const ready = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${kind} server did not start in 60 s`)),
      60_000,
    );
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
    child.on('message', (m: { type?: string; url?: string; pid?: number; id?: number }) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve({ url: m.url ?? '', pid: m.pid ?? 0 });
      } else if (typeof m.id === 'number') pending.get(m.id)?.(m as ServerReply);
    });
  });
  child.removeAllListeners('exit');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    ...ready,
    call: <T>(cmd: string, args?: Record<string, number>) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        pending.set(id, (reply) => {
          pending.delete(id);
          if (reply.ok) resolve(reply.value as T);
          else reject(new Error(reply.error));
        });
        child.send({ id, cmd, args });
      }),
    memory: () => {
      const status = readFileSync(`/proc/${ready.pid}/status`, 'utf8');
      return { rss: kib(status, 'VmRSS'), peakRss: kib(status, 'VmHWM') };
    },
    stop: async () => {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

/** Runs one load plan in a forked autocannon process (its own core on this 2-core box). */
export const runLoad = (plan: LoadPlan): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, 'load.js'), [], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const timer = setTimeout(
      () => {
        child.kill('SIGKILL');
        reject(new Error('load generator overran'));
      },
      (plan.warmupSec + plan.durationSec + 60) * 1000,
    );
    child.once('message', (m: { ok: boolean; result?: LoadResult; error?: string }) => {
      clearTimeout(timer);
      if (m.ok && m.result) resolve(m.result);
      else reject(new Error(m.error));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`load generator exited with ${code}`));
    });
    child.send(plan);
  });

/** A Redis prefix of its own, and a way to delete every key under it afterwards. */
export const redisScratch = (): { prefix: string; drop(): Promise<void> } => {
  const prefix = `fleet-bench-${randomUUID().slice(0, 8)}`;
  return {
    prefix,
    drop: async () => {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
      try {
        await redis.connect();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    },
  };
};

/**
 * Waits until the server's event loop answers an IPC ping within 20 ms: requests a finished
 * load run left queued are worked off before the next run starts (bounded at 60 s).
 */
/**
 * `run` with the server's CPU profiled around it when BENCH_PROFILE_DIR is set (one
 * .cpuprofile per call, named after the server kind and pid; summarise with bench/profile.js).
 */
export const profiled = async <T>(server: BenchServer, run: () => Promise<T>): Promise<T> => {
  if (!process.env.BENCH_PROFILE_DIR) return run();
  await server.call('profile-start');
  try {
    return await run();
  } finally {
    const file = await server.call<string | null>('profile-stop');
    if (file) process.stderr.write(`profile: ${file}\n`);
  }
};

/**
 * One load run against `server` with the server's CPU per request: user + system of its
 * process from /proc across the run, the warm-up included in both the time and the count
 * (its requests counted at the measured rate), as `bench:ab` does. Steadier than the rate on
 * a shared box: a slow phase of the host raises both servers' figures alike.
 */
export const withServerCpu = async (
  server: BenchServer,
  warmupSec: number,
  run: () => Promise<LoadResult>,
): Promise<LoadResult> => {
  const ticks = clockTicks();
  const before = cpuMs(server.pid, ticks);
  const result = await run();
  const requests = result.rps * (result.seconds + warmupSec);
  const used = cpuMs(server.pid, ticks) - before;
  return { ...result, serverCpuUs: requests > 0 ? (used * 1000) / requests : 0 };
};

/** The median over `runs` of the server's CPU per request (`withServerCpu`), to 0.1 µs. */
export const medianCpuUs = (runs: readonly LoadResult[]): number =>
  Math.round(median(runs.map((r) => r.serverCpuUs ?? 0)) * 10) / 10;

export const quiet = async (server: BenchServer): Promise<void> => {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const t0 = Date.now();
    await server.call('usage');
    if (Date.now() - t0 < 20) return;
    await new Promise((r) => setTimeout(r, 200));
  }
};

/** `non-2xx/errors/timeouts` of a run, for the figure's note; empty when the run was clean. */
export const failures = (runs: readonly LoadResult[]): string => {
  const sum = (k: 'non2xx' | 'errors' | 'timeouts') => runs.reduce((a, r) => a + r[k], 0);
  const [n, e, t] = [sum('non2xx'), sum('errors'), sum('timeouts')];
  return n + e + t === 0 ? '' : `; NOT CLEAN: ${n} non-2xx, ${e} errors, ${t} timeouts`;
};

/** Seconds of load per measured run (BENCH_SECONDS overrides, e.g. for a quick look). */
export const loadSeconds = (): { warmupSec: number; durationSec: number } => {
  const d = Number(process.env.BENCH_SECONDS ?? 8);
  return { warmupSec: Math.max(1, Math.round(d / 4)), durationSec: d };
};

/** Clock ticks per second of /proc/<pid>/stat times (100 on Linux unless configured otherwise). */
let ticks: number | undefined;
export const clockTicks = (): number => {
  if (ticks !== undefined) return ticks;
  try {
    ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    ticks = 100;
  }
  return ticks;
};

/** CPU milliseconds (user + system) a process has used so far, from /proc (0 where there is none). */
export const cpuMs = (pid: number, ticks: number): number => {
  try {
    // Fields after the command name: state is 3rd, utime 14th, stime 15th of the whole line.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
  } catch {
    return 0;
  }
};
