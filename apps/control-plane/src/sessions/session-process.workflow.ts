import { Message, Workflow, assertNever } from '@fleet/kernel';
import { type Allocation, type NodeState } from '../nodes';
import type { SessionCommand } from './session.decider';
import type { SessionState } from './session.events';

/**
 * The placement process as a pure workflow: it makes the node stream and the session stream of
 * a placement agree, whatever crashed in between.
 * - cards allocated to a session still queued → start it there (finish step 2);
 * - cards allocated to a session that runs elsewhere, paused or ended → release them (step 3);
 * - a session paused or terminated → release its node's cards;
 * - a node gone offline → terminate its running sessions (`node_offline`, billed to the last
 *   report), then release what they held.
 * It keeps no state of its own: its inputs carry the streams as the reactor read them.
 */

type QueuedSession = Extract<SessionState, { status: 'queued' }>;
type TerminateSession = Extract<SessionCommand, { type: 'TerminateSession' }>;

export type SessionProcessInput =
  /**
   * Cards allocated on a node; `placedHere`: what the create request placing the session in
   * this process left it as (null: none in flight here, or it failed).
   */
  | Message<
      'CardsAllocated',
      {
        nodeId: string;
        sessionId: string;
        gpus: readonly string[];
        placedHere: SessionState | null;
      }
    >
  /** Both streams of that allocation, read now. */
  | Message<
      'AllocationStreamsRead',
      {
        nodeId: string;
        sessionId: string;
        gpus: readonly string[];
        node: NodeState;
        session: SessionState;
      }
    >
  /** A node went offline; `node`: the node as it was at that event, not now. */
  | Message<'NodeWentOffline', { nodeId: string; lastSeenAt: string; at: string; node: NodeState }>
  /** What the offline's termination left a session it held cards for as. */
  | Message<'OfflineTerminationDone', { nodeId: string; sessionId: string; session: SessionState }>
  /** A session paused or terminated: as it was at that event, and as it is now. */
  | Message<'SegmentEnded', { then: SessionState; now: SessionState }>;

/** `step`: what the command's id derives from, with the event's (a retried step is the same command). */
export type SessionProcessOutput =
  /** Read both streams of the allocation and decide again. */
  | Message<'ReadAllocationStreams', { nodeId: string; sessionId: string; gpus: readonly string[] }>
  | Message<
      'StartPlacedSession',
      {
        session: QueuedSession;
        node: { nodeId: string; hostname: string };
        allocation: Allocation;
        step: string;
      }
    >
  | Message<'ReleaseCards', { nodeId: string; sessionId: string; step: string }>
  | Message<
      'EndSessionOnOfflineNode',
      { nodeId: string; sessionId: string; command: TerminateSession; step: string }
    >;

/**
 * What a node's offline asks of a session it held cards for: end it, if it still runs on the
 * node in the segment that held them. A segment that began after both the offline and those
 * cards' allocation is a new placement (paused meanwhile and resumed here once the node was
 * back), left alone. Both times count: the offline's is the report's receive time, so a
 * placement on the node may carry a later one though it came first in the node's stream.
 */
export const offlineTermination = (
  nodeId: string,
  lastSeenAt: string,
  at: string,
  allocation: Pick<Allocation, 'allocatedAt'>,
): TerminateSession => ({
  type: 'TerminateSession',
  data: {
    reason: 'node_offline',
    endedAt: lastSeenAt,
    at,
    onlyOnNode: nodeId,
    runningSince:
      allocation.allocatedAt !== undefined && Date.parse(allocation.allocatedAt) > Date.parse(at)
        ? allocation.allocatedAt
        : at,
  },
});

const sameCards = (a: readonly string[], b: readonly string[]): boolean => a.join() === b.join();

const runsOn = (session: SessionState, nodeId: string): boolean =>
  session.status === 'running' && session.placement.nodeId === nodeId;

const onAllocationRead = ({
  nodeId,
  sessionId,
  gpus,
  node,
  session,
}: Extract<
  SessionProcessInput,
  { type: 'AllocationStreamsRead' }
>['data']): SessionProcessOutput[] => {
  if (node.status !== 'online' && node.status !== 'offline') return [];
  const allocation = node.allocations[sessionId];
  if (!allocation || !sameCards(allocation.gpus, gpus)) return []; // released since
  const step = 'finish-placement';
  if (session.status === 'queued')
    return [
      {
        type: 'StartPlacedSession',
        data: { session, node: { nodeId, hostname: node.hostname }, allocation, step },
      },
    ];
  return runsOn(session, nodeId)
    ? []
    : [{ type: 'ReleaseCards', data: { nodeId, sessionId, step } }];
};

export const decideSessionProcess = (input: SessionProcessInput): SessionProcessOutput[] => {
  switch (input.type) {
    case 'CardsAllocated': {
      // Placed by a request in this process: it finished its step 2 on these very cards, so the
      // streams agree. Otherwise (on other cards, failed, or none in flight here) both are read.
      const { nodeId, sessionId, gpus, placedHere } = input.data;
      if (
        placedHere?.status === 'running' &&
        placedHere.placement.nodeId === nodeId &&
        sameCards(placedHere.placement.gpus, gpus)
      )
        return [];
      return [{ type: 'ReadAllocationStreams', data: { nodeId, sessionId, gpus } }];
    }
    case 'AllocationStreamsRead':
      return onAllocationRead(input.data);
    case 'NodeWentOffline': {
      // The sessions on the node when it went offline, not now: handled late (a replay after a
      // crash, a lagging reactor), the node may be back with sessions placed since.
      const { nodeId, lastSeenAt, at, node } = input.data;
      if (node.status !== 'online' && node.status !== 'offline') return [];
      return Object.entries(node.allocations).map(([sessionId, allocation]) => ({
        type: 'EndSessionOnOfflineNode',
        data: {
          nodeId,
          sessionId,
          command: offlineTermination(nodeId, lastSeenAt, at, allocation),
          step: `offline-${sessionId}`,
        },
      }));
    }
    case 'OfflineTerminationDone': {
      // Still running there: placed again once the node was back, on cards of its own now.
      const { nodeId, sessionId, session } = input.data;
      if (runsOn(session, nodeId)) return [];
      return [{ type: 'ReleaseCards', data: { nodeId, sessionId, step: `offline-${sessionId}` } }];
    }
    case 'SegmentEnded': {
      // The node the segment ended on: the session as it was at the event, not as it is now.
      const { then, now } = input.data;
      if (then.status === 'absent' || !then.lastPlacement) return [];
      const nodeId = then.lastPlacement.nodeId;
      // Handled late, after the session was placed again on the same node: those cards are its new ones.
      if (runsOn(now, nodeId)) return [];
      // Released only if the node still holds it for this session (idempotent on the node stream).
      return [
        { type: 'ReleaseCards', data: { nodeId, sessionId: then.sessionId, step: 'release' } },
      ];
    }
    default:
      return assertNever(input, 'session process input');
  }
};

/** Stateless: every decision is made from the streams its input carries. */
export const sessionProcessWorkflow: Workflow<SessionProcessInput, SessionProcessOutput, null> = {
  decide: (input) => decideSessionProcess(input),
  evolve: () => null,
  initialState: () => null,
};
