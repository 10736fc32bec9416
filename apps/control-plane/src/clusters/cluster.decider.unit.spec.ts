import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { CLUSTER_STATUSES, ClusterEvent, ClusterStatus } from './cluster.events';
import { clusterDecider, compareVersions } from './cluster.decider';
import { parseK8sVersions } from '../config/k8s-versions';
import { Cidr, checkCidr, cidrsOverlap } from '../catalog/cidr';
import {
  at,
  moved,
  requested,
  running,
  upgradingTo131,
} from '../../../../test/support/cluster-events';

const spec = deciderSpec(clusterDecider);
const catalog = (() => {
  const parsed = parseK8sVersions('1.29,1.30*,1.31,1.32');
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed;
})();
const upgrade = (k8sVersion: string) => ({
  type: 'UpgradeCluster' as const,
  data: { clusterId: 'c1', k8sVersion, catalog, at },
});
const remove = (runningSessions = 0) => ({
  type: 'DeleteCluster' as const,
  data: { clusterId: 'c1', runningSessions, at },
});
/** The events that bring c1 to each status (failed: from provisioning). */
const reach: Record<ClusterStatus, ClusterEvent[]> = {
  requested: [requested],
  provisioning: running.slice(0, 2),
  bootstrapping: running.slice(0, 3),
  running,
  degraded: [...running, moved('running', 'degraded')],
  upgrading: [...running, upgradingTo131],
  deleting: [...running, moved('running', 'deleting')],
  deleted: [...running, moved('running', 'deleting'), moved('deleting', 'deleted')],
  failed: [...running.slice(0, 2), moved('provisioning', 'failed')],
};
const go = (to: ClusterStatus) => ({
  type: 'TransitionCluster' as const,
  data: { clusterId: 'c1', to, reason: null, at },
});

