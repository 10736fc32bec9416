import { ClusterEvent, ClusterStatus } from '../../apps/control-plane/src/clusters';

/** Events of cluster c1 for the cluster specs, all at one time. */
export const at = '2026-12-02T10:00:00.000Z';

export const requested: Extract<ClusterEvent, { type: 'ClusterRequested' }> = {
  type: 'ClusterRequested',
  data: {
    clusterId: 'c1',
    name: 'prod',
    k8sVersion: '1.30.4',
    podCidr: '10.244.0.0/16',
    serviceCidr: '10.96.0.0/12',
    at,
  },
};

/** A move between two statuses, naming a version when it starts an upgrade. */
export const moved = (
  from: ClusterStatus,
  to: ClusterStatus,
  k8sVersion?: string,
): ClusterEvent => ({
  type: 'ClusterTransitioned',
  data: { clusterId: 'c1', from, to, reason: null, ...(k8sVersion ? { k8sVersion } : {}), at },
});

/** requested → provisioning → bootstrapping → running. */
export const running: ClusterEvent[] = [
  requested,
  moved('requested', 'provisioning'),
  moved('provisioning', 'bootstrapping'),
  moved('bootstrapping', 'running'),
];

/** running → upgrading to 1.31.0, as UpgradeCluster records it. */
export const upgradingTo131: ClusterEvent = {
  type: 'ClusterTransitioned',
  data: {
    clusterId: 'c1',
    from: 'running',
    to: 'upgrading',
    reason: 'upgrade to 1.31.0',
    k8sVersion: '1.31.0',
    at,
  },
};
