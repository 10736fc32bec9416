import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { SessionCommand, sessionDecider } from './session.decider';
import { Placement, SessionEvent } from './session.events';

const spec = deciderSpec(sessionDecider);
const T0 = '2026-12-02T10:00:00.000Z';
const T1 = '2026-12-02T10:10:00.000Z';
const T2 = '2026-12-02T10:20:00.000Z';
const T3 = '2026-12-02T10:30:00.000Z';

const demand = { kind: 'gpu' as const, gpuModel: 'L40S' as const, gpuCount: 2 };
const placement = (nodeId = 'n1', gpus = ['GPU-1', 'GPU-2']): Placement => ({
  nodeId,
  hostname: `host-${nodeId}`,
  gpus,
  cpu: 0,
  memoryGiB: 0,
  units: gpus.length,
  gpuModel: 'L40S',
  unitPricePerHour: 3600,
  currency: 'KRW',
});

const requested: SessionEvent = {
  type: 'SessionRequested',
  data: { sessionId: 's1', owner: 'alice', demand, poolId: null, requestedAt: T0 },
};
const started: SessionEvent = {
  type: 'SessionStarted',
  data: { sessionId: 's1', ...placement(), at: T0 },
};
const paused: SessionEvent = {
  type: 'SessionPaused',
  data: { sessionId: 's1', reason: 'user', drainId: null, at: T1 },
};
const resumeRequested: SessionEvent = {
  type: 'SessionResumeRequested',
  data: { sessionId: 's1', displaced: false, drainId: null, at: T2 },
};
const terminated: SessionEvent = {
  type: 'SessionTerminated',
  data: { sessionId: 's1', reason: 'user', endedAt: T1, at: T1 },
};

