import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import {
  GuardNode,
  clusterLivenessDecider,
  isMassFailure,
  weighSilence,
} from './cluster-liveness.decider';
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

  describe('the nodes the guard weighs', () => {
    const NOW = Date.parse('2026-12-02T10:00:00.000Z');
    const WINDOW = 6000;
    const UNTIL = '2026-12-02T10:00:40.000Z';
    type Named = GuardNode & { id: string };
    const silent = (id: string, over: Partial<Named> = {}): Named => ({
      id,
      seenAt: NOW - WINDOW,
      silentSince: NOW - WINDOW,
      removal: null,
      ...over,
    });
    const reporting = (id: string): Named => silent(id, { seenAt: NOW, silentSince: NOW });
    const ids = ({ judged, stale }: { judged: Named[]; stale: Named[] }) => ({
      judged: judged.map((n) => n.id),
      stale: stale.map((n) => n.id),
    });
    const guardHolds = (w: { judged: Named[]; stale: Named[] }) =>
      isMassFailure(w.stale.length, w.judged.length, 0.55, 3);

    it('counts nodes silent for half a window as stale with the rest', () => {
      const half = silent('d', { seenAt: NOW - WINDOW / 2, silentSince: NOW - WINDOW / 2 });
      const w = weighSilence(
        [silent('a'), silent('b'), silent('c'), half, reporting('k')],
        NOW,
        WINDOW,
        null,
      );
      expect(ids(w)).toEqual({ judged: ['a', 'b', 'c', 'd', 'k'], stale: ['a', 'b', 'c', 'd'] });
      expect(guardHolds(w)).toBe(true);
    });

    describe('when a pool operation is removing most of the cluster', () => {
      const removing = (id: string) => silent(id, { removal: { until: UNTIL } });
      const cluster = [
        removing('p1'),
        removing('p2'),
        removing('p3'),
        removing('p4'),
        reporting('k'),
      ];

      it('leaves the nodes on their way out out of both counts: no stall', () => {
        const w = weighSilence(cluster, NOW, WINDOW, null);
        expect(ids(w)).toEqual({ judged: ['k'], stale: [] });
        expect(guardHolds(w)).toBe(false);
      });

      it('still holds the other nodes falling silent together, counted among the others', () => {
        const w = weighSilence(
          [...cluster, silent('q1'), silent('q2'), silent('q3'), reporting('k2')],
          NOW,
          WINDOW,
          null,
        );
        expect(ids(w)).toEqual({
          judged: ['k', 'q1', 'q2', 'q3', 'k2'],
          stale: ['q1', 'q2', 'q3'],
        });
        expect(guardHolds(w)).toBe(true);
      });

      it('counts them again once the operation deadline has passed', () => {
        const late = Date.parse(UNTIL);
        const w = weighSilence(cluster, late, WINDOW, null);
        expect(ids(w).judged).toEqual(['p1', 'p2', 'p3', 'p4', 'k']);
        expect(guardHolds(w)).toBe(true);
      });
    });

    it('leaves out silence from before an outage confirmation', () => {
      const w = weighSilence([silent('a'), silent('b'), reporting('k')], NOW, WINDOW, NOW - 1000);
      expect(ids(w)).toEqual({ judged: ['k'], stale: [] });
    });
  });
});
