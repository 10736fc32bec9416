import request from 'supertest';
import { leanRoutesOf } from './lean-route';
import { startApp, TestApp } from '../../../../../../test/support/app';
import { cpuNode, eventually, gpuNode, report } from '../../../../../../test/support/reports';

/**
 * The hot routes (no-op cordon, inventory report) run on the lean path; every other route and
 * an app built with `leanRoutes: false` run them through Nest. The same requests, in the same
 * order, to both apps must get the same answers: status, error envelope, body and headers
 * (times and per-request ids aside). Both apps derive the same node ids from the same reports.
 */
describe('lean routes answer as the Nest path does', () => {
  let lean: TestApp;
  let nest: TestApp;
  beforeAll(async () => {
    [lean, nest] = await Promise.all([
      startApp({ NODE_STALE_SEC: '300' }, { redis: false }),
      startApp({ NODE_STALE_SEC: '300' }, { redis: false, leanRoutes: false }),
    ]);
  });
  afterAll(async () => Promise.all([lean?.close(), nest?.close()]));

  it('serves exactly the hot routes on the lean path', () => {
    expect([...leanRoutesOf(lean.app)].sort()).toEqual([
      'POST /v1/inventory/reports',
      'POST /v1/nodes/:nodeId/cordon',
    ]);
    expect(leanRoutesOf(nest.app)).toEqual([]);
  });

  type Case = {
    readonly name: string;
    readonly path: string;
    readonly who?:
      'admin' | 'user' | 'auditor' | 'operator' | 'operator-c2' | 'bad-token' | 'basic';
    readonly body?: unknown;
    readonly raw?: string;
    readonly headers?: Record<string, string>;
  };

  const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
  /** Times (also within messages) and per-request ids differ between two apps run a moment apart; all else must not. */
  const normalise = (value: unknown, key = ''): unknown => {
    if (Array.isArray(value)) return value.map((v) => normalise(v));
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, normalise(v, k)]),
      );
    }
    if (typeof value === 'string') return value.replace(ISO, '<time>');
    if (key === 'heartbeatAgeSec' && typeof value === 'number') return '<age>';
    if (key === 'correlationId') return '<id>';
    return value;
  };

  const send = async (t: TestApp, c: Case) => {
    const auth: Record<string, string> =
      c.who === undefined
        ? {}
        : c.who === 'bad-token'
          ? { authorization: `Bearer ${(await t.token('root', ['admin'])).slice(0, -2)}xx` }
          : c.who === 'basic'
            ? { authorization: 'Basic cm9vdDpyb290' }
            : c.who === 'operator'
              ? await t.auth('op', ['operator'], ['c1'])
              : c.who === 'operator-c2'
                ? await t.auth('op2', ['operator'], ['c2'])
                : await t.auth(c.who, [c.who]);
    let req = request(t.url).post(c.path).set(auth);
    if (c.headers) req = req.set(c.headers);
    if (c.raw !== undefined) req = req.set('content-type', 'application/json').send(c.raw);
    else if (c.body !== undefined) req = req.send(c.body as object);
    const res = await req;
    return {
      status: res.status,
      type: res.headers['content-type'],
      retryAfter: res.headers['retry-after'],
      correlated: typeof res.headers['x-correlation-id'] === 'string',
      body: normalise(res.body),
    };
  };

  /** Sends each case to both apps in turn and compares; returns the statuses seen. */
  const compare = async (cases: readonly Case[]): Promise<Set<number>> => {
    const statuses = new Set<number>();
    for (const c of cases) {
      const [a, b] = [await send(lean, c), await send(nest, c)];
      expect({ case: c.name, ...a }).toEqual({ case: c.name, ...b });
      statuses.add(a.status);
    }
    return statuses;
  };

  const reports = '/v1/inventory/reports';
  const c1 = report('c1', [gpuNode('gpu-lean-01'), cpuNode('cpu-lean-01')]);

  it('inventory reports: admitted, refused and accepted alike', async () => {
    const big = {
      ...report('c1', [gpuNode('gpu-lean-01')]),
      nodes: Array(1001).fill(cpuNode('x')),
    };
    const statuses = await compare([
      { name: 'no token', path: reports, body: c1 },
      { name: 'basic auth', path: reports, who: 'basic', body: c1 },
      { name: 'bad signature', path: reports, who: 'bad-token', body: c1 },
      { name: 'user', path: reports, who: 'user', body: c1 },
      { name: 'auditor', path: reports, who: 'auditor', body: c1 },
      { name: 'other cluster', path: reports, who: 'operator-c2', body: c1 },
      { name: 'first report', path: reports, who: 'operator', body: c1 },
      { name: 'unchanged', path: reports, who: 'operator', body: c1 },
      { name: 'admin', path: reports, who: 'admin', body: c1 },
      { name: 'query', path: `${reports}?dryRun=1`, who: 'operator', body: c1 },
      { name: 'no body', path: reports, who: 'operator' },
      { name: 'empty', path: reports, who: 'operator', body: {} },
      { name: 'array', path: reports, who: 'operator', body: [] },
      { name: 'not json', path: reports, who: 'operator', raw: '{"clusterId":' },
      { name: 'text', path: reports, who: 'operator', raw: '"c1"' },
      { name: 'too many', path: reports, who: 'operator', body: big },
      { name: 'no nodes', path: reports, who: 'operator', body: { clusterId: 'c1', nodes: [] } },
      { name: 'unknown field', path: reports, who: 'operator', body: { ...c1, extra: true } },
      {
        name: 'bad node fields',
        path: reports,
        who: 'operator',
        body: report('c1', [gpuNode('Bad_Host', 1, 'H100', { kubeletReady: 'yes' as never })]),
      },
      {
        name: 'hostname twice',
        path: reports,
        who: 'operator',
        body: report('c1', [cpuNode('cpu-lean-02'), cpuNode('cpu-lean-02')]),
      },
      {
        name: 'observed in the future',
        path: reports,
        who: 'operator',
        body: report('c1', [cpuNode('cpu-lean-02', 8, 32, { observedAt: '2999-01-01T00:00:00Z' })]),
      },
      {
        name: 'labels the pipe passes as sent',
        path: reports,
        who: 'operator',
        body: report('c1', [cpuNode('cpu-lean-03', 8, 32, { labels: { constructor: 'x' } })]),
      },
      {
        name: 'bad label',
        path: reports,
        who: 'operator',
        body: report('c1', [cpuNode('cpu-lean-04', 8, 32, { labels: { 'a b': 'x' } })]),
      },
      {
        name: 'key malformed',
        path: reports,
        who: 'operator',
        body: c1,
        headers: { 'idempotency-key': 'é' },
      },
      {
        name: 'key first',
        path: reports,
        who: 'operator',
        body: c1,
        headers: { 'idempotency-key': 'r-1' },
      },
      {
        name: 'key replay',
        path: reports,
        who: 'operator',
        body: c1,
        headers: { 'idempotency-key': 'r-1' },
      },
      {
        name: 'key reused',
        path: reports,
        who: 'operator',
        body: report('c1', [cpuNode('cpu-lean-05')]),
        headers: { 'idempotency-key': 'r-1' },
      },
      {
        name: 'too deep',
        path: reports,
        who: 'operator',
        raw: `${'['.repeat(40)}${']'.repeat(40)}`,
      },
      {
        name: 'form body',
        path: reports,
        who: 'operator',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'clusterId=c1',
      },
    ]);
    expect([...statuses].sort()).toEqual([200, 400, 401, 403, 409, 415]);
  });

  it('cordons: admitted, refused and accepted alike', async () => {
    const res = await request(lean.url)
      .post(reports)
      .set(await lean.auth('op', ['operator'], ['c1']))
      .send(c1);
    const nodeId: string = res.body.nodes[0].nodeId;
    for (const t of [lean, nest]) {
      const admin = await t.auth('root', ['admin']);
      await eventually(
        async () => (await request(t.url).get(`/v1/nodes/${nodeId}`).set(admin)).status === 200,
      );
    }
    const cordon = `/v1/nodes/${nodeId}/cordon`;
    const statuses = await compare([
      { name: 'no token', path: cordon },
      { name: 'bad signature', path: cordon, who: 'bad-token' },
      { name: 'user', path: cordon, who: 'user', body: {} },
      { name: 'operator', path: cordon, who: 'operator', body: {} },
      { name: 'no token, bad key', path: cordon, headers: { 'idempotency-key': ' ' } },
      { name: 'bad key', path: cordon, who: 'admin', headers: { 'idempotency-key': ' ' } },
      {
        name: 'unknown node',
        path: '/v1/nodes/00000000-0000-4000-8000-000000000000/cordon',
        who: 'admin',
      },
      { name: 'bad node id', path: '/v1/nodes/not-a-node/cordon', who: 'admin' },
      { name: 'empty node id', path: '/v1/nodes//cordon', who: 'admin' },
      { name: 'query', path: `${cordon}?force=1`, who: 'admin' },
      { name: 'reason of a number', path: cordon, who: 'admin', body: { reason: 5 } },
      { name: 'reason too long', path: cordon, who: 'admin', body: { reason: 'x'.repeat(501) } },
      { name: 'unknown field', path: cordon, who: 'admin', body: { reason: 'r', until: 'later' } },
      { name: 'constructor', path: cordon, who: 'admin', raw: '{"constructor":{"a":1}}' },
      { name: 'array', path: cordon, who: 'admin', body: [] },
      { name: 'string', path: cordon, who: 'admin', raw: '"maintenance"' },
      { name: 'cordon', path: cordon, who: 'admin', body: { reason: 'maintenance' } },
      { name: 'no-op, no body', path: cordon, who: 'admin' },
      { name: 'no-op, {}', path: cordon, who: 'admin', body: {} },
      { name: 'no-op, null', path: cordon, who: 'admin', raw: 'null' },
      {
        name: 'key first',
        path: cordon,
        who: 'admin',
        body: { reason: 'k' },
        headers: { 'idempotency-key': 'c-1' },
      },
      {
        name: 'key replay',
        path: cordon,
        who: 'admin',
        body: { reason: 'k' },
        headers: { 'idempotency-key': 'c-1' },
      },
      {
        name: 'key reused',
        path: cordon,
        who: 'admin',
        body: { reason: 'j' },
        headers: { 'idempotency-key': 'c-1' },
      },
    ]);
    expect([...statuses].sort()).toEqual([200, 400, 401, 403, 404, 409]);
  });
});
