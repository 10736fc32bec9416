import fc from 'fast-check';
import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { NodeCommand, NodeReport, displayStatus, isOutOfOrder, nodeDecider } from './node.decider';
import { GpuCard, NodeEvent, evolveNode, initialNodeState } from './node.events';

const spec = deciderSpec(nodeDecider);
const T0 = '2026-12-02T10:00:00.000Z';
const T1 = '2026-12-02T10:00:15.000Z';
const T2 = '2026-12-02T10:05:30.000Z';
const T3 = '2026-12-02T10:06:00.000Z';

const report = (over: Partial<NodeReport> = {}): NodeReport => ({
  clusterId: 'c1',
  hostname: 'gpu-a-01',
  role: 'gpu',
  labels: { 'fleet/mode': 'shared' },
  capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
  gpus: [
    { uuid: 'GPU-1', model: 'L40S', memoryGiB: 48 },
    { uuid: 'GPU-2', model: 'L40S', memoryGiB: 48 },
  ],
  kubeletReady: true,
  unschedulable: false,
  observedAt: T0,
  ...over,
});

const reportNode = (
  r: NodeReport,
  receivedAt = T0,
  newestObservedAt: string | null = null,
): NodeCommand => ({
  type: 'ReportNode',
  data: { nodeId: 'n1', report: r, receivedAt, newestObservedAt },
});

const registered = (r: NodeReport = report()): NodeEvent =>
  spec.given().when(reportNode(r)).thenEvents()[0];
const at = (iso: string) => ({ at: iso });

/** The node went offline (from ready, last seen at T0). */
const wentOffline = (reason: 'heartbeat_timeout' | 'kubelet_not_ready', at: string): NodeEvent => ({
  type: 'NodeWentOffline',
  data: {
    nodeId: 'n1',
    clusterId: 'c1',
    hostname: 'gpu-a-01',
    reason,
    from: 'ready',
    lastSeenAt: T0,
    at,
  },
});
/** n1 back online as `ready`, offline since T2. */
const cameOnline = (at: string): NodeEvent => ({
  type: 'NodeCameOnline',
  data: { nodeId: 'n1', clusterId: 'c1', hostname: 'gpu-a-01', offlineSince: T2, to: 'ready', at },
});
/** Session s1 of u1 placed on card GPU-1. */
const allocatedAt = (at: string): NodeEvent => ({
  type: 'NodeCapacityAllocated',
  data: { nodeId: 'n1', sessionId: 's1', owner: 'u1', gpus: ['GPU-1'], cpu: 0, memoryGiB: 0, at },
});

