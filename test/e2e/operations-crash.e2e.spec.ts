import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import { eventually } from '../support/reports';

/**
 * Kill -9 mid-operation and start again on the same data: the operation finishes or times
 * out, never hangs in `running`. In-process jobs (no Redis), so every job is lost with the
 * process and only the start reconcile can bring them back.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const call = async (
  app: ChildApp,
  method: string,
  path: string,
  body?: object,
): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { ...(await app.auth('root', ['admin'])), 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
};

const setUpPool = async (app: ChildApp, name: string): Promise<string> => {
  const cluster = await call(app, 'POST', '/v1/clusters', {
    name,
    k8sVersion: '1.30.4',
    podCidr: '10.244.0.0/16',
    serviceCidr: '10.96.0.0/12',
  });
  // Pools change only in a running cluster: walked there as its provisioner would report it.
  for (const to of ['provisioning', 'bootstrapping', 'running']) {
    await call(app, 'POST', `/v1/clusters/${cluster.body.clusterId}/transitions`, { to });
  }
  const pool = await call(app, 'POST', `/v1/clusters/${cluster.body.clusterId}/node-pools`, {
    name,
    kind: 'gpu',
    gpuType: 'L40S',
  });
  return pool.body.poolId as string;
};

const finished = async (app: ChildApp, operationId: string, ms: number): Promise<Json> =>
  (await eventually<Json | null>(async () => {
    const op = (await call(app, 'GET', `/v1/operations/${operationId}`)).body;
    return ['succeeded', 'failed', 'timeout'].includes(op.status) ? op : null;
  }, ms)) as Json;

describe('an operation survives a crash (kill -9, restart on the same data)', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('a scale-out killed right after it was accepted finishes after the restart', async () => {
    const app = await startChildApp({ OPERATION_DEADLINE_SEC: '60' }, { redis: false });
    try {
      const poolId = await setUpPool(app, 'crash-out');
      const res = await call(app, 'POST', `/v1/node-pools/${poolId}/scale`, { desiredSize: 4 });
      expect(res.status).toBe(202);
      await app.restart('SIGKILL');
      const op = await finished(app, res.body.operationId, 20_000);
      expect(op.status).toBe('succeeded');
      const nodes = await call(app, 'GET', `/v1/nodes?poolId=${poolId}`);
      expect(nodes.body.items).toHaveLength(4);
      expect((await call(app, 'GET', `/v1/node-pools/${poolId}`)).body.operation).toBeNull();
    } finally {
      await app.kill('SIGKILL');
    }
  });

  it('an operation whose deadline passes while the process is down ends in timeout', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(202).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const app = await startChildApp(
      { OPERATION_DEADLINE_SEC: '2', PROVISIONER_URL: `http://127.0.0.1:${port}` },
      { redis: false },
    );
    try {
      const poolId = await setUpPool(app, 'crash-never');
      const res = await call(app, 'POST', `/v1/node-pools/${poolId}/scale`, { desiredSize: 2 });
      expect(res.status).toBe(202);
      await app.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 2500));
      await app.restart('SIGKILL');
      const op = await finished(app, res.body.operationId, 10_000);
      expect(op.status).toBe('timeout');
      expect((await call(app, 'GET', `/v1/node-pools/${poolId}`)).body.operation).toBeNull();
    } finally {
      await app.kill('SIGKILL');
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
