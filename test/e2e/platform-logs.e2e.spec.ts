import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import { OwnRedis } from '../support/own-redis';
import { cpuNode, eventually, report, sleep } from '../support/reports';

type Line = {
  level: string;
  msg?: string;
  context?: string;
  status?: number;
  route?: string;
  correlationId?: string;
  err?: { code?: string; message?: string };
  command?: string;
  aggregate?: string;
  result?: string;
  events?: number;
};

/** The child's output as log lines; a line that is not one JSON object fails the test. */
const linesOf = (output: string): Line[] =>
  output
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Line;
      } catch {
        throw new Error(`not a JSON log line: ${l}`);
      }
    });

describe('logs while Redis is out of reach (the compiled app, LOG_LEVEL=info)', () => {
  let redis: OwnRedis;
  let app: ChildApp;
  beforeAll(async () => {
    await ensureBuilt();
    redis = await OwnRedis.onFreePort();
    await redis.start();
    app = await startChildApp({ REDIS_URL: redis.url, LOG_LEVEL: 'info' });
  }, 60_000);
  afterAll(async () => {
    await app?.kill('SIGKILL');
    await redis?.kill();
  });

  it('writes every failure as one JSON line, throttled, and a turned-away request as a warning, not an error', async () => {
    const operator = await app.auth('op', ['operator'], ['cl']);
    const admin = await app.auth('root', ['admin']);
    const send = (path: string, headers: Record<string, string>, body: unknown) =>
      fetch(`${app.url}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const first = await send('/v1/inventory/reports', operator, report('cl', [cpuNode('cpu-01')]));
    expect(first.status).toBe(200);
    const { nodes } = (await first.json()) as { nodes: Array<{ nodeId: string }> };

    await redis.kill();
    await eventually(async () => (await fetch(`${app.url}/health/ready`)).status === 503);
    const unchanged = await send(
      '/v1/inventory/reports',
      operator,
      report('cl', [cpuNode('cpu-01')]),
    );
    expect(unchanged.status).toBe(503);
    const cordon = await send(
      `/v1/nodes/${nodes[0].nodeId}/cordon`,
      { ...admin, 'idempotency-key': 'cordon-in-outage', 'x-correlation-id': 'outage-cordon-1' },
      { reason: 'maintenance' },
    );
    expect(cordon.status).toBe(503);
    // Several seconds of reconnect attempts by every connection (heartbeats, keys, jobs).
    await sleep(4000);

    const lines = linesOf(app.output());
    const failures = lines.filter((l) => l.context === 'redis' || l.context === 'jobs');
    expect(failures.length).toBeGreaterThan(0);
    for (const f of failures) {
      expect(f.level).toBe('error');
      expect(f.err?.code).toMatch(/^ECONN(REFUSED|RESET)$/);
    }
    // Each client's failure kind once per 10 s, not once per reconnect attempt.
    expect(failures.length).toBeLessThanOrEqual(8);

    const turnedAway = lines.filter((l) => l.status === 503 && l.route !== '/health/ready');
    expect(turnedAway.map((l) => [l.route, l.level])).toEqual([
      ['/v1/inventory/reports', 'warn'],
      ['/v1/nodes/:nodeId/cordon', 'warn'],
    ]);
    expect(turnedAway[1].correlationId).toBe('outage-cordon-1');
    expect(lines.filter((l) => l.msg === 'request failed')).toEqual([]);
    // Commands are logged at debug only.
    expect(lines.filter((l) => l.context === 'command')).toEqual([]);
  }, 60_000);
});

describe('the command log (the compiled app, LOG_LEVEL=debug)', () => {
  let app: ChildApp;
  beforeAll(async () => {
    await ensureBuilt();
    app = await startChildApp({ LOG_LEVEL: 'debug' }, { redis: false });
  }, 60_000);
  afterAll(async () => {
    await app?.kill('SIGKILL');
  });

  it('writes each command with its type, aggregate and result: a change, then a no-op', async () => {
    const admin = await app.auth('root', ['admin']);
    const operator = await app.auth('op', ['operator'], ['cl']);
    const send = (path: string, headers: Record<string, string>, body: unknown) =>
      fetch(`${app.url}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const reported = await send(
      '/v1/inventory/reports',
      operator,
      report('cl', [cpuNode('cpu-01')]),
    );
    const { nodes } = (await reported.json()) as { nodes: Array<{ nodeId: string }> };
    const cordon = `/v1/nodes/${nodes[0].nodeId}/cordon`;
    expect((await send(cordon, admin, { reason: 'maintenance' })).status).toBe(200);
    expect((await send(cordon, admin, { reason: 'maintenance' })).status).toBe(200);
    await eventually(async () =>
      linesOf(app.output()).some(
        (l) => l.context === 'command' && l.command === 'CordonNode' && l.result === 'noop',
      ),
    );
    const cordons = linesOf(app.output())
      .filter((l) => l.context === 'command' && l.command === 'CordonNode')
      .map((l) => [l.level, l.msg, l.aggregate, l.result, l.events]);
    expect(cordons).toEqual([
      ['debug', 'command handled', 'node', 'ok', 1],
      ['debug', 'command handled', 'node', 'noop', 0],
    ]);
  }, 60_000);
});
