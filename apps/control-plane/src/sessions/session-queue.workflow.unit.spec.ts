import { workflowSpec } from '../../../../libs/kernel/testing/workflow-spec';
import {
  QueueInput,
  QueueOutput,
  QueuedSession,
  SAFETY_TICK_MS,
  queueWorkflow,
} from './session-queue.workflow';

const spec = workflowSpec(queueWorkflow);
/** given(...inputs seen).when(input).then(...outputs): the workflow folds what it saw, then decides. */
const given = (...seen: QueueInput[]) => ({
  when: (input: QueueInput) => {
    const decided = spec.given(seen).when(input);
    return {
      then: (...outputs: QueueOutput[]) => decided.then(outputs),
      thenNothing: decided.thenNothing,
    };
  },
});

const AT = '2026-12-02T10:00:00.000Z';
const NOW = Date.parse(AT);
const PASS = '01a23e27-0000-7000-8000-000000000000';

const recorded = (category: string, eventType: string, position = 42): QueueInput => ({
  type: 'EventRecorded',
  data: { category, eventType, position, at: AT },
});
const passDue = (position: number): QueueOutput => ({
  type: 'SchedulePass',
  data: { position, runAt: NOW },
});
const safetyArmed: QueueOutput = { type: 'ArmSafetyPass', data: { dueAt: NOW + SAFETY_TICK_MS } };

const gpu = (gpuCount: number, poolId: string | null = null, owner = 'alice'): QueuedSession => ({
  sessionId: `gpu-${gpuCount}-${poolId}-${owner}`,
  demand: { kind: 'gpu', gpuModel: 'MIG_3g', gpuCount },
  poolId,
  owner,
});
const cpu = (cores: number, memoryGiB: number): QueuedSession => ({
  sessionId: `cpu-${cores}-${memoryGiB}`,
  demand: { kind: 'cpu', cpu: cores, memoryGiB },
  poolId: null,
  owner: 'alice',
});

const started: QueueInput = { type: 'PassStarted', data: { passId: PASS, at: AT } };
const reached = (session: QueuedSession, poolGone = false): QueueInput => ({
  type: 'SessionReached',
  data: { session, poolGone },
});
const tried = (session: QueuedSession, placed: boolean): QueueInput => ({
  type: 'PlacementTried',
  data: { session, placed },
});
const missed = (session: QueuedSession): QueueInput[] => [reached(session), tried(session, false)];
const tryIt = (session: QueuedSession): QueueOutput => ({
  type: 'TryPlacement',
  data: { session, passId: PASS, at: AT },
});
const ended: QueueInput = { type: 'PassEnded', data: { at: AT } };