describe('cluster lifecycle', () => {
  it('is requested when created, and a repeated request changes nothing', () => {
    spec.given([]).when({ type: 'RequestCluster', data: requested.data }).then([requested]);
    spec.given([requested]).when({ type: 'RequestCluster', data: requested.data }).thenNothing();
  });

  it('walks requested → provisioning → bootstrapping → running', () => {
    spec
      .given([requested])
      .when(go('provisioning'))
      .then([moved('requested', 'provisioning')]);
    spec
      .given(running.slice(0, 2))
      .when(go('bootstrapping'))
      .then([moved('provisioning', 'bootstrapping')]);
    spec
      .given(running.slice(0, 3))
      .when(go('running'))
      .then([moved('bootstrapping', 'running')]);
    expect(spec.given(running).state.status).toBe('running');
  });

  it('goes running ⇄ degraded and running → upgrading → running', () => {
    spec
      .given(running)
      .when(go('degraded'))
      .then([moved('running', 'degraded')]);
    spec
      .given([...running, moved('running', 'degraded')])
      .when(go('running'))
      .then([moved('degraded', 'running')]);
    spec
      .given(running)
      .when(go('upgrading'))
      .then([moved('running', 'upgrading')]);
    spec
      .given([...running, moved('running', 'upgrading')])
      .when(go('running'))
      .then([moved('upgrading', 'running')]);
  });

  it('may fail from any step and retries the step it failed in', () => {
    const failed = [...running.slice(0, 2), moved('provisioning', 'failed')];
    spec
      .given(running.slice(0, 2))
      .when(go('failed'))
      .then([moved('provisioning', 'failed')]);
    spec
      .given(failed)
      .when(go('provisioning'))
      .then([moved('failed', 'provisioning')]);
    spec
      .given(failed)
      .when(go('deleting'))
      .then([moved('failed', 'deleting')]);
    spec.given(failed).when(go('running')).thenRefuses('invalid_transition');
  });

  it('refuses any other move with invalid_transition', () => {
    spec.given([requested]).when(go('running')).thenRefuses('invalid_transition');
    spec.given(running).when(go('provisioning')).thenRefuses('invalid_transition');
    spec
      .given([...running, moved('running', 'deleting')])
      .when(go('running'))
      .thenRefuses('invalid_transition');
    spec.given([]).when(go('running')).thenRefuses('not_found');
  });

  describe('when the cluster does not exist', () => {
    it('refuses every command with not_found naming the cluster', () => {
      const commands = [
        go('running'),
        { type: 'AddPoolToCluster' as const, data: { clusterId: 'c9', poolId: 'p1', at } },
        { type: 'RemovePoolFromCluster' as const, data: { clusterId: 'c9', poolId: 'p1', at } },
      ];
      for (const command of commands) {
        const id = command.data.clusterId;
        expect(() => clusterDecider.decide(command, clusterDecider.initialState())).toThrow(
          expect.objectContaining({
            code: 'not_found',
            message: `cluster ${id} does not exist`,
            details: expect.objectContaining({ id }),
          }),
        );
      }
    });
  });

  it('upgrades a running cluster, and refuses another upgrade while one is under way, whatever its version', () => {
    const upgrading = upgradingTo131;
    spec.given(running).when(upgrade('1.31.0')).then([upgrading]);
    expect(spec.given([...running, upgrading]).state).toMatchObject({ targetVersion: '1.31.0' });
    spec
      .given([...running, upgrading])
      .when(upgrade('1.32.0'))
      .thenRefuses('invalid_transition');
    spec
      .given([...running, upgrading])
      .when(upgrade('1.31.0'))
      .thenRefuses('invalid_transition');
    spec.given([requested]).when(upgrade('1.31.0')).thenRefuses('invalid_transition');
    spec.given([]).when(upgrade('1.31.0')).thenRefuses('not_found');
  });

  it('upgrades exactly one minor forward within the catalog, else version_skew', () => {
    for (const version of ['1.30.4', 'v1.30.4', '1.30', '1.29.9', '0.31', '1.32', '1.32.1', '2.0'])
      spec.given(running).when(upgrade(version)).thenRefuses('version_skew');
    for (const version of ['1.31', 'v1.31.0', '1.31.7'])
      expect(spec.given(running).when(upgrade(version)).thenEvents()).toHaveLength(1);
    // At the catalog's newest minor there is nowhere to go.
    const at132 = [
      { ...requested, data: { ...requested.data, k8sVersion: '1.32' } },
      ...running.slice(1),
    ];
    spec.given(at132).when(upgrade('1.33')).thenRefuses('version_skew');
    // An adopted cluster's version is unknown: any listed one is taken.
    const adopted: ClusterEvent = {
      type: 'ClusterAdopted',
      data: { clusterId: 'c1', seenNodeId: 'n1', at },
    };
    expect(spec.given([adopted]).when(upgrade('1.29')).thenEvents()).toHaveLength(1);
    spec.given([adopted]).when(upgrade('1.28')).thenRefuses('version_skew');
    expect(compareVersions('1.30', '1.30.0')).toBe(0);
    expect(compareVersions('1.10', '1.9.9')).toBe(1);
  });

  it('keeps the endpoint and CA the provisioner reports on → running', () => {
    const endpoint = { apiEndpoint: 'https://c1.k8s.sim.local:6443', caCertificate: 'PEM' };
    const reached = {
      type: 'ClusterTransitioned' as const,
      data: { ...(moved('bootstrapping', 'running').data as object), ...endpoint },
    } as ClusterEvent;
    spec
      .given(running.slice(0, 3))
      .when({ ...go('running'), data: { ...go('running').data, ...endpoint } })
      .then([reached]);
    const state = spec.given([
      ...running.slice(0, 3),
      reached,
      moved('running', 'upgrading'),
    ]).state;
    expect(state).toMatchObject(endpoint);
    expect(spec.given(running).state).toMatchObject({ apiEndpoint: null, caCertificate: null });
  });

  it('stores velero as asked at create (null when not asked)', () => {
    const velero = { enabled: true, schedule: '0 3 * * *', ttlHours: 72 };
    const withVelero = { ...requested, data: { ...requested.data, velero } };
    spec.given([]).when({ type: 'RequestCluster', data: withVelero.data }).then([withVelero]);
    expect(spec.given([withVelero]).state).toMatchObject({ velero });
    expect(spec.given([requested]).state).toMatchObject({ velero: null });
  });

  describe('delete', () => {
    for (const status of CLUSTER_STATUSES) {
      const given = reach[status];
      if (status === 'deleting') {
        it('asked again while deleting, records nothing new', () => {
          spec.given(given).when(remove()).thenNothing();
        });
      } else if (status === 'deleted') {
        it('refuses a deleted cluster: invalid_transition (deleted is final)', () => {
          spec.given(given).when(remove()).thenRefuses('invalid_transition');
          for (const to of CLUSTER_STATUSES.filter((s) => s !== 'deleted'))
            spec.given(given).when(go(to)).thenRefuses('invalid_transition');
          spec.given(given).when(go('deleted')).thenNothing();
          spec.given(given).when(upgrade('1.31')).thenRefuses('invalid_transition');
          spec
            .given(given)
            .when({ type: 'AddPoolToCluster', data: { clusterId: 'c1', poolId: 'p9', at } })
            .thenRefuses('invalid_transition');
        });
      } else {
        it(`goes ${status} → deleting, refused with cluster_in_use while sessions run`, () => {
          spec
            .given(given)
            .when(remove())
            .then([
              {
                type: 'ClusterTransitioned',
                data: {
                  clusterId: 'c1',
                  from: status,
                  to: 'deleting',
                  reason: 'delete requested',
                  at,
                },
              },
            ]);
          spec.given(given).when(remove(2)).thenRefuses('cluster_in_use');
        });
      }
    }
    it('goes deleting → deleted only, and deleted is where it ends', () => {
      spec
        .given(reach.deleting)
        .when(go('deleted'))
        .then([moved('deleting', 'deleted')]);
      for (const status of CLUSTER_STATUSES.filter((s) => s !== 'deleting' && s !== 'deleted'))
        spec.given(reach[status]).when(go('deleted')).thenRefuses('invalid_transition');
      expect(spec.given(reach.deleted).state.status).toBe('deleted');
    });
    it('refuses delete of a cluster that does not exist: not_found', () => {
      spec.given([]).when(remove()).thenRefuses('not_found');
    });
  });

  describe('when an upgrade failed', () => {
    const upgrading = upgradingTo131;
    const failed = [...running, upgrading, moved('upgrading', 'failed')];

    it('retries it toward the same version and ends running at it', () => {
      expect(spec.given(failed).state).toMatchObject({ targetVersion: '1.31.0' });
      spec
        .given(failed)
        .when(go('upgrading'))
        .then([moved('failed', 'upgrading')]);
      const retried = [...failed, moved('failed', 'upgrading')];
      expect(spec.given(retried).state).toMatchObject({
        status: 'upgrading',
        k8sVersion: '1.30.4',
        targetVersion: '1.31.0',
      });
      expect(spec.given([...retried, moved('upgrading', 'running')]).state).toMatchObject({
        status: 'running',
        k8sVersion: '1.31.0',
        targetVersion: null,
      });
    });

    it('keeps its version when deleted instead', () => {
      expect(spec.given([...failed, moved('failed', 'deleting')]).state).toMatchObject({
        k8sVersion: '1.30.4',
        targetVersion: null,
      });
    });
  });

  it('treats a step reported twice as done', () => {
    spec.given(running).when(go('running')).thenNothing();
  });

  it('adopts a cluster first seen in a report as running, once', () => {
    const adopt = {
      type: 'AdoptCluster' as const,
      data: { clusterId: 'c9', seenNodeId: 'n1', at },
    };
    spec
      .given([])
      .when(adopt)
      .then([{ type: 'ClusterAdopted', data: adopt.data }]);
    expect(spec.given([{ type: 'ClusterAdopted', data: adopt.data }]).state.status).toBe('running');
    spec
      .given([{ type: 'ClusterAdopted', data: adopt.data }])
      .when(adopt)
      .thenNothing();
    spec.given([requested]).when(adopt).thenNothing();
  });

  describe('when the cluster has one pool left', () => {
    const onePool: ClusterEvent[] = [
      ...running,
      { type: 'ClusterPoolAdded', data: { clusterId: 'c1', poolId: 'p1', at } },
    ];
    it('refuses to remove it (last_pool) and removes one of two', () => {
      spec
        .given(onePool)
        .when({ type: 'RemovePoolFromCluster', data: { clusterId: 'c1', poolId: 'p1', at } })
        .thenRefuses('last_pool');
      spec
        .given([
          ...onePool,
          { type: 'ClusterPoolAdded', data: { clusterId: 'c1', poolId: 'p2', at } },
        ])
        .when({ type: 'RemovePoolFromCluster', data: { clusterId: 'c1', poolId: 'p1', at } })
        .then([{ type: 'ClusterPoolRemoved', data: { clusterId: 'c1', poolId: 'p1', at } }]);
    });
  });
});

