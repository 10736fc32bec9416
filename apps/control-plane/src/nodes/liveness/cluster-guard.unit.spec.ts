import { uuidFrom } from '@fleet/kernel';
import { ClusterLivenessState } from '../../clusters';
import { WeighedNode, weighCluster } from './cluster-guard';

const T0 = '2026-12-02T10:00:00.000Z';
const iso = (at: number) => new Date(at).toISOString();

describe('the mass-failure guard', () => {
  const guard = { staleMs: 2000, massFailureRatio: 0.55, massFailureMinNodes: 3 };
  const at = Date.parse(T0) + 10_000;
  const node = (id: string, silentFor: number, over: Partial<WeighedNode> = {}): WeighedNode => ({
    nodeId: id,
    hostname: `host-${id}`,
    seenAt: at - silentFor,
    silentSince: at - silentFor,
    lastSeenAt: at - silentFor,
    removal: null,
    ...over,
  });
  const reporting: ClusterLivenessState = {
    status: 'reporting',
    resumedAt: null,
    outageConfirmedAt: null,
  };
  const fleet = (silent: number, healthy: number) => [
    ...Array.from({ length: silent }, (_, i) => node(`s${i}`, 1000 + i)),
    ...Array.from({ length: healthy }, (_, i) => node(`h${i}`, 100)),
  ];

  it('holds nothing while few nodes fall silent', () => {
    const verdict = weighCluster('c1', fleet(2, 3), { state: reporting, revision: 4 }, at, guard);
    expect(verdict.stall).toBeNull();
    expect(verdict.holds('s0')).toBe(false);
  });

  it('marks a stall once per cluster revision when most nodes fall silent together', () => {
    const verdict = weighCluster('c1', fleet(4, 1), { state: reporting, revision: 4 }, at, guard);
    expect(verdict.holds('s0')).toBe(true);
    expect(verdict.stall).toEqual({
      commandId: uuidFrom('cluster-stalled', 'c1', '4'),
      command: {
        type: 'MarkClusterReportsStalled',
        data: {
          clusterId: 'c1',
          staleNodes: ['s0', 's1', 's2', 's3'].map((id) => ({
            nodeId: id,
            hostname: `host-${id}`,
          })),
          onlineNodes: 5,
          // The latest real report among them.
          lastSeenAt: iso(at - 1000),
          at: iso(at),
        },
      },
    });
    expect(
      weighCluster('c1', fleet(4, 1), { state: reporting, revision: null }, at, guard).stall
        ?.commandId,
    ).toBe(uuidFrom('cluster-stalled', 'c1', '-1'));
  });

  it('records the latest real report, not a restarted clock', () => {
    const nodes = fleet(4, 1).map((n) =>
      n.nodeId.startsWith('s') ? { ...n, silentSince: at - 1500, lastSeenAt: at - 9000 } : n,
    );
    const verdict = weighCluster('c1', nodes, { state: reporting, revision: 4 }, at, guard);
    expect(verdict.stall?.command.data.lastSeenAt).toBe(iso(at - 9000));
  });

  it('leaves out nodes a pool operation is removing', () => {
    const removal = { until: iso(at + 60_000) };
    const nodes = [...fleet(2, 1), node('r0', 1000, { removal }), node('r1', 1000, { removal })];
    const verdict = weighCluster('c1', nodes, { state: reporting, revision: 4 }, at, guard);
    expect(verdict.stall).toBeNull();
    expect(verdict.judgedNodes).toBe(3);
  });

  it('does not hold again silence from before an admin confirmed an outage', () => {
    const state: ClusterLivenessState = {
      status: 'reporting',
      resumedAt: null,
      outageConfirmedAt: iso(at - 500),
    };
    const verdict = weighCluster('c1', fleet(4, 1), { state, revision: 6 }, at, guard);
    expect(verdict.stall).toBeNull();
    expect(verdict.holds('s0')).toBe(false);
  });

  describe('while a stall holds', () => {
    const stalled: ClusterLivenessState = {
      status: 'stalled',
      stalledAt: T0,
      held: new Set(['s0', 's1', 's2']),
      heldNodes: [],
    };

    it('holds the nodes it stalled with, and takes one that stops later offline', () => {
      const verdict = weighCluster('c1', fleet(4, 4), { state: stalled, revision: 5 }, at, guard);
      expect(verdict.stall).toBeNull();
      expect(verdict.holds('s0')).toBe(true);
      expect(verdict.holds('s3')).toBe(false);
    });

    it('holds every node when the others stop together in numbers of their own', () => {
      // s0 of the held still silent, five others stopped since: 5 of 7 online nodes.
      const others = ['x0', 'x1', 'x2', 'x3', 'x4'].map((id) => node(id, 1000));
      const nodes = [node('s0', 1000), ...others, node('h0', 100)];
      const verdict = weighCluster('c1', nodes, { state: stalled, revision: 5 }, at, guard);
      expect(verdict.stall).toBeNull();
      expect(verdict.holds('x0')).toBe(true);
    });
  });
});
