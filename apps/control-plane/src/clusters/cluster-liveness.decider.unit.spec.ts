import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { clusterLivenessDecider, isMassFailure } from './cluster-liveness.decider';
import { ClusterLivenessEvent } from './cluster-liveness.events';

const spec = deciderSpec(clusterLivenessDecider);
const stalled: ClusterLivenessEvent = {
  type: 'ClusterReportsStalled',
  data: {
    clusterId: 'c1',
    staleNodes: [{ nodeId: 'n1', hostname: 'h1' }],
    onlineNodes: 5,
    lastSeenAt: null,
    at: 'T1',
  },
};

describe('cluster liveness', () => {
  it('records a stall once, however many timeouts notice it', () => {
    spec.given().when({ type: 'MarkClusterReportsStalled', data: stalled.data }).then([stalled]);
    spec
      .given([stalled])
      .when({ type: 'MarkClusterReportsStalled', data: { ...stalled.data, at: 'T2' } })
      .thenNothing();
  });

  it('resumes when a held node reports again', () => {
    spec
      .given([stalled])
      .when({
        type: 'ResumeClusterReports',
        data: { clusterId: 'c1', reportedNodeIds: ['n1'], at: 'T3' },
      })
      .then([
        { type: 'ClusterReportsResumed', data: { clusterId: 'c1', stalledSince: 'T1', at: 'T3' } },
      ]);
  });

  it('stays stalled while only healthy nodes report', () => {
    spec
      .given([stalled])
      .when({
        type: 'ResumeClusterReports',
        data: { clusterId: 'c1', reportedNodeIds: ['n5'], at: 'T3' },
      })
      .thenNothing();
  });

  it('has nothing to resume when not stalled', () => {
    spec
      .given()
      .when({
        type: 'ResumeClusterReports',
        data: { clusterId: 'c1', reportedNodeIds: ['n1'], at: 'T3' },
      })
      .thenNothing();
  });

  describe('the mass-failure rule', () => {
    it('holds for 4 of 5 stale nodes', () => expect(isMassFailure(4, 5, 0.55, 3)).toBe(true));
    it('does not hold for 2 of 2: fewer than the minimum', () =>
      expect(isMassFailure(2, 2, 0.55, 3)).toBe(false));
    it('does not hold for 1 of 5', () => expect(isMassFailure(1, 5, 0.55, 3)).toBe(false));
    it('does not hold at exactly the ratio', () =>
      expect(isMassFailure(11, 20, 0.55, 3)).toBe(false));
    it('does not hold with no online nodes', () =>
      expect(isMassFailure(0, 0, 0.55, 3)).toBe(false));
  });
});
