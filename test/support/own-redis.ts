import { ChildProcess, spawn } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from './child-app';
import { eventually } from './reports';

const startRedis = async (port: number): Promise<ChildProcess> => {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await eventually(async () => {
      try {
        if (probe.status !== 'ready') await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      }
    }, 10_000);
  } finally {
    probe.disconnect();
  }
  return child;
};

const killed = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

/**
 * A Redis of a test's own (nothing on disk, on a free port), which it may kill, stall and
 * start again without disturbing any other test.
 */
export class OwnRedis {
  private child: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  /** A free port, nothing started yet. */
  static async onFreePort(): Promise<OwnRedis> {
    return new OwnRedis(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    this.child = await startRedis(this.port);
  }
  async kill(): Promise<void> {
    if (this.child) await killed(this.child);
  }
  /** Redis stalls: the connection stays up, nothing is answered (SIGSTOP) until `resume`. */
  stall(): void {
    this.child?.kill('SIGSTOP');
  }
  resume(): void {
    this.child?.kill('SIGCONT');
  }
}
