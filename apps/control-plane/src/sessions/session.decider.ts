import { Aggregate } from '@fleet/cqrs';
import { Decider, assertNever, invalidTransition, notFound } from '@fleet/kernel';
import { SessionDemand } from '../nodes';
import {
  PauseReason,
  Placement,
  SessionEvent,
  SessionState,
  TerminationReason,
  evolveSession,
  initialSessionState,
  sessionCodec,
} from './session.events';

export type SessionCommand =
  | {
      type: 'RequestSession';
      data: {
        sessionId: string;
        owner: string;
        demand: SessionDemand;
        poolId: string | null;
        at: string;
      };
    }
  | { type: 'PlaceSession'; data: { placement: Placement; at: string } }
  | { type: 'PauseSession'; data: { reason: PauseReason; drainId: string | null; at: string } }
  | { type: 'ResumeSession'; data: { displaced: boolean; drainId: string | null; at: string } }
  | {
      type: 'TerminateSession';
      data: {
        reason: TerminationReason;
        at: string;
        /** For node_offline: the node's last report, where billing stops. */
        endedAt?: string;
        /** Terminate only if it is running on this node (a node going offline). */
        onlyOnNode?: string;
        /**
         * Terminate only if its running segment began by then (a node's offline, handled late,
         * ends no session placed on the node after it came back).
         */
        runningSince?: string;
      };
    };

const existing = (state: SessionState): Exclude<SessionState, { status: 'absent' }> => {
  if (state.status === 'absent') throw notFound('session', '');
  return state;
};

const samePlacement = (a: Placement, b: Placement): boolean =>
  a.nodeId === b.nodeId &&
  a.gpus.length === b.gpus.length &&
  a.gpus.every((g, i) => g === b.gpus[i]);

/**
 * The session lifecycle: queued → running ⇄ paused → terminated (a paused session resumes
 * through queued when nothing fits). Repeating the move a session already made is a no-op;
 * any other move is refused with invalid_transition. A pause by its owner (or an admin) of a
 * session a drain paused or queued to move it is not a repeat: it takes the session from the
 * drain, which resumes only what it paused itself.
 */
export const decideSession = (command: SessionCommand, state: SessionState): SessionEvent[] => {
  switch (command.type) {
    case 'RequestSession': {
      if (state.status !== 'absent') return []; // a retried create
      const { sessionId, owner, demand, poolId, at } = command.data;
      return [
        { type: 'SessionRequested', data: { sessionId, owner, demand, poolId, requestedAt: at } },
      ];
    }
    case 'PlaceSession': {
      const s = existing(state);
      if (s.status === 'running' && samePlacement(s.placement, command.data.placement)) return [];
      if (s.status !== 'queued') throw invalidTransition('session', s.status, 'be placed');
      const data = { sessionId: s.sessionId, ...command.data.placement, at: command.data.at };
      return [s.everRan ? { type: 'SessionResumed', data } : { type: 'SessionStarted', data }];
    }
    case 'PauseSession': {
      const s = existing(state);
      // Paused or queued by a drain to move it, a session is still its owner's to pause: the
      // owner's pause is recorded (no segment is open to close), so the drain resumes it no more.
      const ownerTakesOverDrain =
        command.data.drainId === null &&
        (s.status === 'paused' || s.status === 'queued') &&
        s.drainId !== null;
      if (s.status === 'paused' && !ownerTakesOverDrain) return [];
      if (s.status !== 'running' && !ownerTakesOverDrain)
        throw invalidTransition('session', s.status, 'pause');
      return [
        {
          type: 'SessionPaused',
          data: {
            sessionId: s.sessionId,
            reason: command.data.reason,
            drainId: command.data.drainId,
            at: command.data.at,
          },
        },
      ];
    }
    case 'ResumeSession': {
      const s = existing(state);
      // A drain resumes only what it paused itself, never a session its user paused.
      const { drainId } = command.data;
      if (drainId !== null && (s.status !== 'paused' || s.drainId !== drainId)) return [];
      if (s.status === 'queued' || s.status === 'running') return [];
      if (s.status !== 'paused') throw invalidTransition('session', s.status, 'resume');
      return [
        { type: 'SessionResumeRequested', data: { sessionId: s.sessionId, ...command.data } },
      ];
    }
    case 'TerminateSession': {
      const s = existing(state);
      if (s.status === 'terminated') return [];
      const { reason, at, endedAt, onlyOnNode, runningSince } = command.data;
      if (onlyOnNode !== undefined && (s.status !== 'running' || s.placement.nodeId !== onlyOnNode))
        return [];
      if (
        runningSince !== undefined &&
        s.status === 'running' &&
        Date.parse(s.segmentStartedAt) > Date.parse(runningSince)
      )
        return [];
      // Billing stops at the end given (a node's last report), never before the segment began.
      const end =
        s.status === 'running' && endedAt !== undefined
          ? new Date(
              Math.max(
                Date.parse(s.segmentStartedAt),
                Math.min(Date.parse(endedAt), Date.parse(at)),
              ),
            ).toISOString()
          : at;
      return [
        { type: 'SessionTerminated', data: { sessionId: s.sessionId, reason, endedAt: end, at } },
      ];
    }
    default:
      return assertNever(command, 'session command');
  }
};

export const sessionDecider: Decider<SessionCommand, SessionEvent, SessionState> = {
  decide: decideSession,
  evolve: evolveSession,
  initialState: initialSessionState,
};

export const sessionAggregate: Aggregate<SessionCommand, SessionEvent, SessionState> = {
  name: 'session',
  decider: sessionDecider,
  codec: sessionCodec,
};