describe('the session queue workflow', () => {
  describe('when an event is recorded', () => {
    it.each([
      'NodeCapacityReleased',
      'NodeUncordoned',
      'NodeCameOnline',
      'NodeRegistered',
      'NodeGpusChanged',
      'NodeInventoryChanged',
      'NodeAssignedToPool',
      'NodeDrainEnded',
    ])('asks for a pass now after %s, carrying the position it must see applied', (type) => {
      given().when(recorded('node', type)).then(passDue(42));
    });

    it('asks for a pass after a resume request and a pool deleted (its pinned sessions end)', () => {
      given()
        .when(recorded('session', 'SessionResumeRequested', 7))
        .then(passDue(7));
      given()
        .when(recorded('pool', 'NodePoolDeleted', 9))
        .then(passDue(9));
    });

    it('asks for nothing after events that free no capacity', () => {
      for (const [category, type] of [
        ['node', 'NodeCapacityAllocated'],
        ['node', 'NodeCordoned'],
        ['node', 'NodeWentOffline'],
        ['session', 'SessionStarted'],
        ['session', 'SessionPaused'],
        ['pool', 'NodePoolCreated'],
        // The type alone does not say it: the stream's category must match.
        ['session', 'NodeCapacityReleased'],
        ['pool', 'SessionResumeRequested'],
        ['node', 'NodePoolDeleted'],
      ])
        given().when(recorded(category, type)).thenNothing();
    });
  });

  describe('when a session is requested', () => {
    const requested = (placingHere: boolean): QueueInput => ({
      type: 'SessionRequestRecorded',
      data: { sessionId: 's1', position: 5, placingHere, at: AT },
    });

    it('waits for its create request when that request is placing it in this process', () => {
      given()
        .when(requested(true))
        .then({ type: 'AwaitCreatePlacement', data: { sessionId: 's1', position: 5 } });
    });

    it('asks for a pass when no placement of it is in flight here (after a crash)', () => {
      given().when(requested(false)).then(passDue(5));
    });

    const settled = (outcome: 'placed' | 'queued' | 'failed' | 'unknown'): QueueInput => ({
      type: 'CreatePlacementSettled',
      data: { sessionId: 's1', position: 5, outcome, at: AT },
    });

    it('arms the safety pass once that request left it queued: a node may become usable without an event', () => {
      given().when(settled('queued')).then(safetyArmed);
    });

    it('asks for a pass when that placement failed, or its end was not seen', () => {
      given().when(settled('failed')).then(passDue(5));
      given().when(settled('unknown')).then(passDue(5));
    });

    it('asks for nothing once that request placed it', () => {
      given().when(settled('placed')).thenNothing();
    });
  });

  it('asks for a pass at start, with no event to wait for', () => {
    given()
      .when({ type: 'PassRequested', data: { position: 0, at: AT } })
      .then(passDue(0));
  });

  describe('when the repair runs', () => {
    const repair = (queued: number, passPending: boolean): QueueInput => ({
      type: 'RepairDue',
      data: { queued, passPending, at: AT },
    });

    it('arms the safety pass when sessions wait and no pass is to come (Redis lost it)', () => {
      given().when(repair(3, false)).then(safetyArmed);
    });

    it('leaves a pass to come alone, and arms nothing with nobody waiting', () => {
      given().when(repair(3, true)).thenNothing();
      given().when(repair(0, false)).thenNothing();
    });
  });

  it('when a pass job fires: first lets the read models show its event, then passes over the queue', () => {
    given()
      .when({ type: 'TickFired', data: { position: 42 } })
      .then(
        { type: 'CatchUpReadModels', data: { position: 42 } },
        { type: 'PassOverQueue', data: {} },
      );
  });

  describe('in a pass', () => {
    it('tries a waiting session, in the context of the pass and its time', () => {
      given(started)
        .when(reached(gpu(1)))
        .then(tryIt(gpu(1)));
    });

    it('terminates a session pinned to a deleted pool instead: it can never run', () => {
      const pinned = gpu(1, 'p');
      given(started, ...missed(gpu(1, 'p')))
        .when(reached(pinned, true))
        .then({
          type: 'EndPinnedSession',
          data: {
            session: pinned,
            passId: PASS,
            at: AT,
            command: { type: 'TerminateSession', data: { reason: 'admin_force', at: AT } },
          },
        });
    });

    it('decides nothing outside a pass', () => {
      given()
        .when(reached(gpu(1)))
        .thenNothing();
    });

    describe('after a session did not fit', () => {
      const after = (...sessions: QueuedSession[]) => given(started, ...sessions.flatMap(missed));

      it('skips a session no smaller, of the same model, pool and owner', () => {
        after(gpu(1, 'p'))
          .when(reached(gpu(2, 'p')))
          .thenNothing();
        after(gpu(2, 'p'))
          .when(reached(gpu(1, 'p')))
          .then(tryIt(gpu(1, 'p')));
      });

      it('still tries a session for another pool: the miss says nothing of its nodes', () => {
        after(gpu(1, 'q'))
          .when(reached(gpu(2, 'p')))
          .then(tryIt(gpu(2, 'p')));
        after(gpu(1, 'q'))
          .when(reached(gpu(1, null)))
          .then(tryIt(gpu(1, null)));
        after(gpu(1, null))
          .when(reached(gpu(1, 'p')))
          .then(tryIt(gpu(1, 'p')));
      });

      it('still tries a session of another owner: a restricted pool may take them', () => {
        after(gpu(1, null, 'bob'))
          .when(reached(gpu(1, null, 'alice')))
          .then(tryIt(gpu(1, null, 'alice')));
      });

      it('still tries a session of another model', () => {
        const other: QueuedSession = {
          ...gpu(2),
          demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount: 2 },
        };
        after(gpu(1)).when(reached(other)).then(tryIt(other));
        after(gpu(1))
          .when(reached(cpu(1, 1)))
          .then(tryIt(cpu(1, 1)));
      });

      it('still tries a CPU session that asks for less memory, however many vCPUs', () => {
        after(cpu(4, 500))
          .when(reached(cpu(8, 16)))
          .then(tryIt(cpu(8, 16)));
        after(cpu(4, 500))
          .when(reached(cpu(8, 500)))
          .thenNothing();
        after(cpu(4, 500), cpu(16, 16))
          .when(reached(cpu(16, 600)))
          .thenNothing();
        after(cpu(4, 500), cpu(16, 16))
          .when(reached(cpu(8, 100)))
          .then(tryIt(cpu(8, 100)));
      });

      it('but not after it was placed, nor in the next pass', () => {
        given(started, reached(gpu(1)), tried(gpu(1), true))
          .when(reached(gpu(2)))
          .then(tryIt(gpu(2)));
        given(started, ...missed(gpu(1)), started)
          .when(reached(gpu(2)))
          .then(tryIt(gpu(2)));
      });
    });

    describe('at its end', () => {
      const safetyPass: QueueOutput = {
        type: 'ScheduleSafetyPass',
        data: { runAt: NOW + SAFETY_TICK_MS },
      };

      it('moves the safety pass on when sessions still wait, skipped ones too', () => {
        given(started, ...missed(gpu(1)))
          .when(ended)
          .then(safetyPass);
        given(started, ...missed(gpu(1)), reached(gpu(2)))
          .when(ended)
          .then(safetyPass);
        given(started, reached(gpu(1)), tried(gpu(1), true), ...missed(gpu(4)))
          .when(ended)
          .then(safetyPass);
      });

      it('asks for nothing when every session was placed or ended, or none waited', () => {
        given(started, reached(gpu(1)), tried(gpu(1), true))
          .when(ended)
          .thenNothing();
        given(started, reached(gpu(1, 'p'), true), {
          type: 'PinnedSessionEnded',
          data: { sessionId: gpu(1, 'p').sessionId },
        })
          .when(ended)
          .thenNothing();
        given(started).when(ended).thenNothing();
      });
    });
  });
});