describe('node', () => {
  describe('when a host reports for the first time', () => {
    it('registers the node with its inventory and mode from the fleet/mode label', () => {
      spec
        .given()
        .when(reportNode(report({ labels: { 'fleet/mode': 'dedicated' } })))
        .then([
          {
            type: 'NodeRegistered',
            data: {
              nodeId: 'n1',
              clusterId: 'c1',
              hostname: 'gpu-a-01',
              role: 'gpu',
              labels: { 'fleet/mode': 'dedicated' },
              mode: 'dedicated',
              capacity: { cpu: 64, memoryGiB: 512, diskGiB: 2000 },
              gpus: report().gpus,
              kubeletReady: true,
              unschedulable: false,
              observedAt: T0,
              registeredAt: T0,
            },
          },
        ]);
    });

    it('defaults to shared mode without the label', () => {
      const e = spec
        .given()
        .when(reportNode(report({ labels: {} })))
        .thenEvents();
      expect(e[0].type === 'NodeRegistered' && e[0].data.mode).toBe('shared');
    });

    it('registers a host that is NotReady as offline for kubelet_not_ready', () => {
      const state = [registered(report({ kubeletReady: false }))].reduce(
        evolveNode,
        initialNodeState(),
      );
      expect(state.status).toBe('offline');
      expect(displayStatus(state)).toBe('offline');
    });
  });

  describe('when a registered node reports again', () => {
    it('appends nothing for an unchanged report (a heartbeat)', () => {
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1 }), T1))
        .thenNothing();
    });

    it('appends nothing for a duplicate of the same report', () => {
      spec.given([registered()]).when(reportNode(report(), T0)).thenNothing();
    });

    it('records a capacity change', () => {
      spec
        .given([registered()])
        .when(
          reportNode(
            report({ observedAt: T1, capacity: { cpu: 64, memoryGiB: 1024, diskGiB: 2000 } }),
            T1,
          ),
        )
        .then([
          {
            type: 'NodeInventoryChanged',
            data: {
              nodeId: 'n1',
              capacity: { cpu: 64, memoryGiB: 1024, diskGiB: 2000 },
              observedAt: T1,
              at: T1,
            },
          },
        ]);
    });

    it('records a role, label and mode change together', () => {
      const events = spec
        .given([registered()])
        .when(
          reportNode(
            report({
              observedAt: T1,
              role: 'cpu',
              gpus: [],
              labels: { 'fleet/mode': 'dedicated' },
            }),
            T1,
          ),
        )
        .thenEvents();
      expect(events.map((e) => e.type)).toEqual(['NodeInventoryChanged', 'NodeGpusChanged']);
      expect(events[0].data).toMatchObject({
        role: 'cpu',
        mode: 'dedicated',
        labels: { 'fleet/mode': 'dedicated' },
      });
      expect(events[1].data).toMatchObject({ added: [], removed: ['GPU-1', 'GPU-2'] });
    });

    it('records cards added and removed, a changed card as both', () => {
      const gpus = [
        { uuid: 'GPU-2', model: 'L40S' as const, memoryGiB: 24 },
        { uuid: 'GPU-3', model: 'L40S' as const, memoryGiB: 48 },
      ];
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, gpus }), T1))
        .then([
          {
            type: 'NodeGpusChanged',
            data: {
              nodeId: 'n1',
              observedAt: T1,
              at: T1,
              removed: ['GPU-1', 'GPU-2'],
              added: gpus,
            },
          },
        ]);
    });

    it('records the unschedulable flag Kubernetes reports', () => {
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, unschedulable: true }), T1))
        .then([
          {
            type: 'NodeUnschedulableObserved',
            data: { nodeId: 'n1', unschedulable: true, observedAt: T1, at: T1 },
          },
        ]);
    });

    it('records a role change alone', () => {
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, role: 'cpu' }), T1))
        .then([
          {
            type: 'NodeInventoryChanged',
            data: { nodeId: 'n1', role: 'cpu', observedAt: T1, at: T1 },
          },
        ]);
    });

    it('records a label change alone when the mode stays', () => {
      const labels = { 'fleet/mode': 'shared', team: 'ml' };
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, labels }), T1))
        .then([
          { type: 'NodeInventoryChanged', data: { nodeId: 'n1', labels, observedAt: T1, at: T1 } },
        ]);
    });

    it('records a label removed and a label whose value changed', () => {
      const withTeam = registered(report({ labels: { 'fleet/mode': 'shared', team: 'ml' } }));
      const types = (labels: Record<string, string>) =>
        spec
          .given([withTeam])
          .when(reportNode(report({ observedAt: T1, labels }), T1))
          .thenEvents()
          .map((e) => e.type);
      expect(types({ 'fleet/mode': 'shared' })).toEqual(['NodeInventoryChanged']);
      expect(types({ 'fleet/mode': 'shared', team: 'cv' })).toEqual(['NodeInventoryChanged']);
      expect(types({ 'fleet/mode': 'shared', team: 'ml' })).toEqual([]);
    });

    it('records a card swapped for another under the same count', () => {
      const gpus = [report().gpus[0], { uuid: 'GPU-3', model: 'L40S' as const, memoryGiB: 48 }];
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, gpus }), T1))
        .then([
          {
            type: 'NodeGpusChanged',
            data: { nodeId: 'n1', observedAt: T1, at: T1, added: [gpus[1]], removed: ['GPU-2'] },
          },
        ]);
    });

    it('records a card whose model changed under the same uuid as removed and added', () => {
      const gpus = [{ uuid: 'GPU-1', model: 'HPC_GPU' as const, memoryGiB: 48 }, report().gpus[1]];
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, gpus }), T1))
        .then([
          {
            type: 'NodeGpusChanged',
            data: { nodeId: 'n1', observedAt: T1, at: T1, added: [gpus[0]], removed: ['GPU-1'] },
          },
        ]);
    });

    it('appends nothing for the same cards listed in another order', () => {
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, gpus: [...report().gpus].reverse() }), T1))
        .thenNothing();
    });

    it('decides a card list as the comparison by uuid does, a uuid listed twice included', () => {
      // The same-list fast path must answer as the comparison by uuid (the plain path) does.
      const card = fc.record({
        uuid: fc.constantFrom('GPU-1', 'GPU-2', 'GPU-3'),
        model: fc.constantFrom('L40S' as const, 'HPC_GPU' as const),
        memoryGiB: fc.constantFrom(24, 48),
      });
      const byUuid = (before: readonly GpuCard[], after: readonly GpuCard[]) => {
        const same = (a: GpuCard, b: GpuCard) => a.model === b.model && a.memoryGiB === b.memoryGiB;
        const was = new Map(before.map((g) => [g.uuid, g]));
        const now = new Map(after.map((g) => [g.uuid, g]));
        const removed = [...was.keys()].filter(
          (u) => !now.has(u) || !same(was.get(u)!, now.get(u)!),
        );
        const added = after.filter((g) => !was.has(g.uuid) || !same(was.get(g.uuid)!, g));
        return removed.length + added.length > 0 ? [{ added, removed }] : [];
      };
      fc.assert(
        fc.property(
          fc.array(card, { maxLength: 4 }),
          // Often the very list held: the fast path's case, a uuid listed twice included.
          fc.option(fc.array(card, { maxLength: 4 }), { freq: 2 }),
          (held, other) => {
            const listed = other ?? held;
            const events = spec
              .given([registered(report({ gpus: held }))])
              .when(reportNode(report({ observedAt: T1, gpus: listed }), T1))
              .thenEvents();
            expect(
              events.map(
                (e) =>
                  e.type === 'NodeGpusChanged' && { added: e.data.added, removed: e.data.removed },
              ),
            ).toEqual(byUuid(held, listed));
          },
        ),
      );
    });

    it('applies a report observed at the same instant as the newest applied or heard', () => {
      const changed = report({ capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } });
      expect(
        spec
          .given([registered()])
          .when(reportNode(changed, T1))
          .thenEvents()
          .map((e) => e.type),
      ).toEqual(['NodeInventoryChanged']);
      expect(
        spec
          .given([registered()])
          .when(reportNode({ ...changed, observedAt: T1 }, T1, T1))
          .thenEvents()
          .map((e) => e.type),
      ).toEqual(['NodeInventoryChanged']);
    });

    it('applies a report without observedAt received after the newest applied or heard', () => {
      const changed = report({ observedAt: null, capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } });
      expect(
        spec
          .given([registered(report({ observedAt: T1 }))])
          .when(reportNode(changed, T2, T1))
          .thenEvents()
          .map((e) => e.type),
      ).toEqual(['NodeInventoryChanged']);
    });

    it('counts a report without observedAt as observed when received: one dated before it changes nothing', () => {
      const atT2 = spec
        .given()
        .when(reportNode(report({ observedAt: null }), T2))
        .thenEvents();
      expect(atT2).toMatchObject([{ type: 'NodeRegistered', data: { observedAt: T2 } }]);
      const earlier = report({ observedAt: T1, capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } });
      spec.given(atT2).when(reportNode(earlier, T3)).thenNothing();
      const later = report({ observedAt: T3, capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } });
      expect(
        spec
          .given(atT2)
          .when(reportNode(later, T3))
          .thenEvents()
          .map((e) => [e.type, e.type === 'NodeInventoryChanged' && e.data.observedAt]),
      ).toEqual([['NodeInventoryChanged', T3]]);
    });

    it('orders reports by the newest heartbeat too', () => {
      const changed = report({ observedAt: T0, capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } });
      spec
        .given([registered(report({ observedAt: null }))])
        .when(reportNode(changed, T2, T1))
        .thenNothing();
    });

    it('ignores a report older than the newest applied (out of order)', () => {
      const newer = reportNode(
        report({ observedAt: T1, capacity: { cpu: 1, memoryGiB: 1, diskGiB: 1 } }),
        T1,
      );
      const applied = spec.given([registered()]).when(newer).thenEvents();
      spec
        .given([registered(), ...applied])
        .when(
          reportNode(
            report({ observedAt: T0, capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } }),
            T2,
          ),
        )
        .thenNothing();
    });

    it('ignores a report older than a newer heartbeat that changed nothing', () => {
      spec
        .given([registered()])
        .when(
          reportNode(
            report({ observedAt: T1, capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } }),
            T2,
            T2,
          ),
        )
        .thenNothing();
    });

    it('orders a report by the later of the newest applied and the newest heartbeat', () => {
      const applied = spec
        .given([registered()])
        .when(
          reportNode(
            report({ observedAt: T2, capacity: { cpu: 1, memoryGiB: 1, diskGiB: 1 } }),
            T2,
          ),
        )
        .thenEvents();
      const between = report({ observedAt: T1, capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } });
      // Older than the applied T2, newer than the heartbeat's T0: out of order.
      spec
        .given([registered(), ...applied])
        .when(reportNode(between, T3, T0))
        .thenNothing();
      // Newer than the applied T0, older than the heartbeat's T2: out of order too.
      spec
        .given([registered()])
        .when(reportNode(between, T3, T2))
        .thenNothing();
      // Newer than both: applied.
      const changed = spec
        .given([registered()])
        .when(reportNode(between, T3, T0))
        .thenEvents();
      expect(changed.map((e) => e.type)).toEqual(['NodeInventoryChanged']);
    });

    it('takes the node offline at once when the kubelet is NotReady', () => {
      spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, kubeletReady: false }), T1))
        .then([
          {
            type: 'NodeWentOffline',
            data: {
              nodeId: 'n1',
              clusterId: 'c1',
              hostname: 'gpu-a-01',
              reason: 'kubelet_not_ready',
              from: 'ready',
              lastSeenAt: T1,
              at: T1,
            },
          },
        ]);
    });

    it('takes a cordoned node offline when NotReady, and it stays cordoned', () => {
      const cordoned: NodeEvent = {
        type: 'NodeCordoned',
        data: { nodeId: 'n1', reason: 'maintenance', at: T0 },
      };
      const events = spec
        .given([registered(), cordoned])
        .when(reportNode(report({ observedAt: T1, kubeletReady: false }), T1))
        .thenEvents();
      const state = [registered(), cordoned, ...events].reduce(evolveNode, initialNodeState());
      expect(state.status).toBe('offline');
      expect(state.status === 'offline' && state.cordon.desired).toBe(true);
      expect(displayStatus(state)).toBe('offline');
    });
  });

  describe('isOutOfOrder (the heartbeat path skips such a report)', () => {
    const state = (observedAt: string | null) =>
      [registered(report({ observedAt }))].reduce(evolveNode, initialNodeState());

    it('is a report observed before the newest applied or heard', () => {
      expect(isOutOfOrder({ observedAt: T0 }, T3, state(T1), null)).toBe(true);
      expect(isOutOfOrder({ observedAt: T0 }, T3, state(null), T1)).toBe(true);
      expect(isOutOfOrder({ observedAt: T1 }, T3, state(T1), T1)).toBe(false);
    });

    it('takes a report without a time as observed at its receive time', () => {
      expect(isOutOfOrder({ observedAt: null }, T2, state(T1), T2)).toBe(false);
      expect(isOutOfOrder({ observedAt: null }, T1, state(T2), null)).toBe(true);
      expect(isOutOfOrder({ observedAt: null }, T1, state(T0), T2)).toBe(true);
    });

    it('compares times written in any offset as the instants they are', () => {
      expect(isOutOfOrder({ observedAt: '2026-12-02T19:00:10+09:00' }, T3, state(T1), null)).toBe(
        true,
      );
      expect(isOutOfOrder({ observedAt: '2026-12-02T19:00:20+09:00' }, T3, state(T1), null)).toBe(
        false,
      );
    });

    it('orders a report of an offline node as one of an online node', () => {
      const offline = [
        registered(report({ observedAt: T1 })),
        wentOffline('heartbeat_timeout', T2),
      ].reduce(evolveNode, initialNodeState());
      expect(isOutOfOrder({ observedAt: T0 }, T3, offline, null)).toBe(true);
    });

    it('orders a report of a node not known yet by the newest heard alone', () => {
      expect(isOutOfOrder({ observedAt: T0 }, T3, initialNodeState(), null)).toBe(false);
      expect(isOutOfOrder({ observedAt: T0 }, T3, initialNodeState(), T1)).toBe(true);
    });
  });

  describe('when the node is offline', () => {
    const offline = wentOffline('heartbeat_timeout', T2);

    it('comes back online with a report older than the newest applied, when only silence took it offline', () => {
      // The operator's clock stepped back: the report's content is stale, but it arrived.
      const T3 = '2026-12-02T10:06:00.000Z';
      spec
        .given([registered(report({ observedAt: T1 })), offline])
        .when(
          reportNode(
            report({ observedAt: T0, capacity: { cpu: 9, memoryGiB: 9, diskGiB: 9 } }),
            T3,
          ),
        )
        .then([cameOnline(T3)]);
      // NotReady as the newest report said: an older Ready report does not bring it back.
      spec
        .given([registered(report({ observedAt: T1, kubeletReady: false }))])
        .when(reportNode(report({ observedAt: T0 }), T3))
        .thenNothing();
    });

    it('comes back online with the next ready report', () => {
      spec
        .given([registered(), offline])
        .when(reportNode(report({ observedAt: T2 }), T2))
        .then([cameOnline(T2)]);
    });

    it('records once that a node offline for silence now reports NotReady, and stays offline', () => {
      const notReady: NodeEvent = {
        type: 'NodeReadinessObserved',
        data: { nodeId: 'n1', kubeletReady: false, observedAt: T2, at: T2 },
      };
      spec
        .given([registered(), offline])
        .when(reportNode(report({ observedAt: T2, kubeletReady: false }), T2))
        .then([notReady]);
      const state = [registered(), offline, notReady].reduce(evolveNode, initialNodeState());
      expect(state).toMatchObject({
        status: 'offline',
        offlineReason: 'kubelet_not_ready',
        offlineAt: T2,
        kubeletReady: false,
      });
      // Still NotReady: nothing new; offline for its kubelet from the start: nothing either.
      const T3 = '2026-12-02T10:06:00.000Z';
      spec
        .given([registered(), offline, notReady])
        .when(reportNode(report({ observedAt: T3, kubeletReady: false }), T3))
        .thenNothing();
      spec
        .given([registered(), wentOffline('kubelet_not_ready', T2)])
        .when(reportNode(report({ observedAt: T2, kubeletReady: false }), T2))
        .thenNothing();
      // A report older than the NotReady one, arriving late, does not bring it back as Ready.
      spec
        .given([registered(report({ observedAt: T1 })), offline, notReady])
        .when(reportNode(report({ observedAt: T1 }), T3))
        .thenNothing();
      // The next Ready report does.
      spec
        .given([registered(), offline, notReady])
        .when(reportNode(report({ observedAt: T3 }), T3))
        .then([cameOnline(T3)]);
    });

    it('comes back as cordoned when it was cordoned', () => {
      const cordoned: NodeEvent = {
        type: 'NodeCordoned',
        data: { nodeId: 'n1', reason: null, at: T0 },
      };
      const back = spec
        .given([registered(), cordoned, offline])
        .when(reportNode(report({ observedAt: T2 }), T2))
        .thenEvents();
      const state = [registered(), cordoned, offline, ...back].reduce(
        evolveNode,
        initialNodeState(),
      );
      expect(displayStatus(state)).toBe('cordoned');
    });

    it('ignores a heartbeat timeout', () => {
      spec
        .given([registered(), offline])
        .when({ type: 'TimeOutNodeHeartbeat', data: { lastSeenAt: T0, staleSec: 300, at: T2 } })
        .thenNothing();
    });
  });

  describe('the status a node leaves or comes back in', () => {
    const cordon: NodeEvent = {
      type: 'NodeCordoned',
      data: { nodeId: 'n1', reason: null, at: T0 },
    };
    const timeout: NodeCommand = {
      type: 'TimeOutNodeHeartbeat',
      data: { lastSeenAt: T0, staleSec: 300, at: T2 },
    };
    const fromOf = (events: NodeEvent[]) => {
      const [e] = spec.given(events).when(timeout).thenEvents();
      return e.type === 'NodeWentOffline' && e.data.from;
    };
    const toOf = (events: NodeEvent[]) => {
      const [e] = spec
        .given([...events, wentOffline('heartbeat_timeout', T2)])
        .when(reportNode(report({ observedAt: T2 }), T2))
        .thenEvents();
      return e.type === 'NodeCameOnline' && e.data.to;
    };

    it('is cordoned over busy over ready', () => {
      expect(fromOf([registered()])).toBe('ready');
      expect(fromOf([registered(), allocatedAt(T0)])).toBe('busy');
      expect(fromOf([registered(), allocatedAt(T0), cordon])).toBe('cordoned');
      expect(toOf([registered()])).toBe('ready');
      expect(toOf([registered(), allocatedAt(T0)])).toBe('busy');
      expect(toOf([registered(), allocatedAt(T0), cordon])).toBe('cordoned');
    });
  });

  describe('heartbeat timeout', () => {
    it('takes a silent node offline with the last report time', () => {
      spec
        .given([registered()])
        .when({ type: 'TimeOutNodeHeartbeat', data: { lastSeenAt: T0, staleSec: 300, at: T2 } })
        .then([
          {
            type: 'NodeWentOffline',
            data: {
              nodeId: 'n1',
              clusterId: 'c1',
              hostname: 'gpu-a-01',
              reason: 'heartbeat_timeout',
              from: 'ready',
              lastSeenAt: T0,
              at: T2,
            },
          },
        ]);
    });

    it('takes the node offline when the timeout fires exactly at its deadline', () => {
      const deadline = '2026-12-02T10:05:00.000Z'; // T0 + 300 s
      expect(
        spec
          .given([registered()])
          .when({
            type: 'TimeOutNodeHeartbeat',
            data: { lastSeenAt: T0, staleSec: 300, at: deadline },
          })
          .thenEvents()
          .map((e) => e.type),
      ).toEqual(['NodeWentOffline']);
    });

    it('ignores a stale timeout when the node reported within the window', () => {
      spec
        .given([registered()])
        .when({ type: 'TimeOutNodeHeartbeat', data: { lastSeenAt: T1, staleSec: 600, at: T2 } })
        .thenNothing();
    });
  });

  describe('cordon', () => {
    it('cordons once; a second cordon appends nothing', () => {
      spec
        .given([registered()])
        .when({ type: 'CordonNode', data: { reason: 'x', ...at(T1) } })
        .then([{ type: 'NodeCordoned', data: { nodeId: 'n1', reason: 'x', at: T1 } }]);
      spec
        .given([
          registered(),
          { type: 'NodeCordoned', data: { nodeId: 'n1', reason: 'x', at: T1 } },
        ])
        .when({ type: 'CordonNode', data: { reason: 'y', ...at(T2) } })
        .thenNothing();
    });

    it('uncordons only a cordoned node', () => {
      spec
        .given([registered()])
        .when({ type: 'UncordonNode', data: at(T1) })
        .thenNothing();
    });

    it('refuses an unknown node', () => {
      spec
        .given()
        .when({ type: 'CordonNode', data: { reason: null, ...at(T1) } })
        .thenRefuses('not_found');
    });
  });

  describe('removal by a pool operation', () => {
    const cordoned: NodeEvent = {
      type: 'NodeCordoned',
      data: { nodeId: 'n1', reason: 'drain', at: T0 },
    };
    const UNTIL = '2026-12-02T10:10:00.000Z';
    const inPool: NodeEvent = {
      type: 'NodeAssignedToPool',
      data: { nodeId: 'n1', poolId: 'pool-a', at: T0 },
    };
    const request = {
      type: 'RequestNodeRemoval',
      data: { operationId: 'op1', poolId: 'pool-a', until: UNTIL, at: T1 },
    } as const;
    const requested: NodeEvent = {
      type: 'NodeRemovalRequested',
      data: { nodeId: 'n1', operationId: 'op1', until: UNTIL, at: T1 },
    };
    const allocated = allocatedAt(T0);

    it('marks a drained node (cordoned, empty) for removal, once per operation', () => {
      spec.given([registered(), inPool, cordoned]).when(request).then([requested]);
      spec.given([registered(), inPool, cordoned, requested]).when(request).thenNothing();
    });

    it('refuses a node an admin moved to another pool (or out of any) since it was chosen: node_in_use', () => {
      const moved: NodeEvent = {
        type: 'NodeAssignedToPool',
        data: { nodeId: 'n1', poolId: 'pool-b', at: T0 },
      };
      spec
        .given([registered(), inPool, cordoned, moved])
        .when(request)
        .thenRefuses('node_in_use', { nodeId: 'n1', sessions: 0 });
      spec.given([registered(), cordoned]).when(request).thenRefuses('node_in_use');
    });

    it('refuses a node an admin uncordoned since its drain, or one holding sessions: node_in_use', () => {
      spec
        .given([
          registered(),
          inPool,
          cordoned,
          { type: 'NodeUncordoned', data: { nodeId: 'n1', at: T0 } },
        ])
        .when(request)
        .thenRefuses('node_in_use');
      spec
        .given([registered(), inPool, cordoned, allocated])
        .when(request)
        .thenRefuses('node_in_use', { nodeId: 'n1', sessions: 1 });
    });

    it('says in the refusal, which the operation shows as its error, what changed since the drain', () => {
      // API-ADDITIONS.md: the operation fails with `node_in_use: node <hostname> …: not removed`.
      const uncordoned: NodeEvent = { type: 'NodeUncordoned', data: { nodeId: 'n1', at: T0 } };
      const message = (events: NodeEvent[]) => {
        try {
          nodeDecider.decide(request, events.reduce(evolveNode, initialNodeState()));
        } catch (error) {
          return (error as Error).message;
        }
        throw new Error('not refused');
      };
      expect(message([registered(), inPool, cordoned, uncordoned])).toBe(
        'node gpu-a-01 was uncordoned since its drain: not removed',
      );
      expect(message([registered(), inPool, cordoned, allocated])).toBe(
        'node gpu-a-01 holds 1 session(s) since its drain: not removed',
      );
      expect(message([registered(), inPool, cordoned, allocated, uncordoned])).toBe(
        'node gpu-a-01 was uncordoned and holds 1 session(s) since its drain: not removed',
      );
    });

    it('marks an offline node whatever its cordon (nothing runs there), and no node that is gone', () => {
      const offline = wentOffline('kubelet_not_ready', T0);
      spec.given([registered(), inPool, offline]).when(request).then([requested]);
      const deleted: NodeEvent = {
        type: 'NodeDeleted',
        data: { nodeId: 'n1', clusterId: 'c1', hostname: 'gpu-a-01', at: T0 },
      };
      spec.given([registered(), inPool, offline, deleted]).when(request).thenNothing();
    });

    it('refuses an uncordon while the removal holds (node_being_removed), and takes it after the deadline', () => {
      spec
        .given([registered(), inPool, cordoned, requested])
        .when({ type: 'UncordonNode', data: at(T2) })
        .thenRefuses('node_being_removed', { operationId: 'op1' });
      spec
        .given([registered(), inPool, cordoned, requested])
        .when({ type: 'UncordonNode', data: at(UNTIL) })
        .then([{ type: 'NodeUncordoned', data: { nodeId: 'n1', at: UNTIL } }]);
    });

    it('refuses a move to another pool while the removal holds (node_being_removed), and takes it after the deadline', () => {
      const pooled: NodeEvent = {
        type: 'NodeAssignedToPool',
        data: { nodeId: 'n1', poolId: 'pool-a', at: T0 },
      };
      const move = (when: string) =>
        ({ type: 'AssignNodeToPool', data: { poolId: 'pool-b', at: when } }) as const;
      spec
        .given([registered(), inPool, pooled, cordoned, requested])
        .when(move(T2))
        .thenRefuses('node_being_removed');
      // Asking for the pool it is in changes nothing: no refusal.
      spec
        .given([registered(), inPool, pooled, cordoned, requested])
        .when({ type: 'AssignNodeToPool', data: { poolId: 'pool-a', at: T2 } })
        .thenNothing();
      spec
        .given([registered(), inPool, pooled, cordoned, requested])
        .when(move(UNTIL))
        .then([
          { type: 'NodeAssignedToPool', data: { nodeId: 'n1', poolId: 'pool-b', at: UNTIL } },
        ]);
    });
  });

  describe('cordon sync deadline', () => {
    const cordoned: NodeEvent = {
      type: 'NodeCordoned',
      data: { nodeId: 'n1', reason: null, at: T0 },
    };
    const uncordoned: NodeEvent = { type: 'NodeUncordoned', data: { nodeId: 'n1', at: T1 } };
    const observed = (unschedulable: boolean): NodeEvent => ({
      type: 'NodeUnschedulableObserved',
      data: { nodeId: 'n1', unschedulable, observedAt: T1, at: T1 },
    });
    const flag = (desired: boolean): NodeCommand => ({
      type: 'FlagCordonSyncOverdue',
      data: { desired, at: T2 },
    });
    const overdue = (
      desired: boolean,
      since: string,
      seen: boolean | null = !desired,
    ): NodeEvent => ({
      type: 'NodeCordonSyncWentOverdue',
      data: {
        nodeId: 'n1',
        clusterId: 'c1',
        hostname: 'gpu-a-01',
        desired,
        observed: seen,
        since,
        at: T2,
      },
    });

    it('flags a cordon the operator has not reported back', () => {
      spec
        .given([registered(), cordoned])
        .when(flag(true))
        .then([overdue(true, T0)]);
    });

    it('flags a cordon not reported back while the node is offline', () => {
      spec
        .given([registered(), cordoned, wentOffline('heartbeat_timeout', T1)])
        .when(flag(true))
        .then([overdue(true, T0)]);
    });

    it('flags it only once per change', () => {
      spec
        .given([registered(), cordoned, overdue(true, T0)])
        .when(flag(true))
        .thenNothing();
    });

    it('flags nothing once the cordon is observed', () => {
      spec
        .given([registered(), cordoned, observed(true)])
        .when(flag(true))
        .thenNothing();
    });

    it('ignores a deadline for a desired state that changed since', () => {
      spec.given([registered(), cordoned, uncordoned]).when(flag(true)).thenNothing();
    });

    it('ignores the deadline of a cordon undone since, though the uncordon is not observed yet', () => {
      spec
        .given([registered(), cordoned, observed(true), uncordoned])
        .when(flag(true))
        .thenNothing();
    });

    it('flags an unobserved uncordon, and each new change again', () => {
      spec
        .given([registered(), cordoned, observed(true), uncordoned])
        .when(flag(false))
        .then([overdue(false, T1, true)]);
      spec
        .given([registered(), cordoned, overdue(true, T0), uncordoned])
        .when(flag(false))
        .thenNothing(); // never observed as cordoned, so uncordoned matches what Kubernetes says
      spec
        .given([
          registered(),
          cordoned,
          overdue(true, T0),
          uncordoned,
          { type: 'NodeCordoned', data: { nodeId: 'n1', reason: null, at: T2 } },
        ])
        .when(flag(true))
        .then([overdue(true, T2)]);
    });

    it('flags nothing for a node that was never cordoned or uncordoned', () => {
      spec
        .given([registered(report({ unschedulable: true }))])
        .when(flag(false))
        .thenNothing();
    });

    it('flags a cordon when the operator never reports unschedulable at all', () => {
      spec
        .given([registered(report({ unschedulable: null })), cordoned])
        .when(flag(true))
        .then([overdue(true, T0, null)]);
    });

    it('ignores a deadline for an unknown or deleted node', () => {
      spec.given().when(flag(true)).thenNothing();
    });
  });

  describe('deletion', () => {
    const offline = wentOffline('heartbeat_timeout', T2);
    const allocated = allocatedAt(T1);

    it('refuses an online node with node_not_offline', () => {
      spec
        .given([registered()])
        .when({ type: 'DeleteNode', data: at(T2) })
        .thenRefuses('node_not_offline');
    });

    it('refuses an offline node that still holds a session with node_busy', () => {
      spec
        .given([registered(), allocated, offline])
        .when({ type: 'DeleteNode', data: at(T2) })
        .thenRefuses('node_busy', { sessions: ['s1'] });
    });

    it('deletes an offline idle node', () => {
      spec
        .given([registered(), offline])
        .when({ type: 'DeleteNode', data: at(T2) })
        .then([
          {
            type: 'NodeDeleted',
            data: { nodeId: 'n1', clusterId: 'c1', hostname: 'gpu-a-01', at: T2 },
          },
        ]);
    });

    it('registers the host again when a deleted node reports', () => {
      const deleted: NodeEvent = {
        type: 'NodeDeleted',
        data: { nodeId: 'n1', clusterId: 'c1', hostname: 'gpu-a-01', at: T2 },
      };
      const events = spec
        .given([registered(), offline, deleted])
        .when(reportNode(report({ observedAt: T2 }), T2))
        .thenEvents();
      expect(events.map((e) => e.type)).toEqual(['NodeRegistered']);
    });

    it('refuses to delete a deleted node with not_found', () => {
      const deleted: NodeEvent = {
        type: 'NodeDeleted',
        data: { nodeId: 'n1', clusterId: 'c1', hostname: 'gpu-a-01', at: T2 },
      };
      spec
        .given([registered(), offline, deleted])
        .when({ type: 'DeleteNode', data: at(T2) })
        .thenRefuses('not_found');
    });
  });

  describe('allocation', () => {
    const allocate = (sessionId: string, gpuCount: number): NodeCommand => ({
      type: 'AllocateOnNode',
      data: { sessionId, owner: 'u1', demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount }, at: T1 },
    });

    it('takes free cards of the model, lowest uuid first', () => {
      spec
        .given([registered()])
        .when(allocate('s1', 1))
        .then([
          {
            type: 'NodeCapacityAllocated',
            data: {
              nodeId: 'n1',
              sessionId: 's1',
              owner: 'u1',
              gpus: ['GPU-1'],
              cpu: 0,
              memoryGiB: 0,
              at: T1,
            },
          },
        ]);
    });

    it('never hands a held card to a second session', () => {
      const first = spec.given([registered()]).when(allocate('s1', 2)).thenEvents();
      spec
        .given([registered(), ...first])
        .when(allocate('s2', 1))
        .thenRefuses('insufficient_capacity', { free: 0 });
    });

    it('takes only cards of the model asked for', () => {
      const mixed = registered(
        report({
          gpus: [
            { uuid: 'GPU-1', model: 'L40S', memoryGiB: 48 },
            { uuid: 'GPU-2', model: 'HPC_GPU', memoryGiB: 80 },
            { uuid: 'GPU-3', model: 'HPC_GPU', memoryGiB: 80 },
          ],
        }),
      );
      const hpc = (gpuCount: number): NodeCommand => ({
        type: 'AllocateOnNode',
        data: {
          sessionId: 's1',
          owner: 'u1',
          demand: { kind: 'gpu', gpuModel: 'HPC_GPU', gpuCount },
          at: T1,
        },
      });
      const [event] = spec.given([mixed]).when(hpc(2)).thenEvents();
      expect(event.type === 'NodeCapacityAllocated' && event.data.gpus).toEqual(['GPU-2', 'GPU-3']);
      spec.given([mixed]).when(hpc(3)).thenRefuses('insufficient_capacity', { free: 2 });
    });

    it('takes the lowest free uuids whatever the order the cards were reported in', () => {
      const gpus = ['GPU-3', 'GPU-1', 'GPU-2'].map((uuid) => ({
        uuid,
        model: 'L40S' as const,
        memoryGiB: 48,
      }));
      const [event] = spec
        .given([registered(report({ gpus }))])
        .when(allocate('s1', 2))
        .thenEvents();
      expect(event.type === 'NodeCapacityAllocated' && event.data.gpus).toEqual(['GPU-1', 'GPU-2']);
    });

    it('refuses an offline node', () => {
      spec
        .given([registered(), wentOffline('heartbeat_timeout', T1)])
        .when(allocate('s1', 1))
        .thenRefuses('node_unavailable');
    });

    it('refuses a node being drained, even once an admin uncordoned it', () => {
      spec
        .given([
          registered(),
          { type: 'NodeCordoned', data: { nodeId: 'n1', reason: 'drain d1', at: T0 } },
          {
            type: 'NodeDrainStarted',
            data: { nodeId: 'n1', drainId: 'd1', mode: 'relocate', at: T0 },
          },
          { type: 'NodeUncordoned', data: { nodeId: 'n1', at: T0 } },
        ])
        .when(allocate('s1', 1))
        .thenRefuses('node_unavailable');
    });

    describe('of CPU sessions on a CPU node (16 vCPU, 64 GiB)', () => {
      const cpuNode = registered(
        report({ role: 'cpu', gpus: [], capacity: { cpu: 16, memoryGiB: 64, diskGiB: 100 } }),
      );
      const take = (sessionId: string, cpu: number, memoryGiB: number): NodeCommand => ({
        type: 'AllocateOnNode',
        data: { sessionId, owner: 'u1', demand: { kind: 'cpu', cpu, memoryGiB }, at: T1 },
      });
      const held = (sessionId: string, cpu: number, memoryGiB: number): NodeEvent => ({
        type: 'NodeCapacityAllocated',
        data: { nodeId: 'n1', sessionId, owner: 'u1', gpus: [], cpu, memoryGiB, at: T1 },
      });

      it('holds the vCPUs and memory asked for, and no card', () => {
        spec
          .given([cpuNode])
          .when(take('s1', 8, 32))
          .then([held('s1', 8, 32)]);
      });

      it('fills the node exactly, then refuses what no longer fits', () => {
        spec
          .given([cpuNode, held('s1', 8, 32)])
          .when(take('s2', 8, 32))
          .then([held('s2', 8, 32)]);
        spec
          .given([cpuNode, held('s1', 8, 32), held('s2', 8, 32)])
          .when(take('s3', 1, 0))
          .thenRefuses('insufficient_capacity');
      });

      it('refuses a session when memory runs out, though vCPUs remain', () => {
        spec
          .given([cpuNode, held('s1', 4, 60)])
          .when(take('s2', 4, 8))
          .thenRefuses('insufficient_capacity');
      });

      it('refuses a GPU session', () => {
        spec.given([cpuNode]).when(allocate('s1', 1)).thenRefuses('node_unavailable');
      });
    });

    it('is a no-op for a session already placed here', () => {
      const first = spec.given([registered()]).when(allocate('s1', 1)).thenEvents();
      spec
        .given([registered(), ...first])
        .when(allocate('s1', 1))
        .thenNothing();
    });

    it('refuses a cordoned node', () => {
      spec
        .given([
          registered(),
          { type: 'NodeCordoned', data: { nodeId: 'n1', reason: null, at: T0 } },
        ])
        .when(allocate('s1', 1))
        .thenRefuses('node_unavailable');
    });

    it('lets a dedicated node hold one session at a time', () => {
      const r = registered(report({ labels: { 'fleet/mode': 'dedicated' } }));
      const first = spec.given([r]).when(allocate('s1', 1)).thenEvents();
      spec
        .given([r, ...first])
        .when(allocate('s2', 1))
        .thenRefuses('node_unavailable');
    });

    it('refuses a CPU session on a GPU node and master nodes entirely', () => {
      spec
        .given([registered()])
        .when({
          type: 'AllocateOnNode',
          data: {
            sessionId: 's',
            owner: 'u',
            demand: { kind: 'cpu', cpu: 1, memoryGiB: 1 },
            at: T1,
          },
        })
        .thenRefuses('node_unavailable');
      spec
        .given([registered(report({ role: 'master', gpus: [] }))])
        .when(allocate('s', 1))
        .thenRefuses('node_unavailable');
    });

    it('shows busy while it holds a session and ready after release', () => {
      const first = spec.given([registered()]).when(allocate('s1', 1)).thenEvents();
      const busy = [registered(), ...first].reduce(evolveNode, initialNodeState());
      expect(displayStatus(busy)).toBe('busy');
      const released = spec
        .given([registered(), ...first])
        .when({ type: 'ReleaseOnNode', data: { sessionId: 's1', at: T2 } })
        .thenEvents();
      expect(
        displayStatus([registered(), ...first, ...released].reduce(evolveNode, initialNodeState())),
      ).toBe('ready');
    });
  });

  describe('release', () => {
    const release = { type: 'ReleaseOnNode', data: { sessionId: 's1', at: T2 } } as const;

    it('releases what a session holds', () => {
      spec
        .given([registered(), allocatedAt(T1)])
        .when(release)
        .then([{ type: 'NodeCapacityReleased', data: { nodeId: 'n1', sessionId: 's1', at: T2 } }]);
    });

    it('releases on a node gone offline', () => {
      spec
        .given([registered(), allocatedAt(T1), wentOffline('heartbeat_timeout', T2)])
        .when(release)
        .then([{ type: 'NodeCapacityReleased', data: { nodeId: 'n1', sessionId: 's1', at: T2 } }]);
    });

    it('releases nothing for a session the node does not hold, or on a node that is gone', () => {
      spec
        .given([registered(), allocatedAt(T1)])
        .when({ type: 'ReleaseOnNode', data: { sessionId: 's2', at: T2 } })
        .thenNothing();
      spec.given().when(release).thenNothing();
    });
  });

  describe('drain marks', () => {
    const start = (drainId: string): NodeCommand => ({
      type: 'StartNodeDrain',
      data: { drainId, mode: 'relocate', at: T1 },
    });

    it('cordons first, then marks the node draining', () => {
      spec
        .given([registered()])
        .when(start('d1'))
        .then([
          { type: 'NodeCordoned', data: { nodeId: 'n1', reason: 'drain d1', at: T1 } },
          {
            type: 'NodeDrainStarted',
            data: { nodeId: 'n1', drainId: 'd1', mode: 'relocate', at: T1 },
          },
        ]);
    });

    it('does not cordon twice', () => {
      const cordoned: NodeEvent = {
        type: 'NodeCordoned',
        data: { nodeId: 'n1', reason: null, at: T0 },
      };
      expect(
        spec
          .given([registered(), cordoned])
          .when(start('d1'))
          .thenEvents()
          .map((e) => e.type),
      ).toEqual(['NodeDrainStarted']);
    });

    it('drains for a pool operation only a node still in its pool: node_in_use otherwise', () => {
      const inPool = (poolId: string): NodeEvent => ({
        type: 'NodeAssignedToPool',
        data: { nodeId: 'n1', poolId, at: T0 },
      });
      const forPool = {
        type: 'StartNodeDrain',
        data: { drainId: 'd1', mode: 'relocate', at: T1, inPool: 'pool-a' },
      } as const;
      expect(
        spec
          .given([registered(), inPool('pool-a')])
          .when(forPool)
          .thenEvents()
          .map((e) => e.type),
      ).toEqual(['NodeCordoned', 'NodeDrainStarted']);
      spec
        .given([registered(), inPool('pool-b')])
        .when(forPool)
        .thenRefuses('node_in_use', { nodeId: 'n1', sessions: 0 });
      spec.given([registered()]).when(forPool).thenRefuses('node_in_use');
    });

    it('is a no-op for the same drain and refuses another', () => {
      const events = spec.given([registered()]).when(start('d1')).thenEvents();
      spec
        .given([registered(), ...events])
        .when(start('d1'))
        .thenNothing();
      spec
        .given([registered(), ...events])
        .when(start('d2'))
        .thenRefuses('invalid_transition', { from: 'draining' });
    });

    it('refuses to drain an offline node', () => {
      const offline = spec
        .given([registered()])
        .when(reportNode(report({ observedAt: T1, kubeletReady: false }), T1))
        .thenEvents();
      spec
        .given([registered(), ...offline])
        .when(start('d1'))
        .thenRefuses('invalid_transition', { from: 'offline' });
    });

    it('ends its drain on a node gone offline meanwhile, and nothing on a node that is gone', () => {
      const events = spec.given([registered()]).when(start('d1')).thenEvents();
      const end = { type: 'EndNodeDrain', data: { drainId: 'd1', at: T2 } } as const;
      spec
        .given([registered(), ...events, wentOffline('heartbeat_timeout', T2)])
        .when(end)
        .then([{ type: 'NodeDrainEnded', data: { nodeId: 'n1', drainId: 'd1', at: T2 } }]);
      spec.given().when(end).thenNothing();
    });

    it('ends only the drain it was started for', () => {
      const events = spec.given([registered()]).when(start('d1')).thenEvents();
      spec
        .given([registered(), ...events])
        .when({ type: 'EndNodeDrain', data: { drainId: 'd2', at: T2 } })
        .thenNothing();
      spec
        .given([registered(), ...events])
        .when({ type: 'EndNodeDrain', data: { drainId: 'd1', at: T2 } })
        .then([{ type: 'NodeDrainEnded', data: { nodeId: 'n1', drainId: 'd1', at: T2 } }]);
    });
  });
});
