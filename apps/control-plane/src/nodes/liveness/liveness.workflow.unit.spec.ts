import { uuidFrom } from '../../../../../libs/kernel/src';
import { workflowSpec } from '../../../../../libs/kernel/testing/workflow-spec';
import { ClusterLivenessState } from '../../clusters/cluster-liveness.decider';
import {
  LivenessInput,
  LivenessOutput,
  SilenceFacts,
  TimeoutCause,
  WeighedNode,
  livenessWorkflow,
  weighCluster,
} from './liveness.workflow';

const STALE_SEC = 300;
const STALE_MS = STALE_SEC * 1000;
const workflow = livenessWorkflow({ staleSec: STALE_SEC });
const spec = workflowSpec(workflow);

const ms = (iso: string) => Date.parse(iso);
const T0 = '2026-12-02T10:00:00.000Z';
const iso = (at: number) => new Date(at).toISOString();
const cause = { eventId: 'evt-confirm', correlationId: 'corr-admin' };

const fired = (
  over: Partial<SilenceFacts & { held: boolean; cause: TimeoutCause | null }> = {},
): LivenessInput => ({
  type: 'OfflineTimeoutFired',
  data: {
    nodeId: 'n1',
    node: { clusterId: 'c1', changedAt: T0, removal: null },
    heartbeatSeenAt: ms(T0),
    clusterResumedAt: null,
    heartbeatsRestoredAt: 0,
    at: ms(T0) + STALE_MS,
    held: false,
    cause: null,
    ...over,
  },
});
const schedule = (runAt: number): LivenessOutput => ({
  type: 'ScheduleOfflineTimeout',
  data: { nodeId: 'n1', runAt },
});
const timeOut = (lastSeenAt: number, at: number, by: TimeoutCause | null = null) => ({
  type: 'TimeOutNodeHeartbeat' as const,
  data: {
    nodeId: 'n1',
    commandId: uuidFrom('heartbeat-timeout', 'n1', String(lastSeenAt)),
    lastSeenAt: iso(lastSeenAt),
    staleSec: STALE_SEC,
    at: iso(at),
    cause: by,
  },
});
const beatRead = (seenAt: number | null, at: number): LivenessInput => ({
  type: 'HeartbeatRead',
  data: { nodeId: 'n1', seenAt, at },
});
const wentOffline = (reason: 'heartbeat_timeout' | 'kubelet_not_ready'): LivenessInput => ({
  type: 'NodeWentOffline',
  data: {
    nodeId: 'n1',
    clusterId: 'c1',
    hostname: 'h1',
    reason,
    from: 'ready',
    lastSeenAt: T0,
    at: T0,
  },
});

