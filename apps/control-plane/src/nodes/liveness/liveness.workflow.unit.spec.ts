import { uuidFrom } from '@fleet/kernel';
import { workflowSpec } from '../../../../../libs/kernel/testing/workflow-spec';
import {
  LivenessInput,
  LivenessOutput,
  SilenceFacts,
  TimeoutCause,
  livenessWorkflow,
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
