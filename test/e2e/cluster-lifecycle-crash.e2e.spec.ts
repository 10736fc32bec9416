import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import { eventually } from '../support/reports';

/**
 * The simulated provisioner's timers die with the process: the create_cluster operation asks
 * again after a restart and the cluster goes on from where it stands. In-process jobs (no
 * Redis), so only the start's reconcile brings the operation back.
 */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const call = async (app: ChildApp, method: string, path: string, body?: object) => {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { ...(await app.auth('root', ['admin'])), 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
};

const finished = async (app: ChildApp, operationId: string, ms = 30_000): Promise<Json> =>
  eventually(async () => {
    const op = (await call(app, 'GET', `/v1/operations/${operationId}`)).body;
    return ['succeeded', 'failed', 'timeout'].includes(op.status) ? op : null;
  }, ms);

const cluster = {
  name: 'crashy',
  k8sVersion: '1.30',
  podCidr: '10.244.0.0/16',
  serviceCidr: '10.96.0.0/12',
  nodePools: [{ name: 'cpu-a', kind: 'cpu', cpu: 4, memoryGiB: 16, size: 2 }],
};

describe('the cluster lifecycle survives a crash (kill -9, restart on the same data)', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('a create killed mid-provisioning is asked again after the restart and reaches running', async () => {
    const app = await startChildApp(
      { SIM_PROVISION_SEC: '6', OPERATION_DEADLINE_SEC: '120' },
      { redis: false },
    );
    try {
      const made = await call(app, 'POST', '/v1/clusters', cluster);
      expect(made.status).toBe(201);
      const { clusterId, operationId } = made.body;
      await eventually(async () => {
        const c = (await call(app, 'GET', `/v1/clusters/${clusterId}`)).body;
        return c.status === 'provisioning';
      });
      await app.restart('SIGKILL');
      expect((await call(app, 'GET', `/v1/clusters/${clusterId}`)).body.status).toBe(
        'provisioning',
      );
      expect(await finished(app, operationId)).toMatchObject({ status: 'succeeded' });
      const view = (await call(app, 'GET', `/v1/clusters/${clusterId}`)).body;
      expect(view).toMatchObject({
        status: 'running',
        apiEndpoint: `https://${clusterId}.k8s.sim.local:6443`,
      });
      // Each move once: the re-ask went on from provisioning, not from the start.
      expect(view.history.map((h: Json) => h.to)).toEqual([
        'requested',
        'provisioning',
        'bootstrapping',
        'running',
      ]);
      const nodes = (await call(app, 'GET', `/v1/nodes?clusterId=${clusterId}`)).body.items;
      expect(nodes).toHaveLength(2);
    } finally {
      await app.kill('SIGKILL');
    }
  }, 120_000);

  it('SIM_PROVISION_FAIL fails the step it names; a repair brings the cluster to running', async () => {
    const app = await startChildApp(
      { SIM_PROVISION_SEC: '0', SIM_PROVISION_FAIL: 'provisioning' },
      { redis: false },
    );
    try {
      const made = (await call(app, 'POST', '/v1/clusters', cluster)).body;
      expect(await finished(app, made.operationId)).toMatchObject({
        status: 'failed',
        error: 'cluster failed during provisioning',
      });
      const repair = await call(app, 'POST', `/v1/clusters/${made.clusterId}/repair`);
      expect(repair.status).toBe(202);
      expect(await finished(app, repair.body.operationId)).toMatchObject({ status: 'succeeded' });
      const view = (await call(app, 'GET', `/v1/clusters/${made.clusterId}`)).body;
      expect(view.status).toBe('running');
      expect(
        (await call(app, 'GET', `/v1/nodes?clusterId=${made.clusterId}`)).body.items,
      ).toHaveLength(2);
    } finally {
      await app.kill('SIGKILL');
    }
  }, 120_000);
});
