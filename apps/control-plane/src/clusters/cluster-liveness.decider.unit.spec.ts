import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { clusterLivenessDecider } from './cluster-liveness.decider';
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

  describe('when an admin confirms the outage', () => {
    const confirm = (at: string) => ({
      type: 'ConfirmClusterOutage' as const,
      data: { clusterId: 'c1', reason: 'rack power lost', at },
    });
    const confirmed: ClusterLivenessEvent = {
      type: 'ClusterOutageConfirmed',
      data: {
        clusterId: 'c1',
        stalledSince: 'T1',
        heldNodes: [{ nodeId: 'n1', hostname: 'h1' }],
        reason: 'rack power lost',
        at: 'T4',
      },
    };

    it('ends the hold, naming the nodes it held and since when', () => {
      spec.given([stalled]).when(confirm('T4')).then([confirmed]);
    });

    it('refuses when no stall is held', () => {
      spec.given().when(confirm('T4')).thenRefuses('cluster_not_stalled');
      spec.given([stalled, confirmed]).when(confirm('T5')).thenRefuses('cluster_not_stalled');
      spec
        .given([
          stalled,
          {
            type: 'ClusterReportsResumed',
            data: { clusterId: 'c1', stalledSince: 'T1', at: 'T3' },
          },
        ])
        .when(confirm('T4'))
        .thenRefuses('cluster_not_stalled');
    });

    it('restarts no clocks and remembers when it was confirmed', () => {
      const state = [stalled, confirmed].reduce(
        clusterLivenessDecider.evolve,
        clusterLivenessDecider.initialState(),
      );
      expect(state).toEqual({ status: 'reporting', resumedAt: null, outageConfirmedAt: 'T4' });
    });

    it('has nothing to resume afterwards, and can hold a later stall again', () => {
      spec
        .given([stalled, confirmed])
        .when({
          type: 'ResumeClusterReports',
          data: { clusterId: 'c1', reportedNodeIds: ['n1'], at: 'T5' },
        })
        .thenNothing();
      const later = { ...stalled.data, at: 'T6' };
      spec
        .given([stalled, confirmed])
        .when({ type: 'MarkClusterReportsStalled', data: later })
        .then([{ type: 'ClusterReportsStalled', data: later }]);
    });
  });
});
