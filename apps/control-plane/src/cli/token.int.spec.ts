import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TokenService } from '../platform/auth/token-service';

const ROOT = resolve(__dirname, '../../../..');
const CLI = join(ROOT, 'apps/control-plane/src/cli/token.ts');
const SECRET = 'cli-test-secret-that-is-long-enough-42424242';

type Run = { code: number; stdout: string; stderr: string };

function runCli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      'npx',
      ['tsx', CLI, ...args],
      { cwd: ROOT, env: { ...process.env, AUTH_JWT_SECRET: SECRET, ...env } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

describe('npm run token', () => {
  it('prints only a token that verifies as the requested caller', async () => {
    const args = '--sub op-1 --role operator --role auditor --cluster c1 --cluster c2 --ttl 120';
    const run = await runCli(args.split(' '));
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const caller = await new TokenService(SECRET).verify(run.stdout.trim());
    expect(caller).toEqual({ sub: 'op-1', roles: ['operator', 'auditor'], clusters: ['c1', 'c2'] });
    const payload = JSON.parse(Buffer.from(run.stdout.split('.')[1], 'base64url').toString());
    expect(payload.exp - payload.iat).toBe(120);
  });

  it('signs with the data directory secret when AUTH_JWT_SECRET is unset', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'token-cli-'));
    try {
      const run = await runCli(['--sub', 'root', '--role', 'admin'], {
        AUTH_JWT_SECRET: '',
        DATA_DIR: dataDir,
      });
      expect(run.code).toBe(0);
      const { resolveJwtSecret } = await import('../platform/auth/jwt-secret');
      const { secret, generated } = resolveJwtSecret({ dataDir });
      expect(generated).toBe(false);
      await expect(new TokenService(secret).verify(run.stdout.trim())).resolves.toMatchObject({
        sub: 'root',
        roles: ['admin'],
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('exits 2 naming --sub when it is missing', async () => {
    const run = await runCli(['--role', 'admin']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/--sub/);
  });

  it('exits 2 naming --role when a role is unknown', async () => {
    const run = await runCli(['--sub', 'x', '--role', 'root']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--role/);
  });
});
