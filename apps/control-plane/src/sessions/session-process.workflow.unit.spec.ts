import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { workflowSpec } from '../../../../libs/kernel/testing/workflow-spec';
import { Allocation, NodeState } from '../nodes';
import { Step, placement, sessionEvent } from '../../../../test/support/session-events';
import {
  SessionProcessInput,
  SessionProcessOutput,
  offlineTermination,
  sessionProcessWorkflow,
} from './session-process.workflow';
import { sessionDecider } from './session.decider';
import { SessionEvent, SessionState, evolveSession, initialSessionState } from './session.events';

const spec = deciderSpec(sessionDecider);
/** The report taking the node offline was received here... */
const RECEIVED = '2026-12-05T19:24:25.351Z';
/** ...and a placement on the node, a millisecond later, was recorded before the offline. */
const PLACED = '2026-12-05T19:24:25.352Z';
const LATER = '2026-12-05T19:30:00.000Z';

const requested: SessionEvent = {
  type: 'SessionRequested',
  data: {
    sessionId: 's1',
    owner: 'alice',
    demand: { kind: 'gpu', gpuModel: 'L40S', gpuCount: 1 },
    poolId: null,
    requestedAt: PLACED,
  },
};
const startedAt = (at: string): SessionEvent => ({
  type: 'SessionStarted',
  data: {
    sessionId: 's1',
    nodeId: 'n1',
    hostname: 'host-n1',
    gpus: ['GPU-1'],
    cpu: 0,
    memoryGiB: 0,
    units: 1,
    gpuModel: 'L40S',
    unitPricePerHour: 3600,
    currency: 'KRW',
    at,
  },
});
const allocation = (allocatedAt?: string): Allocation => ({
  sessionId: 's1',
  owner: 'alice',
  gpus: ['GPU-1'],
  cpu: 0,
  memoryGiB: 0,
  ...(allocatedAt === undefined ? {} : { allocatedAt }),
});

describe('a node offline, for a session holding cards on it', () => {
  it('ends the session placed a millisecond after the report was received, though placed first on the node', () => {
    const events = spec
      .given([requested, startedAt(PLACED)])
      .when(offlineTermination('n1', RECEIVED, RECEIVED, allocation(PLACED)))
      .thenEvents();
    expect(events).toEqual([
      {
        type: 'SessionTerminated',
        // Billed from its start: never a segment that ends before it began.
        data: { sessionId: 's1', reason: 'node_offline', endedAt: PLACED, at: RECEIVED },
      },
    ]);
  });

  it('leaves alone a session placed there again after the node came back (its segment began later)', () => {
    spec
      .given([requested, startedAt(LATER)])
      .when(offlineTermination('n1', RECEIVED, RECEIVED, allocation(PLACED)))
      .thenNothing();
  });

  it('counts from the offline when the allocation is older, or its time unknown', () => {
    for (const allocated of ['2026-12-05T19:00:00.000Z', undefined]) {
      expect(
        offlineTermination('n1', RECEIVED, RECEIVED, allocation(allocated)).data.runningSince,
      ).toBe(RECEIVED);
    }
  });
});

