import { EventCodec, assertNever } from '@fleet/kernel';
import { SessionDemand } from '../nodes';

export type TerminationReason = 'user' | 'admin_force' | 'drain_force' | 'node_offline';
export type PauseReason = 'user' | 'drain';

/** Where a running session runs and what its running time costs (fixed when the segment opens). */
export type Placement = {
  readonly nodeId: string;
  readonly hostname: string;
  readonly gpus: readonly string[];
  readonly cpu: number;
  readonly memoryGiB: number;
  /** Cards (GPU) or vCPUs (CPU) billed. */
  readonly units: number;
  readonly gpuModel: string | null;
  readonly unitPricePerHour: number;
  readonly currency: string;
};

export const sessionStreamId = (sessionId: string): string => `session-${sessionId}`;

export type SessionEvent =
  | {
      type: 'SessionRequested';
      data: {
        sessionId: string;
        owner: string;
        demand: SessionDemand;
        poolId: string | null;
        requestedAt: string;
      };
    }
  /** First placement: a billing segment opens at `at`. */
  | { type: 'SessionStarted'; data: Placement & { sessionId: string; at: string } }
  /**
   * Cold pause: the segment closes at `at`, the cards are released. Also recorded (reason
   * user, drainId null) when the owner pauses a session a drain had paused or queued to move
   * it: no segment is open then; the session is the owner's again, not the drain's to resume.
   */
  | {
      type: 'SessionPaused';
      data: { sessionId: string; reason: PauseReason; drainId: string | null; at: string };
    }
  /** Asked to run again: waits `queued` (unbilled) until placed. Displaced sessions go first. */
  | {
      type: 'SessionResumeRequested';
      data: { sessionId: string; displaced: boolean; drainId: string | null; at: string };
    }
  /** Placed again after a pause: a new segment opens at `at`. */
  | { type: 'SessionResumed'; data: Placement & { sessionId: string; at: string } }
  | {
      type: 'SessionTerminated';
      data: {
        sessionId: string;
        reason: TerminationReason;
        /** End of the open segment, if any: `at`, or the node's last report for node_offline. */
        endedAt: string;
        at: string;
      };
    };

export const sessionCodec = new EventCodec<SessionEvent>({
  SessionRequested: 1,
  SessionStarted: 1,
  SessionPaused: 1,
  SessionResumeRequested: 1,
  SessionResumed: 1,
  SessionTerminated: 1,
});

type Base = {
  readonly sessionId: string;
  readonly owner: string;
  readonly demand: SessionDemand;
  readonly poolId: string | null;
  readonly requestedAt: string;
  /** The placement of the segment now open, or the last one (after pause or termination). */
  readonly lastPlacement: Placement | null;
  /** Whether it has ever run: a queued session that ran before resumes, one that never ran starts. */
  readonly everRan: boolean;
};

export type SessionState =
  | { readonly status: 'absent' }
  | (Base & {
      readonly status: 'queued';
      /** When it joined the queue (creation or resume request): the queue order. */
      readonly queuedAt: string;
      /** Displaced by a drain: placed ahead of sessions that never ran. */
      readonly displaced: boolean;
      readonly drainId: string | null;
    })
  | (Base & {
      readonly status: 'running';
      readonly placement: Placement;
      /** When its running segment began (placement or resume): billed from here. */
      readonly segmentStartedAt: string;
    })
  | (Base & {
      readonly status: 'paused';
      readonly pausedAt: string;
      readonly drainId: string | null;
    })
  | (Base & {
      readonly status: 'terminated';
      readonly reason: TerminationReason;
      readonly terminatedAt: string;
      /** What it held when terminated: its placement if it was running, else null (kept for the record). */
      readonly heldAtEnd: Placement | null;
    });

export const initialSessionState = (): SessionState => ({ status: 'absent' });

const base = (s: SessionState): Base => {
  if (s.status === 'absent') throw new Error('session event on a session that does not exist');
  return {
    sessionId: s.sessionId,
    owner: s.owner,
    demand: s.demand,
    poolId: s.poolId,
    requestedAt: s.requestedAt,
    lastPlacement: s.lastPlacement,
    everRan: s.everRan,
  };
};

export const evolveSession = (state: SessionState, event: SessionEvent): SessionState => {
  switch (event.type) {
    case 'SessionRequested':
      return {
        status: 'queued',
        ...event.data,
        lastPlacement: null,
        everRan: false,
        queuedAt: event.data.requestedAt,
        displaced: false,
        drainId: null,
      };
    case 'SessionStarted':
    case 'SessionResumed': {
      const { sessionId: _s, at, ...placement } = event.data;
      return {
        ...base(state),
        status: 'running',
        placement,
        segmentStartedAt: at,
        lastPlacement: placement,
        everRan: true,
      };
    }
    case 'SessionPaused':
      return {
        ...base(state),
        status: 'paused',
        pausedAt: event.data.at,
        drainId: event.data.drainId,
      };
    case 'SessionResumeRequested':
      return {
        ...base(state),
        status: 'queued',
        queuedAt: event.data.at,
        displaced: event.data.displaced,
        drainId: event.data.drainId,
      };
    case 'SessionTerminated':
      return {
        ...base(state),
        status: 'terminated',
        reason: event.data.reason,
        terminatedAt: event.data.at,
        heldAtEnd: state.status === 'running' ? state.placement : null,
      };
    default:
      return assertNever(event, 'session event');
  }
};
