import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DIST_MAIN, ensureBuilt, freePort } from '../support/child-app';
import { OwnRedis } from '../support/own-redis';
import { TEST_SECRET } from '../support/app';

type Run = { code: number | null; out: string; up: boolean };

/**
 * Starts the compiled control plane with `env` and waits until it exits, or until it is up
 * (`/health/live` answers) and is then stopped.
 */
const start = async (env: Record<string, string>, waitMs = 30_000): Promise<Run> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-start-'));
  const port = await freePort();
  const child = spawn(process.execPath, [DIST_MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      AUTH_JWT_SECRET: TEST_SECRET,
      LOG_LEVEL: 'silent',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let up = false;
  const until = Date.now() + waitMs;
  try {
    while (Date.now() < until && child.exitCode === null) {
      up = await fetch(`http://127.0.0.1:${port}/health/live`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (child.exitCode === null) child.kill(up ? 'SIGTERM' : 'SIGKILL');
    const code = await exited;
    return { code, out, up };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

describe('starting the control plane', () => {
  beforeAll(() => ensureBuilt(), 120_000);

  it('says what it waits for while Redis is out of reach, then stops naming REDIS_URL, without its password', async () => {
    const port = await freePort(); // nothing listens there
    const run = await start({
      REDIS_URL: `redis://alice:s3cret-pw@127.0.0.1:${port}`,
      START_TIMEOUT_SEC: '2',
    });
    expect(run.up).toBe(false);
    expect(run.code).toBe(1);
    expect(run.out).toContain(
      `waiting for REDIS_URL (redis://127.0.0.1:${port}): connect ECONNREFUSED`,
    );
    expect(run.out).toContain(
      `failed to start: REDIS_URL (redis://127.0.0.1:${port}) did not answer within 2 s`,
    );
    expect(run.out).not.toContain('s3cret-pw');
  });

  it('starts once Redis answers within the wait', async () => {
    const redis = await OwnRedis.onFreePort();
    try {
      // Later than the process takes to load its code (~2 s), well within the wait (60 s).
      const late = new Promise((r) => setTimeout(r, 4000)).then(() => redis.start());
      const run = await start({ REDIS_URL: redis.url, REDIS_PREFIX: 'fleet-start-e2e' });
      await late;
      expect(run.out).toContain(`waiting for REDIS_URL (${redis.url})`);
      expect(run.up).toBe(true);
    } finally {
      await redis.kill();
    }
  });

  it.each([
    [{ AUTH_JWT_SECRET: 'too-short' }, 'AUTH_JWT_SECRET: must be at least 32 characters'],
    [{ DATA_DIR: __filename }, `DATA_DIR: ${__filename} exists and is not a directory`],
  ])('stops on %j with exit 78, naming the setting', async (env, said) => {
    const run = await start(env);
    expect(run.up).toBe(false);
    expect(run.code).toBe(78);
    expect(run.out).toContain(`invalid configuration: ${said}`);
  });
});
