import net, { AddressInfo } from 'node:net';
import { startProvisionerDouble } from '../../../../test/support/provisioner-double';
import { PoolDefinition } from '../pools';
import { HttpProvisioner } from './http-provisioner';

/** The HTTP provisioner's side of docs/PROVISIONER.md, against a local double. */
describe('the HTTP provisioner protocol', () => {
  const pool: PoolDefinition = {
    poolId: 'p1',
    clusterId: 'c1',
    name: 'gpu-a',
    kind: 'gpu',
    gpuType: 'L40S',
    mode: 'shared',
    spec: { cpu: 16, memoryGiB: 64, diskGiB: 200, gpusPerNode: 2 },
    tenants: [],
    autoscaling: null,
  };
  const node = {
    role: 'gpu',
    gpuType: 'L40S',
    mode: 'shared',
    cpu: 16,
    memoryGiB: 64,
    diskGiB: 200,
    gpusPerNode: 2,
    labels: { 'fleet/pool': 'p1', 'fleet/mode': 'shared' },
  };

  it('sends one POST per request, keyed by operation and action, with the documented bodies', async () => {
    const double = await startProvisionerDouble();
    try {
      const http = new HttpProvisioner(`${double.url}/base`);
      const plan = { pool, hostnames: ['gpu-a-1', 'gpu-a-2'] };
      await http.createCluster({
        operationId: 'o1',
        clusterId: 'c1',
        name: 'prod',
        k8sVersion: '1.30',
        podCidr: '10.244.0.0/16',
        serviceCidr: '10.96.0.0/12',
        pools: [plan],
      });
      await http.upgradeCluster({ operationId: 'o2', clusterId: 'c1', k8sVersion: '1.31' });
      await http.repairCluster({ operationId: 'o3', clusterId: 'c1', pools: [plan] });
      const nodes = [{ nodeId: 'n1', hostname: 'gpu-a-1', poolId: 'p1' }];
      await http.deleteCluster({ operationId: 'o4', clusterId: 'c1', nodes });
      await http.createNodes({ operationId: 'o5', pool, hostnames: ['gpu-a-3'] });
      const wirePool = { poolId: 'p1', name: 'gpu-a', hostnames: plan.hostnames, node };
      expect(double.calls).toEqual([
        {
          path: '/base/v1/cluster-requests/create',
          key: 'o1:cluster-create',
          body: {
            operationId: 'o1',
            clusterId: 'c1',
            name: 'prod',
            k8sVersion: '1.30',
            podCidr: '10.244.0.0/16',
            serviceCidr: '10.96.0.0/12',
            pools: [wirePool],
          },
        },
        {
          path: '/base/v1/cluster-requests/upgrade',
          key: 'o2:cluster-upgrade',
          body: { operationId: 'o2', clusterId: 'c1', k8sVersion: '1.31' },
        },
        {
          path: '/base/v1/cluster-requests/repair',
          key: 'o3:cluster-repair',
          body: { operationId: 'o3', clusterId: 'c1', pools: [wirePool] },
        },
        {
          path: '/base/v1/cluster-requests/delete',
          key: 'o4:cluster-delete',
          body: { operationId: 'o4', clusterId: 'c1', nodes },
        },
        {
          path: '/base/v1/node-requests/create',
          key: 'o5:create',
          body: { operationId: 'o5', clusterId: 'c1', poolId: 'p1', hostnames: ['gpu-a-3'], node },
        },
      ]);
    } finally {
      await double.close();
    }
  });

  it('fails a request the provisioner does not take (non-2xx), so the step is retried', async () => {
    const double = await startProvisionerDouble((call) =>
      call.key === 'o1:cluster-upgrade' ? 503 : 202,
    );
    try {
      const http = new HttpProvisioner(double.url);
      await expect(
        http.upgradeCluster({ operationId: 'o1', clusterId: 'c1', k8sVersion: '1.31' }),
      ).rejects.toThrow('provisioner answered 503 to v1/cluster-requests/upgrade');
      // Asked again with the same key: the provisioner recognises the request.
      await expect(
        http.upgradeCluster({ operationId: 'o1', clusterId: 'c1', k8sVersion: '1.31' }),
      ).rejects.toThrow();
      expect(double.calls.map((c) => c.key)).toEqual(['o1:cluster-upgrade', 'o1:cluster-upgrade']);
    } finally {
      await double.close();
    }
  });

  it('gives up on a provisioner that does not answer within its timeout', async () => {
    const silent = net.createServer(() => undefined); // takes the connection, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const http = new HttpProvisioner(`http://127.0.0.1:${port}`, 200);
      const started = Date.now();
      await expect(
        http.deleteCluster({ operationId: 'o1', clusterId: 'c1', nodes: [] }),
      ).rejects.toThrow(/timeout|abort/i);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.close();
    }
  });
});
