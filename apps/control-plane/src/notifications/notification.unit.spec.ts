import { StoredEvent, asLogPosition } from '@fleet/eventstore/port';
import { NOTIFYING_EVENT_TYPES, toNotification } from './notification';

const stored = (type: string, data: unknown, eventId = 'evt-1'): StoredEvent => ({
  eventId,
  type,
  data,
  streamId: 'node-n1',
  revision: 3,
  position: asLogPosition(42),
  metadata: {
    correlationId: 'c',
    causationId: 'c',
    actor: { sub: 'system', roles: ['system'] },
    occurredAt: '2026-12-02T10:05:00.000Z',
    schemaVersion: 1,
  },
});

describe('toNotification', () => {
  describe('when a node goes offline', () => {
    it('raises node_status_changed from the status it left to offline, with the reason', () => {
      const event = stored('NodeWentOffline.v1', {
        nodeId: 'n1',
        clusterId: 'c1',
        hostname: 'gpu-a-01',
        reason: 'heartbeat_timeout',
        from: 'busy',
        lastSeenAt: '2026-12-02T10:00:00.000Z',
        at: '2026-12-02T10:05:00.000Z',
      });
      expect(toNotification(event)).toEqual({
        id: 'evt-1',
        type: 'node_status_changed',
        clusterId: 'c1',
        nodeId: 'n1',
        hostname: 'gpu-a-01',
        from: 'busy',
        to: 'offline',
        reason: 'heartbeat_timeout',
        at: '2026-12-02T10:05:00.000Z',
      });
    });
  });

  describe('when a node comes back online', () => {
    it('raises node_status_changed from offline to the status it reached, without a reason', () => {
      const event = stored(
        'NodeCameOnline.v1',
        {
          nodeId: 'n1',
          clusterId: 'c1',
          hostname: 'gpu-a-01',
          offlineSince: '2026-12-02T10:05:00.000Z',
          to: 'cordoned',
          at: '2026-12-02T11:00:00.000Z',
        },
        'evt-2',
      );
      expect(toNotification(event)).toEqual({
        id: 'evt-2',
        type: 'node_status_changed',
        clusterId: 'c1',
        nodeId: 'n1',
        hostname: 'gpu-a-01',
        from: 'offline',
        to: 'cordoned',
        reason: null,
        at: '2026-12-02T11:00:00.000Z',
      });
    });
  });

  describe("when a cluster's reports stall", () => {
    it('raises cluster_reports_stalled naming how many online nodes stopped reporting', () => {
      const event = stored('ClusterReportsStalled.v1', {
        clusterId: 'c1',
        staleNodes: [
          { nodeId: 'n1', hostname: 'a' },
          { nodeId: 'n2', hostname: 'b' },
          { nodeId: 'n3', hostname: 'c' },
        ],
        onlineNodes: 4,
        lastSeenAt: '2026-12-02T10:00:00.000Z',
        at: '2026-12-02T10:05:00.000Z',
      });
      expect(toNotification(event)).toEqual({
        id: 'evt-1',
        type: 'cluster_reports_stalled',
        clusterId: 'c1',
        nodeId: null,
        hostname: null,
        from: null,
        to: null,
        reason: '3 of 4 online nodes stopped reporting',
        at: '2026-12-02T10:05:00.000Z',
      });
    });
  });

  describe('when a cordon is not observed in time', () => {
    const overdue = {
      nodeId: 'n1',
      clusterId: 'c1',
      hostname: 'gpu-a-01',
      desired: true,
      observed: false,
      since: '2026-12-02T10:00:00.000Z',
      at: '2026-12-02T10:00:15.004Z',
    };
    const notification = {
      id: 'evt-1',
      type: 'cordon_sync_overdue',
      clusterId: 'c1',
      nodeId: 'n1',
      hostname: 'gpu-a-01',
      from: 'unschedulable=false',
      to: 'unschedulable=true',
      reason: 'cordon desired=true not observed within 15 s',
      at: '2026-12-02T10:00:15.004Z',
    };

    it('raises cordon_sync_overdue with the desired and observed state', () => {
      const event = stored('NodeCordonSyncWentOverdue.v1', overdue);
      expect(toNotification(event)).toEqual(notification);
    });

    it('raises the same for an event stored under its old name', () => {
      const event = stored('NodeCordonSyncOverdue.v1', overdue);
      expect(toNotification(event)).toEqual(notification);
    });
  });

  it('keeps `at` in one ISO form, so that string order is time order', () => {
    const event = stored('NodeCameOnline.v1', {
      nodeId: 'n1',
      clusterId: 'c1',
      hostname: 'h',
      offlineSince: '2026-12-02T10:05:00Z',
      to: 'ready',
      at: '2026-12-02T12:00:00+01:00',
    });
    expect(toNotification(event)?.at).toBe('2026-12-02T11:00:00.000Z');
  });

  it.each([
    ['NodeRegistered.v1'],
    ['NodeCordoned.v1'],
    ['ClusterReportsResumed.v1'],
    ['NodeWentOffline.v99'],
    ['SomethingElse.v1'],
  ])('raises nothing for %s', (type) => {
    expect(toNotification(stored(type, { nodeId: 'n1', at: '2026-12-02T10:05:00Z' }))).toBeNull();
  });

  it('is keyed by stored type: exactly the events that notify are listed', () => {
    expect([...NOTIFYING_EVENT_TYPES].sort()).toEqual([
      'ClusterReportsStalled.v1',
      'NodeCameOnline.v1',
      'NodeCordonSyncOverdue.v1',
      'NodeCordonSyncWentOverdue.v1',
      'NodePoolEmptied.v1',
      'NodeWentOffline.v1',
    ]);
  });

  it('gives the same notification for the same event, so replays raise nothing new', () => {
    const event = stored('NodeWentOffline.v1', {
      nodeId: 'n1',
      clusterId: 'c1',
      hostname: 'h',
      reason: 'kubelet_not_ready',
      from: 'ready',
      lastSeenAt: '2026-12-02T10:00:00.000Z',
      at: '2026-12-02T10:00:00.000Z',
    });
    expect(toNotification(event)).toEqual(toNotification({ ...event }));
  });
});