describe('session', () => {
  describe('when requested', () => {
    it('waits queued for placement', () => {
      spec
        .given()
        .when({
          type: 'RequestSession',
          data: { sessionId: 's1', owner: 'alice', demand, poolId: null, at: T0 },
        })
        .then([requested]);
    });

    it('ignores a retried request', () => {
      spec
        .given([requested])
        .when({
          type: 'RequestSession',
          data: { sessionId: 's1', owner: 'alice', demand, poolId: null, at: T1 },
        })
        .thenNothing();
    });
  });

  describe('when queued', () => {
    it('starts when placed, opening a segment', () => {
      spec
        .given([requested])
        .when({ type: 'PlaceSession', data: { placement: placement(), at: T0 } })
        .then([started]);
    });

    it('refuses a pause', () => {
      spec
        .given([requested])
        .when({ type: 'PauseSession', data: { reason: 'user', drainId: null, at: T1 } })
        .thenRefuses('invalid_transition');
    });

    it('can be terminated before it ever ran', () => {
      spec
        .given([requested])
        .when({ type: 'TerminateSession', data: { reason: 'user', at: T1 } })
        .then([
          {
            type: 'SessionTerminated',
            data: { sessionId: 's1', reason: 'user', endedAt: T1, at: T1 },
          },
        ]);
    });
  });

  describe('when running', () => {
    it('pauses (cold pause: the segment closes)', () => {
      spec
        .given([requested, started])
        .when({ type: 'PauseSession', data: { reason: 'user', drainId: null, at: T1 } })
        .then([paused]);
    });

    it('ignores the same placement again (a retried placement step)', () => {
      spec
        .given([requested, started])
        .when({ type: 'PlaceSession', data: { placement: placement(), at: T1 } })
        .thenNothing();
    });

    it('refuses a second placement elsewhere: a card is never held twice', () => {
      spec
        .given([requested, started])
        .when({ type: 'PlaceSession', data: { placement: placement('n2'), at: T1 } })
        .thenRefuses('invalid_transition');
    });

    it('is terminated by a node going offline, billed up to the last report', () => {
      spec
        .given([requested, started])
        .when({
          type: 'TerminateSession',
          data: { reason: 'node_offline', endedAt: T1, at: T2, onlyOnNode: 'n1' },
        })
        .then([
          {
            type: 'SessionTerminated',
            data: { sessionId: 's1', reason: 'node_offline', endedAt: T1, at: T2 },
          },
        ]);
    });

    it('never ends a segment before it began', () => {
      spec
        .given([requested, { ...started, data: { ...started.data, at: T2 } }])
        .when({
          type: 'TerminateSession',
          data: { reason: 'node_offline', endedAt: T1, at: T3, onlyOnNode: 'n1' },
        })
        .then([
          {
            type: 'SessionTerminated',
            data: { sessionId: 's1', reason: 'node_offline', endedAt: T2, at: T3 },
          },
        ]);
    });

    it('is left alone by an offline of its node from before its segment began (handled late)', () => {
      const offline = (at: string) => ({
        type: 'TerminateSession' as const,
        data: {
          reason: 'node_offline' as const,
          endedAt: T1,
          at,
          onlyOnNode: 'n1',
          runningSince: at,
        },
      });
      // Placed at T2 (back on the node after it came back); the offline was at T1.
      spec
        .given([requested, { ...started, data: { ...started.data, at: T2 } }])
        .when(offline(T1))
        .thenNothing();
      expect(spec.given([requested, started]).when(offline(T2)).thenEvents()).toHaveLength(1);
    });

    it('is left alone when another node goes offline', () => {
      spec
        .given([requested, started])
        .when({
          type: 'TerminateSession',
          data: { reason: 'node_offline', endedAt: T1, at: T2, onlyOnNode: 'n9' },
        })
        .thenNothing();
    });
  });

  describe('when paused', () => {
    it('asks to resume and waits queued, unbilled', () => {
      spec
        .given([requested, started, paused])
        .when({ type: 'ResumeSession', data: { displaced: false, drainId: null, at: T2 } })
        .then([resumeRequested]);
    });

    it('resumes (not starts) when placed again', () => {
      const events = spec
        .given([requested, started, paused, resumeRequested])
        .when({
          type: 'PlaceSession',
          data: { placement: placement('n2', ['GPU-9', 'GPU-8']), at: T3 },
        })
        .thenEvents();
      expect(events.map((e) => e.type)).toEqual(['SessionResumed']);
    });

    it('lets a drain resume only what it paused itself', () => {
      const byDrain: SessionEvent = {
        type: 'SessionPaused',
        data: { sessionId: 's1', reason: 'drain', drainId: 'd1', at: T1 },
      };
      spec
        .given([requested, started, byDrain])
        .when({ type: 'ResumeSession', data: { displaced: true, drainId: 'd1', at: T2 } })
        .then([
          {
            type: 'SessionResumeRequested',
            data: { sessionId: 's1', displaced: true, drainId: 'd1', at: T2 },
          },
        ]);
      spec
        .given([requested, started, paused])
        .when({ type: 'ResumeSession', data: { displaced: true, drainId: 'd1', at: T2 } })
        .thenNothing();
    });

    it('ignores a second pause', () => {
      spec
        .given([requested, started, paused])
        .when({ type: 'PauseSession', data: { reason: 'user', drainId: null, at: T2 } })
        .thenNothing();
    });

    it('is not touched by its old node going offline', () => {
      spec
        .given([requested, started, paused])
        .when({
          type: 'TerminateSession',
          data: { reason: 'node_offline', endedAt: T2, at: T2, onlyOnNode: 'n1' },
        })
        .thenNothing();
    });
  });

  describe('when a drain is moving it', () => {
    const byDrain: SessionEvent = {
      type: 'SessionPaused',
      data: { sessionId: 's1', reason: 'drain', drainId: 'd1', at: T1 },
    };
    const displaced: SessionEvent = {
      type: 'SessionResumeRequested',
      data: { sessionId: 's1', displaced: true, drainId: 'd1', at: T1 },
    };
    const ownerPause: SessionCommand = {
      type: 'PauseSession',
      data: { reason: 'user', drainId: null, at: T2 },
    };
    const ownerPaused: SessionEvent = {
      type: 'SessionPaused',
      data: { sessionId: 's1', reason: 'user', drainId: null, at: T2 },
    };
    const drainResume: SessionCommand = {
      type: 'ResumeSession',
      data: { displaced: true, drainId: 'd1', at: T3 },
    };

    it('records its owner pausing it while paused for the move, and the drain no longer resumes it', () => {
      spec.given([requested, started, byDrain]).when(ownerPause).then([ownerPaused]);
      spec.given([requested, started, byDrain, ownerPaused]).when(drainResume).thenNothing();
    });

    it('records its owner pausing it while queued for the move, and it is placed no more', () => {
      spec.given([requested, started, byDrain, displaced]).when(ownerPause).then([ownerPaused]);
      spec
        .given([requested, started, byDrain, displaced, ownerPaused])
        .when({ type: 'PlaceSession', data: { placement: placement('n2'), at: T3 } })
        .thenRefuses('invalid_transition');
    });

    it('ignores the owner pausing it a second time, and the drain pausing it again', () => {
      spec.given([requested, started, byDrain, ownerPaused]).when(ownerPause).thenNothing();
      spec
        .given([requested, started, byDrain])
        .when({ type: 'PauseSession', data: { reason: 'drain', drainId: 'd1', at: T2 } })
        .thenNothing();
    });

    it('still refuses a pause of a session queued by its owner, not by a drain', () => {
      spec
        .given([requested, started, paused, resumeRequested])
        .when(ownerPause)
        .thenRefuses('invalid_transition');
    });
  });

  describe('when terminated', () => {
    it.each([
      ['pause', { type: 'PauseSession', data: { reason: 'user', drainId: null, at: T2 } }],
      ['resume', { type: 'ResumeSession', data: { displaced: false, drainId: null, at: T2 } }],
      ['placement', { type: 'PlaceSession', data: { placement: placement(), at: T2 } }],
    ] as const)('refuses a %s', (_what, command) => {
      spec.given([requested, started, terminated]).when(command).thenRefuses('invalid_transition');
    });

    it('ignores a second termination', () => {
      spec
        .given([requested, started, terminated])
        .when({ type: 'TerminateSession', data: { reason: 'admin_force', at: T2 } })
        .thenNothing();
    });
  });

  it('refuses commands on a session that does not exist', () => {
    spec
      .given()
      .when({ type: 'PauseSession', data: { reason: 'user', drainId: null, at: T1 } })
      .thenRefuses('not_found');
  });
});
