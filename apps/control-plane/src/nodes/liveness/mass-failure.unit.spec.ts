import { GuardNode, isMassFailure, weighSilence } from './mass-failure';

describe('the mass-failure guard', () => {
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
