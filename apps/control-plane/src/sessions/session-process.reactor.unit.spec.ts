import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { Allocation } from '../nodes';
import { offlineTermination } from './session-process.reactor';
import { sessionDecider } from './session.decider';
import { SessionEvent } from './session.events';

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
