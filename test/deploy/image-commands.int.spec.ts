import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TokenService } from '../../apps/control-plane/src/platform/auth/token-service';
import { TEST_SECRET } from '../support/app';
import { ensureBuilt } from '../support/child-app';
import { ROOT, finalStage, healthcheckCommand, imageScripts, readDockerfile } from './deploy-files';

type Ran = { code: number | null; stdout: string; stderr: string };

const run = (command: string, args: readonly string[], env: Record<string, string> = {}) =>
  new Promise<Ran>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });

const stage = finalStage(readDockerfile());
const ENTRYPOINT = path.join(ROOT, 'docker/entrypoint.sh');

/**
 * What the image runs, from the repo's own build: the entry point and the scripts the image
 * sets need nothing but `dist/` and node (no tsx, no tsc, no sources).
 */
describe("the image's commands, on the compiled build", () => {
  let dataDir: string;
  beforeAll(() => ensureBuilt(), 120_000);
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-image-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('`token …` through the entry point prints a token the server accepts', async () => {
    const ran = await run('sh', [ENTRYPOINT, 'token', '--sub', 'alice', '--role', 'user'], {
      AUTH_JWT_SECRET: TEST_SECRET,
      DATA_DIR: dataDir,
    });
    expect(ran).toMatchObject({ code: 0, stderr: '' });
    const caller = await new TokenService(TEST_SECRET).verify(ran.stdout.trim());
    expect(caller).toMatchObject({ sub: 'alice', roles: ['user'] });
  });

  it.each(['rebuild', 'verify-billing'])(
    '`%s --help` through the entry point runs the compiled CLI',
    async (cli) => {
      const ran = await run('sh', [ENTRYPOINT, cli, '--help'], { DATA_DIR: dataDir });
      expect(ran.code).toBe(0);
      expect(ran.stdout).toContain(`usage: npm run ${cli}`);
    },
  );

  it('runs any other command as given (the server by default)', async () => {
    const ran = await run('sh', [ENTRYPOINT, 'node', '-e', 'console.log(process.argv[1])', 'x']);
    expect(ran).toMatchObject({ code: 0, stdout: 'x\n' });
  });

  it.each(Object.entries(imageScripts(stage)))(
    'the npm script the image sets for %s runs',
    async (name, script) => {
      const [command, ...args] = script.split(' ');
      const ran = await run(command, [...args, ...(name === 'token' ? [] : ['--help'])], {
        DATA_DIR: dataDir,
      });
      // token without arguments answers its usage (exit 2): the script found the CLI.
      expect(ran.code).toBe(name === 'token' ? 2 : 0);
      expect(ran.stdout + ran.stderr).toContain(`usage: npm run ${name}`);
    },
  );
});

describe("the image's HEALTHCHECK command", () => {
  const command = healthcheckCommand(stage) ?? [];

  /** Runs the check against a server answering `status` on PORT (or nothing listening). */
  const check = async (status: number | null): Promise<number | null> => {
    const server = http.createServer((req, res) =>
      res.writeHead(req.url === '/health/ready' ? (status ?? 500) : 404).end(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    if (status === null) await new Promise((resolve) => server.close(resolve));
    try {
      const [bin, ...args] = command;
      return (await run(bin, args, { PORT: String(port) })).code;
    } finally {
      server.close();
    }
  };

  it('passes on 200 from /health/ready and fails on 503 or no answer', async () => {
    expect(command[0]).toBe('node');
    expect(await check(200)).toBe(0);
    expect(await check(503)).toBe(1);
    expect(await check(null)).toBe(1);
  });
});
