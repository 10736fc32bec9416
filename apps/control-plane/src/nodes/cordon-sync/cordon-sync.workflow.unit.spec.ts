import { uuidFrom } from '@fleet/kernel';
import { workflowSpec } from '../../../../../libs/kernel/testing/workflow-spec';
import { NodeState } from '../node.events';
import {
  CordonSyncDeadline,
  CordonSyncInput,
  CordonSyncOutput,
  CordonSyncState,
  cordonSyncStateOf,
  cordonSyncWorkflow,
} from './cordon-sync.workflow';

const SYNC_SEC = 15;
const spec = workflowSpec(cordonSyncWorkflow({ syncSec: SYNC_SEC }));
const T0 = '2026-12-02T10:00:00.000Z';
const T1 = '2026-12-02T10:00:15.000Z';
const ms = (iso: string) => Date.parse(iso);
const iso = (at: number) => new Date(at).toISOString();

const change = { nodeId: 'n1', at: T0, eventId: 'evt-cordon', correlationId: 'corr-admin' };
const cordoned: CordonSyncInput = { type: 'NodeCordoned', data: change };
const uncordoned = (at: string): CordonSyncInput => ({
  type: 'NodeUncordoned',
  data: { ...change, at, eventId: 'evt-uncordon' },
});
const deadline: CordonSyncDeadline = {
  nodeId: 'n1',
  desired: true,
  since: T0,
  correlationId: 'corr-admin',
  causationId: 'evt-cordon',
};
const passed = (
  at = T1,
  heartbeatsRestoredAt = 0,
  over: Partial<CordonSyncDeadline> = {},
): CordonSyncInput => ({
  type: 'CordonSyncDeadlinePassed',
  data: { deadline: { ...deadline, ...over }, heartbeatsRestoredAt, at },
});
const flag = (at = T1): CordonSyncOutput => ({
  type: 'FlagCordonSyncOverdue',
  data: {
    nodeId: 'n1',
    desired: true,
    at,
    commandId: uuidFrom('cordon-sync-overdue', 'n1', T0, 'true'),
    correlationId: 'corr-admin',
    causationId: 'evt-cordon',
  },
});
const tracked = (over: Partial<Extract<CordonSyncState, { status: 'tracked' }>> = {}) =>
  ({
    status: 'tracked',
    desired: true,
    since: T0,
    overdue: false,
    observed: false,
    ...over,
  }) as const;

describe('the cordon-sync workflow', () => {
  describe('when the desired cordon state changes', () => {
    it('arms the node’s deadline CORDON_SYNC_SEC after a cordon, joined to it', () => {
      spec
        .given()
        .when(cordoned)
        .then([{ type: 'ScheduleCordonSyncDeadline', data: { deadline, runAt: ms(T1) } }]);
    });

    it('arms it after an uncordon too (the same job id: a newer change replaces it)', () => {
      spec
        .given([cordoned])
        .when(uncordoned(T1))
        .then([
          {
            type: 'ScheduleCordonSyncDeadline',
            data: {
              deadline: { ...deadline, desired: false, since: T1, causationId: 'evt-uncordon' },
              runAt: ms(T1) + SYNC_SEC * 1000,
            },
          },
        ]);
    });

    it('cancels the deadline of a deleted node', () => {
      spec
        .given([cordoned])
        .when({ type: 'NodeDeleted', data: { nodeId: 'n1' } })
        .then([{ type: 'CancelCordonSyncDeadline', data: { nodeId: 'n1' } }]);
    });
  });

  describe('when the deadline passes', () => {
    it('flags the change Kubernetes has not shown, once', () => {
      spec.given([cordoned]).when(passed()).then([flag()]);
      spec.given([cordoned, passed()]).when(passed()).thenNothing();
    });

    it('flags a change Kubernetes was never heard on', () => {
      spec
        .givenState(tracked({ observed: null }))
        .when(passed())
        .then([flag()]);
    });

    it('flags nothing once Kubernetes shows the desired state', () => {
      spec
        .givenState(tracked({ observed: true }))
        .when(passed())
        .thenNothing();
    });

    it('flags nothing for a change already flagged', () => {
      spec
        .givenState(tracked({ overdue: true }))
        .when(passed())
        .thenNothing();
    });

    it('flags nothing for a stale deadline: the desired state changed since', () => {
      spec
        .given([cordoned, uncordoned(T1)])
        .when(passed())
        .thenNothing();
      spec
        .givenState(tracked({ since: T1 }))
        .when(passed())
        .thenNothing();
    });

    it('flags nothing for a deleted node', () => {
      spec
        .given([cordoned, { type: 'NodeDeleted', data: { nodeId: 'n1' } }])
        .when(passed())
        .thenNothing();
    });

    describe('after the heartbeat store was out of reach', () => {
      const restored = ms(T0) + 10_000;

      it('runs the time again from the store’s return', () => {
        spec
          .given([cordoned])
          .when(passed(T1, restored))
          .then([
            {
              type: 'ScheduleCordonSyncDeadline',
              data: { deadline, runAt: restored + SYNC_SEC * 1000 },
            },
          ]);
      });

      it('flags once that time has passed too', () => {
        const at = iso(restored + SYNC_SEC * 1000);
        spec
          .given([cordoned])
          .when(passed(at, restored))
          .then([flag(at)]);
      });

      it('ignores a return from before the change', () => {
        spec
          .given([cordoned])
          .when(passed(T1, ms(T0) - 1))
          .then([flag()]);
      });
    });
  });

  describe('when the repair finds an unsynced node without a deadline', () => {
    const lost: CordonSyncInput = { type: 'CordonSyncDeadlineLost', data: { nodeId: 'n1' } };

    it('re-arms it from the change, with ids of its own', () => {
      const id = uuidFrom('cordon-sync-reconcile', 'n1', T0);
      spec
        .givenState(tracked())
        .when(lost)
        .then([
          {
            type: 'ScheduleCordonSyncDeadline',
            data: {
              deadline: { ...deadline, correlationId: id, causationId: id },
              runAt: ms(T1),
            },
          },
        ]);
    });

    it('re-arms nothing that is synced, flagged, never changed or gone', () => {
      spec
        .givenState(tracked({ observed: true }))
        .when(lost)
        .thenNothing();
      spec
        .givenState(tracked({ overdue: true }))
        .when(lost)
        .thenNothing();
      spec
        .givenState(tracked({ desired: false, since: null, observed: null }))
        .when(lost)
        .thenNothing();
      spec.given().when(lost).thenNothing();
    });
  });

  it('reads its state from the node: desired and observed cordon, and the flag', () => {
    const node = {
      status: 'offline',
      observedUnschedulable: false,
      cordon: { desired: true, reason: null, since: T0, overdue: true },
    } as unknown as NodeState;
    expect(cordonSyncStateOf(node)).toEqual(tracked({ overdue: true }));
    expect(cordonSyncStateOf({ status: 'absent' })).toEqual({ status: 'untracked' });
  });
});
