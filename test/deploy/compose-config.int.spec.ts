import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
// `.ci/run` installs Debian's docker-compose, which validates a file without a Docker engine.
const compose = spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status === 0;
const config = (files: string[], env: Record<string, string | undefined>) =>
  spawnSync('docker-compose', [...files.flatMap((f) => ['-f', f]), 'config', '-q'], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, ...env },
  });

(compose ? describe : describe.skip)('docker-compose config', () => {
  const secret = { AUTH_JWT_SECRET: 'x'.repeat(40) };

  it('validates the production stack and the file that publishes the stores for contract suites', () => {
    const plain = config(['docker-compose.yml'], secret);
    expect(plain.stderr).toBe('');
    expect(plain.status).toBe(0);
    const ports = config(['docker-compose.yml', 'docker-compose.ports.yml'], secret);
    expect(ports.status).toBe(0);
  });

  it('refuses to start the stack without the JWT secret', () => {
    const missing = config(['docker-compose.yml'], {});
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain('AUTH_JWT_SECRET');
  });

  it('lists the app and its three stores', () => {
    const services = execFileSync('docker-compose', ['config', '--services'], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...secret },
    });
    expect(services.trim().split('\n').sort()).toEqual(['app', 'eventstore', 'mongo', 'redis']);
  });
});
