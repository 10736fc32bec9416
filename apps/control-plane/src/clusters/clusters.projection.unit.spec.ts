import { clusterDecider } from './cluster.decider';
import { ClusterEvent } from './cluster.events';
import { moved, running } from '../../../../test/support/cluster-events';
import { ClusterDoc, projectCluster } from './clusters.projection';

/** The document after the events, from the first on. */
const project = (events: ClusterEvent[]): ClusterDoc =>
  events.reduce<ClusterDoc | null>((doc, e, revision) => projectCluster(doc, e, revision), null)!;

describe('the clusters projection', () => {
  describe('when an upgrade failed and is retried', () => {
    const events = [
      ...running,
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