describe('the liveness workflow', () => {
  describe('when a node starts being online', () => {
    const registered = (kubeletReady: boolean): LivenessInput => ({
      type: 'NodeRegistered',
      data: {
        nodeId: 'n1',
        clusterId: 'c1',
        hostname: 'h1',
        role: 'gpu',
        mode: 'shared',
        labels: {},
        capacity: { cpu: 8, memoryGiB: 64, diskGiB: 100 },
        gpus: [],
        kubeletReady,
        unschedulable: false,
        observedAt: T0,
        registeredAt: T0,
      },
    });

    it('arms its timer a window after it registered ready', () => {
      spec
        .given()
        .when(registered(true))
        .then([schedule(ms(T0) + STALE_MS)]);
    });

    it('arms nothing for a node registered NotReady (it is offline)', () => {
      spec.given().when(registered(false)).thenNothing();
    });

    it('arms its timer a window after it came back online', () => {
      spec
        .given()
        .when({
          type: 'NodeCameOnline',
          data: {
            nodeId: 'n1',
            clusterId: 'c1',
            hostname: 'h1',
            offlineSince: T0,
            to: 'ready',
            at: T0,
          },
        })
        .then([schedule(ms(T0) + STALE_MS)]);
    });
  });

  describe('when a node stops being online', () => {
    it('cancels its timer when it went offline by a NotReady report', () => {
      spec
        .given()
        .when(wentOffline('kubelet_not_ready'))
        .then([{ type: 'CancelOfflineTimeout', data: { nodeId: 'n1' } }]);
    });

    it('leaves the timer that timed it out to end by itself', () => {
      spec.given().when(wentOffline('heartbeat_timeout')).thenNothing();
    });

    it('cancels its timer when it is deleted', () => {
      spec
        .given()
        .when({
          type: 'NodeDeleted',
          data: { nodeId: 'n1', clusterId: 'c1', hostname: 'h1', at: T0 },
        })
        .then([{ type: 'CancelOfflineTimeout', data: { nodeId: 'n1' } }]);
    });
  });

  describe('when its timer fires', () => {
    const at = ms(T0) + STALE_MS;

    it('re-arms a window after a report that came since', () => {
      const seenAt = ms(T0) + 60_000;
      spec
        .given()
        .when(fired({ heartbeatSeenAt: seenAt }))
        .then([schedule(seenAt + STALE_MS)]);
    });

    it('takes a node silent for a full window offline at its last report', () => {
      spec
        .given()
        .when(fired())
        .then([timeOut(ms(T0), at)]);
    });

    it('times a node out at its deadline exactly', () => {
      spec
        .given()
        .when(fired({ at: ms(T0) + STALE_MS - 1 }))
        .then([schedule(at)]);
      spec
        .given()
        .when(fired({ at }))
        .then([timeOut(ms(T0), at)]);
    });

    it('does nothing for a node no longer online', () => {
      spec
        .given()
        .when(fired({ node: null }))
        .thenNothing();
    });

    it('holds a due node whose cluster the guard holds, for another window', () => {
      spec
        .given()
        .when(fired({ held: true }))
        .then([schedule(at + STALE_MS)]);
    });

    it('never holds a node a pool operation is removing', () => {
      const removal = { until: iso(at + 60_000) };
      spec
        .given()
        .when(fired({ held: true, node: { clusterId: 'c1', changedAt: T0, removal } }))
        .then([timeOut(ms(T0), at)]);
    });

    it('holds a node whose removal deadline has passed like any other', () => {
      const removal = { until: iso(at) };
      spec
        .given()
        .when(fired({ held: true, node: { clusterId: 'c1', changedAt: T0, removal } }))
        .then([schedule(at + STALE_MS)]);
    });

    it('joins the offline to the request that fired it at once', () => {
      spec
        .given()
        .when(fired({ cause }))
        .then([timeOut(ms(T0), at, cause)]);
    });

    it('times silence from the end of its cluster stall, but records the real last report', () => {
      const resumedAt = ms(T0) + 120_000;
      spec
        .given()
        .when(fired({ clusterResumedAt: iso(resumedAt) }))
        .then([schedule(resumedAt + STALE_MS)]);
      spec
        .given()
        .when(fired({ clusterResumedAt: iso(resumedAt), at: resumedAt + STALE_MS }))
        .then([timeOut(ms(T0), resumedAt + STALE_MS)]);
    });

    it('times silence from the heartbeat store’s return after an outage', () => {
      const restoredAt = ms(T0) + 30_000;
      spec
        .given()
        .when(fired({ heartbeatsRestoredAt: restoredAt }))
        .then([schedule(restoredAt + STALE_MS)]);
    });

    describe('and the heartbeat store has lost its heartbeat', () => {
      const changedAt = T0;
      const noticedAt = ms(T0) + 3 * STALE_MS;

      it('gives it a full window from when the loss was noticed', () => {
        spec
          .given()
          .when(fired({ heartbeatSeenAt: null, at: noticedAt }))
          .then([schedule(noticedAt + STALE_MS)]);
      });

      it('then takes it offline at its last change, billing no unproven time', () => {
        const later = noticedAt + STALE_MS;
        spec
          .given([fired({ heartbeatSeenAt: null, at: noticedAt })])
          .when(fired({ heartbeatSeenAt: null, at: later }))
          .then([timeOut(ms(changedAt), later)]);
      });

      it('counts the window from the first time the loss was noticed, by the guard too', () => {
        const later = noticedAt + STALE_MS;
        spec
          .given([beatRead(null, noticedAt), beatRead(null, noticedAt + 1000)])
          .when(fired({ heartbeatSeenAt: null, at: later }))
          .then([timeOut(ms(changedAt), later)]);
      });

      it('forgets the loss once a heartbeat is read again', () => {
        const later = noticedAt + STALE_MS;
        spec
          .given([beatRead(null, noticedAt), beatRead(ms(T0), noticedAt + 1000)])
          .when(fired({ heartbeatSeenAt: null, at: later }))
          .then([schedule(later + STALE_MS)]);
      });

      it('forgets the loss when the node goes offline', () => {
        const later = noticedAt + STALE_MS;
        spec
          .given([beatRead(null, noticedAt), wentOffline('kubelet_not_ready')])
          .when(fired({ heartbeatSeenAt: null, at: later }))
          .then([schedule(later + STALE_MS)]);
      });

      it('never times it from before its last change', () => {
        const changed = noticedAt + 60_000;
        spec
          .given([beatRead(null, noticedAt)])
          .when(
            fired({
              heartbeatSeenAt: null,
              node: { clusterId: 'c1', changedAt: iso(changed), removal: null },
              at: noticedAt + STALE_MS,
            }),
          )
          .then([schedule(changed + STALE_MS)]);
      });
    });
  });

  it('checks every node of a cluster whose outage an admin confirmed at once', () => {
    spec
      .given()
      .when({ type: 'NodeOutageConfirmed', data: { nodeId: 'n1', cause, at: ms(T0) } })
      .then([{ type: 'CheckSilenceNow', data: { nodeId: 'n1', runAt: ms(T0), cause } }]);
  });

  describe('when the repair finds a node without a timer', () => {
    it('re-arms it now while the node is online', () => {
      spec
        .given()
        .when({ type: 'OfflineTimeoutLost', data: { nodeId: 'n1', online: true, at: ms(T0) } })
        .then([schedule(ms(T0))]);
    });

    it('arms nothing for a node gone offline meanwhile', () => {
      spec
        .given()
        .when({ type: 'OfflineTimeoutLost', data: { nodeId: 'n1', online: false, at: ms(T0) } })
        .thenNothing();
    });
  });
});

describe('the mass-failure guard', () => {
  const guard = { staleMs: 2000, massFailureRatio: 0.55, massFailureMinNodes: 3 };
  const at = ms(T0) + 10_000;
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
      since: T0,
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