describe('CIDRs', () => {
  it('parses blocks strictly and finds overlaps', () => {
    /** The block a text names; the test fails on a text that is none. */
    const block = (text: string): Cidr => {
      const checked = checkCidr(text);
      if (!('cidr' in checked)) throw new Error(`${text}: ${checked.problem}`);
      return checked.cidr;
    };
    expect(block('10.244.0.0/16')).toEqual({ base: 0x0af40000, prefix: 16 });
    for (const text of ['10.244.0.1/16', '300.0.0.0/8', '10.0.0.0/33'])
      expect(checkCidr(text)).toEqual({ problem: expect.any(String) });
    expect(cidrsOverlap(block('10.0.0.0/8'), block('10.96.0.0/12'))).toBe(true);
    expect(cidrsOverlap(block('10.244.0.0/16'), block('10.96.0.0/12'))).toBe(false);
  });

  it('tells what is wrong with a text that is no block', () => {
    const rule = 'must be an IPv4 CIDR a.b.c.d/n (octets 0-255 without leading zeros, n 0-32)';
    expect(checkCidr('0.0.0.0/0')).toEqual({ cidr: { base: 0, prefix: 0 } });
    expect(checkCidr('10.244.0/16')).toEqual({ problem: rule });
    expect(checkCidr('010.244.0.0/16')).toEqual({
      problem: `${rule}: octet 010 has a leading zero`,
    });
    expect(checkCidr('10.256.0.0/16')).toEqual({ problem: `${rule}: octet 256 is above 255` });
    expect(checkCidr('10.244.0.0/33')).toEqual({ problem: `${rule}: prefix /33 is above 32` });
    expect(checkCidr('10.244.3.1/22')).toEqual({
      problem: 'must have no host bits set (10.244.3.1/22 lies in 10.244.0.0/22)',
    });
  });
});

describe('a cluster’s network set by an admin', () => {
  const setNetwork = (podCidr: string, serviceCidr: string) => ({
    type: 'SetClusterNetwork' as const,
    data: { clusterId: 'c1', podCidr, serviceCidr, at },
  });
  it('records new blocks, and the same blocks again as nothing', () => {
    spec
      .given(running)
      .when(setNetwork('10.50.0.0/16', '10.150.0.0/16'))
      .then([
        { type: 'ClusterNetworkSet', data: setNetwork('10.50.0.0/16', '10.150.0.0/16').data },
      ]);
    const set = spec.given(running).when(setNetwork('10.50.0.0/16', '10.150.0.0/16')).thenEvents();
    expect(spec.given([...running, ...set]).state).toMatchObject({
      podCidr: '10.50.0.0/16',
      serviceCidr: '10.150.0.0/16',
    });
    spec
      .given([...running, ...set])
      .when(setNetwork('10.50.0.0/16', '10.150.0.0/16'))
      .thenNothing();
  });
  it('refuses a cluster that does not exist', () => {
    spec.given([]).when(setNetwork('10.50.0.0/16', '10.150.0.0/16')).thenRefuses('not_found');
  });
});
