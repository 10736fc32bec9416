import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DIST_MAIN, ensureBuilt, freePort } from '../support/child-app';
import { OwnRedis } from '../support/own-redis';
import { TEST_SECRET } from '../support/app';

type Run = { code: number | null; out: string; up: boolean };

type StartOptions = {
  readonly waitMs?: number;
  /** Node's own arguments before the script (a --require of a test's preload). */
  readonly nodeArgs?: readonly string[];
  /** Keep it running once up and wait for it to exit by itself. */
  readonly untilExit?: boolean;
  /** Told of everything the process has written so far, at each write. */
  readonly onOutput?: (out: string) => void;
};

/**
 * Starts the compiled control plane with `env` and waits until it exits, or until it is up
 * (`/health/live` answers) and is then stopped (unless `untilExit`).
 */
const start = async (env: Record<string, string>, options: StartOptions = {}): Promise<Run> => {
  const { waitMs = 30_000, nodeArgs = [], untilExit = false, onOutput } = options;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-start-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, DIST_MAIN], {
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
  const take = (chunk: Buffer): void => {
    out += chunk.toString();
    onOutput?.(out);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let up = false;
  const until = Date.now() + waitMs;
  try {
    while (Date.now() < until && child.exitCode === null) {
      up ||= await fetch(`http://127.0.0.1:${port}/health/live`).then(
        (r) => r.ok,
        () => false,
      );
      if (up && !untilExit) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (child.exitCode === null) child.kill(up ? 'SIGTERM' : 'SIGKILL');
    const code = await exited;
    return { code, out, up };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

/**
 * A --require preload that, once the app answers on its own port, fails the way a store
 * client's stray callback would: an exception thrown on its own, or a rejection nobody awaits.
 */
const preloadFailing = (kind: 'exception' | 'rejection'): string => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-preload-')), 'fail.js');
  const fail =
    kind === 'exception'
      ? "setImmediate(() => { throw new Error('the client lost its socket'); });"
      : "Promise.reject(new Error('the client lost its socket'));";
  fs.writeFileSync(
    file,
    `const timer = setInterval(() => {
      fetch('http://127.0.0.1:' + process.env.PORT + '/health/live').then(() => {
        clearInterval(timer);
        process.stdout.write(JSON.stringify({ preload: 'the app answered' }) + '\\n');
        ${fail}
      }, () => {});
    }, 100);\n`,
  );
  return file;
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

  it.each([
    ['EVENTSTORE_URL', (port: number) => `kurrentdb://127.0.0.1:${port}?tls=false`, 'kurrentdb'],
    [
      'MONGO_URL',
      (port: number) => `mongodb://127.0.0.1:${port}/fleet?directConnection=true`,
      'mongodb',
    ],
  ])(
    'says what it waits for while %s is out of reach, then stops with exit 1 naming it',
    async (setting, url, scheme) => {
      const port = await freePort(); // nothing listens there
      const run = await start({ [setting]: url(port), START_TIMEOUT_SEC: '3' });
      expect(run.up).toBe(false);
      expect(run.code).toBe(1);
      expect(run.out).toContain(
        `waiting for ${setting} (${scheme}://127.0.0.1:${port}): connect ECONNREFUSED 127.0.0.1:${port}`,
      );
      expect(run.out).toContain(
        `failed to start: ${setting} (${scheme}://127.0.0.1:${port}) did not answer within 3 s (START_TIMEOUT_SEC)`,
      );
    },
  );

  it('waits for every configured store at once and names each one still out of reach', async () => {
    const redis = await OwnRedis.onFreePort();
    await redis.start();
    try {
      const es = await freePort();
      const mongo = await freePort();
      const run = await start({
        EVENTSTORE_URL: `kurrentdb://127.0.0.1:${es}?tls=false`,
        MONGO_URL: `mongodb://127.0.0.1:${mongo}/fleet?directConnection=true`,
        REDIS_URL: redis.url,
        REDIS_PREFIX: 'fleet-start-e2e',
        START_TIMEOUT_SEC: '3',
      });
      expect(run.code).toBe(1);
      const failed = run.out.split('\n').find((line) => line.startsWith('failed to start: '));
      expect(failed).toContain(`EVENTSTORE_URL (kurrentdb://127.0.0.1:${es}) did not answer`);
      expect(failed).toContain(`MONGO_URL (mongodb://127.0.0.1:${mongo}) did not answer`);
      expect(failed).not.toContain('REDIS_URL');
      expect(run.out).not.toContain('waiting for REDIS_URL');
    } finally {
      await redis.kill();
    }
  });

  it.each(['an uncaught exception', 'an unhandled rejection'])(
    'ends %s at run time in one JSON line and exit 70',
    async (what) => {
      const preload = preloadFailing(what.endsWith('exception') ? 'exception' : 'rejection');
      try {
        const run = await start({}, { nodeArgs: ['--require', preload], untilExit: true });
        // The preload fails only once the app answers (it may exit before this test's poll).
        expect(run.code).toBe(70);
        const lines = run.out.split('\n').filter((line) => line.trim() !== '');
        // Nothing but JSON lines: no bare stack trace.
        const logged = lines.map((line) => JSON.parse(line));
        const answered = logged.findIndex((l) => l.preload === 'the app answered');
        expect(answered).toBeGreaterThanOrEqual(0);
        const fatal = logged.filter((l) => l.level === 'fatal');
        expect(fatal).toHaveLength(1);
        expect(logged.indexOf(fatal[0])).toBeGreaterThan(answered);
        expect(fatal[0]).toMatchObject({
          context: 'process',
          msg: `${what}: Error: the client lost its socket; exiting`,
          err: { name: 'Error', message: 'the client lost its socket' },
        });
        expect(fatal[0].err.stack).toContain('fail.js');
      } finally {
        fs.rmSync(path.dirname(preload), { recursive: true, force: true });
      }
    },
  );

  it('starts once Redis answers within the wait', async () => {
    const redis = await OwnRedis.onFreePort();
    try {
      // Redis comes up once the process said it waits for it, well within the wait (60 s).
      let late: Promise<unknown> | undefined;
      const run = await start(
        { REDIS_URL: redis.url, REDIS_PREFIX: 'fleet-start-e2e' },
        {
          waitMs: 90_000,
          onOutput: (out) => {
            if (out.includes('waiting for REDIS_URL')) late ??= redis.start();
          },
        },
      );
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
    [{ K8S_VERSIONS: '1.29,1.30' }, 'K8S_VERSIONS: exactly one version must be marked * (found 0)'],
    [{ SIM_PROVISION_SEC: 'soon' }, 'SIM_PROVISION_SEC: expected a whole number, got "soon"'],
  ])('stops on %j with exit 78, naming the setting', async (env, said) => {
    const run = await start(env);
    expect(run.up).toBe(false);
    expect(run.code).toBe(78);
    expect(run.out).not.toMatch(/\n\s+at /);
    expect(run.out).toContain(`invalid configuration: ${said}`);
  });
});
