import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { APP_NODE_FLAGS } from '../../apps/control-plane/src/config/node-flags';
import { Role } from '../../apps/control-plane/src/platform/auth/caller';
import { TokenService } from '../../apps/control-plane/src/platform/auth/token-service';
import { TEST_SECRET } from './app';
import { recordMade } from './test-run';

/**
 * The compiled control plane as a child process, for tests that must kill it for real
 * (SIGKILL between an append and its projection) and start it again on the same DATA_DIR.
 */

export const ROOT = path.resolve(__dirname, '../..');
export const DIST_MAIN = path.join(ROOT, 'dist/apps/control-plane/src/main.js');
export const DIST_REBUILD = path.join(ROOT, 'dist/apps/control-plane/src/cli/rebuild.js');

const BUILD_INPUTS = ['apps', 'libs'];
const BUILD_CONFIGS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

const newestMtime = (dir: string): number => {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules' || entry.name === 'test' || entry.name === 'testing') {
        continue;
      }
      newest = Math.max(newest, newestMtime(full));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
      newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
  }
  return newest;
};

const mtimeOr0 = (file: string): number => {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
};

const isBuildStale = (): boolean => {
  // tsc rewrites every output, so the oldest of the two entry points dates the build.
  const builtAt = Math.min(mtimeOr0(DIST_MAIN), mtimeOr0(DIST_REBUILD));
  if (builtAt === 0) return true;
  const sources = Math.max(
    ...BUILD_INPUTS.map((d) => newestMtime(path.join(ROOT, d))),
    ...BUILD_CONFIGS.map((f) => mtimeOr0(path.join(ROOT, f))),
  );
  return sources > builtAt;
};

/** One step of `npm run build`, by its package's script path; resolves with its exit code and output. */
const buildStep = (script: string): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [require.resolve(script), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });

/**
 * `npm run build`: tsc, then tsc-alias to turn the `@fleet/*` path aliases into relative
 * requires. tsc emits despite type errors; the aliases are rewritten whatever it said.
 */
export const buildDist = async (): Promise<{ ok: boolean; output: string }> => {
  const tsc = await buildStep('typescript/bin/tsc');
  const alias = await buildStep('tsc-alias/dist/bin/index.js');
  return { ok: tsc.code === 0 && alias.code === 0, output: tsc.output + alias.output };
};

const runTsc = async (): Promise<void> => {
  const { ok, output } = await buildDist();
  if (!ok) throw new Error(`npm run build failed:\n${output}`);
};

let building: Promise<void> | null = null;

/** Builds `dist/` (as `npm run build` does) when it is missing or older than a source file; once per run. */
export const ensureBuilt = (): Promise<void> => {
  building ??= isBuildStale() ? runTsc() : Promise.resolve();
  return building;
};

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

// Whatever happens to the test process, no child outlives it.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export type ChildApp = {
  /** The current instance's base URL (each start picks a fresh port). */
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  /** The settings the child runs with (without PORT, which changes per start). */
  readonly env: Readonly<Record<string, string>>;
  readonly running: boolean;
  /** Stdout and stderr of the current instance (the last 64 KiB), for failure messages. */
  output(): string;
  /** Sends `signal` and resolves once the process has exited (SIGTERM escalates after 10 s). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Kills a running instance with `signal`, then starts again on the same DATA_DIR. */
  restart(signal?: NodeJS.Signals): Promise<void>;
  token(sub: string, roles: Role[], clusters?: string[]): Promise<string>;
  auth(sub: string, roles: Role[], clusters?: string[]): Promise<Record<string, string>>;
};

export type ChildAppOptions = {
  /** Start on this DATA_DIR (a copy, or the data of an earlier instance); default a fresh temp dir. */
  readonly dataDir?: string;
  /** Default true: BullMQ, heartbeats and idempotency keys in the local Redis, under a unique prefix. */
  readonly redis?: boolean;
  readonly readyTimeoutMs?: number;
  /** Node's own flags for the child; default the app's (APP_NODE_FLAGS), as `npm start` runs it. */
  readonly nodeFlags?: readonly string[];
};

const OUTPUT_LIMIT = 64 * 1024;

/**
 * Starts `node dist/apps/control-plane/src/main.js` (call `ensureBuilt()` first) and waits for
 * /health/ready. Only the settings given here reach the child, so a MONGO_URL or
 * EVENTSTORE_URL in the test's environment cannot redirect it.
 */
export const startChildApp = async (
  env: Record<string, string> = {},
  options: ChildAppOptions = {},
): Promise<ChildApp> => {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-child-'));
  const redis: Record<string, string> =
    options.redis === false
      ? {}
      : {
          REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          REDIS_PREFIX: `fleet-child-${randomUUID().slice(0, 8)}`,
        };
  if (!options.dataDir) recordMade('dir', dataDir);
  if (redis.REDIS_PREFIX) recordMade('redis', redis.REDIS_PREFIX);
  const settings: Record<string, string> = {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    AUTH_JWT_SECRET: TEST_SECRET,
    LOG_LEVEL: 'silent',
    ...redis,
    ...env,
  };
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  const tokens = new TokenService(TEST_SECRET);

  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let url = '';
  let output = '';

  const start = async (): Promise<void> => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    output = '';
    const proc = spawn(process.execPath, [...(options.nodeFlags ?? APP_NODE_FLAGS), DIST_MAIN], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...settings, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    live.add(proc);
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    exited = new Promise((resolve) => {
      proc.once('exit', () => {
        live.delete(proc);
        if (child === proc) child = null;
        resolve();
      });
    });
    const until = Date.now() + readyTimeoutMs;
    for (;;) {
      if (child !== proc) {
        throw new Error(`the app exited before it was ready:\n${output}`);
      }
      try {
        const res = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(1000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > until) {
        proc.kill('SIGKILL');
        await exited;
        throw new Error(`the app was not ready within ${readyTimeoutMs} ms:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const kill = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    const proc = child;
    if (!proc) return;
    proc.kill(signal);
    if (signal === 'SIGKILL') return exited;
    const escalate = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    try {
      await exited;
    } finally {
      clearTimeout(escalate);
    }
  };

  await start();
  const token = (sub: string, roles: Role[], clusters: string[] = []) =>
    tokens.sign({ sub, roles, clusters });
  return {
    get url() {
      return url;
    },
    get pid() {
      return child?.pid ?? -1;
    },
    get running() {
      return child !== null;
    },
    dataDir,
    env: settings,
    output: () => output,
    kill,
    async restart(signal: NodeJS.Signals = 'SIGKILL') {
      await kill(signal);
      await start();
    },
    token,
    auth: async (sub, roles, clusters) => ({
      authorization: `Bearer ${await token(sub, roles, clusters)}`,
    }),
  };
};
