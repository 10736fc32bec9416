import { DomainError } from '@fleet/kernel';
import { CLUSTER_STATUSES } from './cluster.events';
import { ClusterState } from './cluster.decider';
import { refuseUnlessWorking, takesPlacements } from './cluster-gate';

const inStatus = (status: (typeof CLUSTER_STATUSES)[number]): ClusterState => ({
  status,
  clusterId: 'c1',
  name: 'c1',
  k8sVersion: '1.30',
  podCidr: null,
  serviceCidr: null,
  adopted: false,
  pools: [],
  failedFrom: null,
  targetVersion: null,
});

const refusal = (state: ClusterState): DomainError | null => {
  try {
    refuseUnlessWorking('c1', state);
    return null;
  } catch (error) {
    return error as DomainError;
  }
};

describe('the cluster gate', () => {
  it.each(['running', 'upgrading', 'degraded'] as const)(
    'lets work through on a %s cluster',
    (s) => {
      expect(refusal(inStatus(s))).toBeNull();
      expect(takesPlacements(inStatus(s))).toBe(true);
    },
  );

  it.each(['requested', 'provisioning', 'bootstrapping', 'deleting', 'failed'] as const)(
    'refuses work on a %s cluster with cluster_not_running, naming it and its status',
    (s) => {
      const error = refusal(inStatus(s));
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({
        code: 'cluster_not_running',
        kind: 'conflict',
        details: { clusterId: 'c1', status: s },
      });
      expect(takesPlacements(inStatus(s))).toBe(false);
    },
  );

  it('refuses any status it does not know to be working (a later `deleted` too)', () => {
    const deleted = { ...inStatus('running'), status: 'deleted' } as unknown as ClusterState;
    expect(refusal(deleted)?.code).toBe('cluster_not_running');
    expect(takesPlacements(deleted)).toBe(false);
  });

  it('leaves an unknown cluster to the caller, and keeps its nodes candidates (adoption)', () => {
    expect(refusal({ status: 'absent' })).toBeNull();
    expect(takesPlacements({ status: 'absent' })).toBe(true);
  });
});