describe('the placement process workflow', () => {
  const spec = workflowSpec(sessionProcessWorkflow);
  /** Stateless: every decision is made from the streams its input carries. */
  const given = (input: SessionProcessInput) => {
    const decided = spec.givenState(null).when(input);
    return {
      then: (...outputs: SessionProcessOutput[]) => decided.then(outputs),
      thenNothing: decided.thenNothing,
    };
  };
  const session = (...steps: Step[]): SessionState =>
    steps.map((step) => sessionEvent('s1', step)).reduce(evolveSession, initialSessionState());
  const T = '2026-12-05T19:00:00.000Z';
  const onN1 = placement({ nodeId: 'n1', gpus: ['GPU-1'] });
  const onN2 = placement({ nodeId: 'n2', hostname: 'gpu-b-01', gpus: ['GPU-9'] });
  const queued = session({ requested: T, owner: 'alice' });
  const running = (where = onN1) =>
    session({ requested: T, owner: 'alice' }, { started: T, placement: where });
  const paused = session(
    { requested: T, owner: 'alice' },
    { started: T, placement: onN1 },
    { paused: LATER },
  );
  const terminated = session(
    { requested: T, owner: 'alice' },
    { started: T, placement: onN1 },
    { terminated: LATER },
  );
  const node = (allocations: Record<string, Allocation>, status = 'online'): NodeState =>
    ({ status, nodeId: 'n1', hostname: 'host-n1', allocations }) as unknown as NodeState;
  const holding = node({ s1: allocation(PLACED) });

  describe('cards allocated to a session', () => {
    const allocated = (placedHere: SessionState | null, gpus = ['GPU-1']): SessionProcessInput => ({
      type: 'CardsAllocated',
      data: { nodeId: 'n1', sessionId: 's1', gpus, placedHere },
    });
    const read: SessionProcessOutput = {
      type: 'ReadAllocationStreams',
      data: { nodeId: 'n1', sessionId: 's1', gpus: ['GPU-1'] },
    };

    it('need nothing when a request in this process placed it on these very cards', () => {
      given(allocated(running())).thenNothing();
    });

    it('have both streams read otherwise: placed on other cards, failed, or nothing in flight here', () => {
      given(allocated(running(onN2))).then(read);
      given(allocated(running(placement({ nodeId: 'n1', gpus: ['GPU-2'] })))).then(read);
      given(allocated(queued)).then(read);
      given(allocated(null)).then(read);
    });

    const streams = (node: NodeState, s: SessionState): SessionProcessInput => ({
      type: 'AllocationStreamsRead',
      data: { nodeId: 'n1', sessionId: 's1', gpus: ['GPU-1'], node, session: s },
    });
    const release: SessionProcessOutput = {
      type: 'ReleaseCards',
      data: { nodeId: 'n1', sessionId: 's1', step: 'finish-placement' },
    };

    it('start the session still queued there (step 2 finished)', () => {
      given(streams(holding, queued)).then({
        type: 'StartPlacedSession',
        data: {
          session: queued as Extract<SessionState, { status: 'queued' }>,
          node: { nodeId: 'n1', hostname: 'host-n1' },
          allocation: allocation(PLACED),
          step: 'finish-placement',
        },
      });
    });

    it('go back when the session runs elsewhere, is paused or ended (step 3)', () => {
      given(streams(holding, running(onN2))).then(release);
      given(streams(holding, paused)).then(release);
      given(streams(holding, terminated)).then(release);
    });

    it('stay with the session that runs on them', () => {
      given(streams(holding, running())).thenNothing();
    });

    it('are left alone once released, or taken for the session again on other cards', () => {
      given(streams(node({}), queued)).thenNothing();
      given(
        streams(node({ s1: { ...allocation(PLACED), gpus: ['GPU-2'] } }), queued),
      ).thenNothing();
      given(streams(node({ s1: allocation(PLACED) }, 'deleted'), queued)).thenNothing();
    });
  });

  describe('a node gone offline', () => {
    const offline = (n: NodeState): SessionProcessInput => ({
      type: 'NodeWentOffline',
      data: { nodeId: 'n1', lastSeenAt: RECEIVED, at: RECEIVED, node: n },
    });

    it('ends every session it held cards for at the offline, billed to its last report', () => {
      const older = { ...allocation('2026-12-05T19:00:00.000Z'), sessionId: 's2' };
      given(offline(node({ s1: allocation(PLACED), s2: older }))).then(
        {
          type: 'EndSessionOnOfflineNode',
          data: {
            nodeId: 'n1',
            sessionId: 's1',
            command: offlineTermination('n1', RECEIVED, RECEIVED, allocation(PLACED)),
            step: 'offline-s1',
          },
        },
        {
          type: 'EndSessionOnOfflineNode',
          data: {
            nodeId: 'n1',
            sessionId: 's2',
            command: offlineTermination('n1', RECEIVED, RECEIVED, older),
            step: 'offline-s2',
          },
        },
      );
    });

    it('ends nothing on a node that held no cards, or is gone', () => {
      given(offline(node({}))).thenNothing();
      given(offline({ status: 'absent' })).thenNothing();
    });

    const done = (s: SessionState): SessionProcessInput => ({
      type: 'OfflineTerminationDone',
      data: { nodeId: 'n1', sessionId: 's1', session: s },
    });

    it('then releases the cards of each session no longer running there', () => {
      const release: SessionProcessOutput = {
        type: 'ReleaseCards',
        data: { nodeId: 'n1', sessionId: 's1', step: 'offline-s1' },
      };
      given(done(terminated)).then(release);
      given(done(running(onN2))).then(release);
    });

    it('but not of one placed there again once the node was back: those cards are its own now', () => {
      given(done(running())).thenNothing();
    });
  });

  describe('a session paused or terminated', () => {
    const ended = (then: SessionState, now: SessionState): SessionProcessInput => ({
      type: 'SegmentEnded',
      data: { then, now },
    });
    const release: SessionProcessOutput = {
      type: 'ReleaseCards',
      data: { nodeId: 'n1', sessionId: 's1', step: 'release' },
    };

    it('releases the cards of the node its segment ended on', () => {
      given(ended(paused, paused)).then(release);
      given(ended(terminated, terminated)).then(release);
      // Resumed elsewhere since: n1's cards are still the old segment's.
      given(
        ended(
          paused,
          session(
            { requested: T, owner: 'alice' },
            { started: T, placement: onN1 },
            { paused: LATER },
            { resumed: LATER, placement: onN2 },
          ),
        ),
      ).then(release);
    });

    it('releases nothing when it runs there again (handled late): those cards are its new ones', () => {
      given(ended(paused, running())).thenNothing();
    });

    it('releases nothing for a session never placed', () => {
      const never = session({ requested: T, owner: 'alice' }, { terminated: LATER });
      given(ended(never, never)).thenNothing();
      given(ended({ status: 'absent' }, { status: 'absent' })).thenNothing();
    });
  });
});
