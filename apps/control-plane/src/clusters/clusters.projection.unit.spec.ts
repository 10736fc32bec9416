import { clusterDecider } from './cluster.decider';
import { ClusterEvent, ClusterStatus } from './cluster.events';
import { ClusterDoc, projectCluster } from './clusters.projection';

const at = '2026-12-02T10:00:00.000Z';
const requested: ClusterEvent = {
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
const moved = (from: ClusterStatus, to: ClusterStatus, k8sVersion?: string): ClusterEvent => ({
  type: 'ClusterTransitioned',
  data: { clusterId: 'c1', from, to, reason: null, ...(k8sVersion ? { k8sVersion } : {}), at },
});

/** The document after the events, from the first on. */
const project = (events: ClusterEvent[]): ClusterDoc =>
  events.reduce<ClusterDoc | null>((doc, e, revision) => projectCluster(doc, e, revision), null)!;

describe('the clusters projection', () => {
  describe('when an upgrade failed and is retried', () => {
    const events = [
      requested,
      moved('requested', 'provisioning'),
      moved('provisioning', 'bootstrapping'),
      moved('bootstrapping', 'running'),
      moved('running', 'upgrading', '1.31.0'),
      moved('upgrading', 'failed'),
      moved('failed', 'upgrading'),
    ];

    it('shows the target while retrying, and the new version once running', () => {
      expect(project(events)).toMatchObject({ k8sVersion: '1.30.4', targetVersion: '1.31.0' });
      expect(project([...events, moved('upgrading', 'running')])).toMatchObject({
        status: 'running',
        k8sVersion: '1.31.0',
        targetVersion: null,
      });
    });

    it('agrees with the cluster state after every event', () => {
      const all = [...events, moved('upgrading', 'running')];
      all.forEach((_, i) => {
        const state = all
          .slice(0, i + 1)
          .reduce(clusterDecider.evolve, clusterDecider.initialState());
        const doc = project(all.slice(0, i + 1));
        expect({ k8sVersion: doc.k8sVersion, targetVersion: doc.targetVersion }).toEqual({
          k8sVersion: 'k8sVersion' in state ? state.k8sVersion : undefined,
          targetVersion: 'targetVersion' in state ? state.targetVersion : undefined,
        });
      });
    });
  });
});
