import type { StoredEvent } from '@fleet/eventstore/port';
import { CommandContext, Message, Workflow, assertNever, systemContext } from '@fleet/kernel';
import type { SessionCommand } from './session.decider';
import { sessionCodec } from './session.events';
import { stepCommandId } from './step-ids';
import { QueuedBy, SessionDoc, queuedByOf } from './sessions.projection';

/**
 * The session queue as a pure workflow: what an event, a tick, a settled placement or the
 * repair mean for the queue (a pass now, or the safety pass within SAFETY_TICK_MS), and within
 * a pass which waiting session to try, which to skip and which to give up on. The saga
 * (session-queue.saga.ts) reads the queue and carries the outputs out.
 */

/** The safety net: while anything waits, the queue is looked at again this often. */
export const SAFETY_TICK_MS = 5000;

/** The queue's order: sessions displaced by a drain first (rank 0), then by queue time. */
export const QUEUE_ORDER = { queueRank: 1, queuedAt: 1 } as const;

/** Node events after which a waiting session may fit. */
const FREES_CAPACITY = new Set([
  'NodeCapacityReleased',
  'NodeUncordoned',
  'NodeCameOnline',
  'NodeRegistered',
  'NodeGpusChanged',
  'NodeInventoryChanged',
  'NodeAssignedToPool',
  'NodeDrainEnded',
]);

/** A waiting session as a pass sees it (its Sessions document). */
export type QueuedSession = Pick<SessionDoc, 'sessionId' | 'demand' | 'poolId' | 'owner'> & {
  readonly queuedBy?: QueuedBy | null;
};

/**
 * How the create request placing a session in this process ended: `placed` (or otherwise no
 * longer queued), left `queued`, `failed` (it threw), or `unknown` (no longer found in flight).
 */
export type CreatePlacementOutcome = 'placed' | 'queued' | 'failed' | 'unknown';

export type QueueInput =
  /** An event of the log: its stream's category (`node`, `session`, `pool`, ...) and type. */
  | Message<'EventRecorded', { category: string; eventType: string; position: number; at: string }>
  /** A session requested; `placingHere`: its create request is placing it in this process. */
  | Message<
      'SessionRequestRecorded',
      { sessionId: string; position: number; placingHere: boolean; at: string }
    >
  | Message<
      'CreatePlacementSettled',
      { sessionId: string; position: number; outcome: CreatePlacementOutcome; at: string }
    >
  /** A pass asked for without an event (the start: sessions left queued by a crash). */
  | Message<'PassRequested', { position: number; at: string }>
  /** The periodic repair: how many sessions wait, and whether a pass job is still live. */
  | Message<'RepairDue', { queued: number; passPending: boolean; at: string }>
  /** A pass job fired, asked for by the event at `position` (0: none). */
  | Message<'TickFired', { position: number }>
  | Message<'PassStarted', { passId: string; at: string }>
  /** The pass reached a waiting session; `poolGone`: the pool it is pinned to is deleted. */
  | Message<'SessionReached', { session: QueuedSession; poolGone: boolean }>
  /** What came of a placement the pass tried, or of ending a pinned session. */
  | Message<'PlacementTried', { session: QueuedSession; placed: boolean }>
  | Message<'PinnedSessionEnded', { sessionId: string }>
  | Message<'PassEnded', { at: string }>;

/** A placement or termination by the pass, in its context (see queuedSessionContext). */
type PassStep = { session: QueuedSession; passId: string; at: string };
type TerminateSession = Extract<SessionCommand, { type: 'TerminateSession' }>;

export type QueueOutput =
  /** The tick job due at `runAt`, carrying the position its pass must first see applied. */
  | Message<'SchedulePass', { position: number; runAt: number }>
  /** The safety pass no later than `dueAt` (left where it is if due sooner). */
  | Message<'ArmSafetyPass', { dueAt: number }>
  /** The safety pass moved to `runAt`, after a pass that left sessions waiting. */
  | Message<'ScheduleSafetyPass', { runAt: number }>
  /** Wait (in the background) for the create request placing the session here to settle. */
  | Message<'AwaitCreatePlacement', { sessionId: string; position: number }>
  /** Let the Nodes and Sessions read models show the event at `position` (bounded wait). */
  | Message<'CatchUpReadModels', { position: number }>
  | Message<'PassOverQueue', Record<string, never>>
  | Message<'TryPlacement', PassStep>
  | Message<'EndPinnedSession', PassStep & { command: TerminateSession }>;

type Size = readonly [number, number];

export type QueueState = {
  readonly passId: string | null;
  readonly at: string | null;
  /**
   * The pass's misses, the smallest per kind and model, pool and owner: a session cannot fit
   * where a demand no larger of the same key already did not (see missKey).
   */
  readonly misses: Readonly<Record<string, readonly Size[]>>;
  readonly reached: number;
  /** Sessions of the pass placed or ended: the others reached still wait. */
  readonly left: number;
};

/**
 * Pool and owner are part of a miss's key (a miss for another pool, or for an owner a
 * restricted pool refuses, says nothing of the nodes this session may use).
 */
const missKey = ({ demand, poolId, owner }: QueuedSession): string =>
  JSON.stringify([demand.kind === 'gpu' ? `gpu:${demand.gpuModel}` : 'cpu', poolId, owner]);

/** A CPU demand is no larger only in vCPUs and memory both. */
const sizeOf = ({ demand: d }: QueuedSession): Size =>
  d.kind === 'gpu' ? [d.gpuCount, 0] : [d.cpu, d.memoryGiB];

/** Whether an earlier miss of the pass rules this session out without trying it. */
const missCovers = (state: QueueState, s: QueuedSession): boolean => {
  const [units, memory] = sizeOf(s);
  return (state.misses[missKey(s)] ?? []).some(([u, m]) => u <= units && m <= memory);
};

const withMiss = (state: QueueState, s: QueuedSession): QueueState => {
  const key = missKey(s);
  const [units, memory] = sizeOf(s);
  // Only the smallest misses are kept: one that another covers adds nothing.
  const kept = (state.misses[key] ?? []).filter(([u, m]) => u < units || m < memory);
  return { ...state, misses: { ...state.misses, [key]: [...kept, [units, memory]] } };
};

/** How many sessions the pass left waiting so far. */
export const stillWaiting = (state: QueueState): number => state.reached - state.left;

const schedulePass = (position: number, at: string): QueueOutput[] => [
  { type: 'SchedulePass', data: { position, runAt: Date.parse(at) } },
];

const armSafetyPass = (at: string): QueueOutput[] => [
  { type: 'ArmSafetyPass', data: { dueAt: Date.parse(at) + SAFETY_TICK_MS } },
];

/** What an event of the log means for the queue. */
const onEvent = ({
  category,
  eventType,
  position,
  at,
}: Extract<QueueInput, { type: 'EventRecorded' }>['data']): QueueOutput[] => {
  const frees =
    (category === 'node' && FREES_CAPACITY.has(eventType)) ||
    (category === 'session' && eventType === 'SessionResumeRequested') ||
    (category === 'pool' && eventType === 'NodePoolDeleted'); // its pinned sessions are ended by the pass
  return frees ? schedulePass(position, at) : [];
};

/** Within a pass: give up on a session pinned to a deleted pool, skip one a miss covers, else try it. */
const onSessionReached = (
  { session, poolGone }: { session: QueuedSession; poolGone: boolean },
  state: QueueState,
): QueueOutput[] => {
  if (state.passId === null || state.at === null) return [];
  const step = { session, passId: state.passId, at: state.at };
  // A session pinned to a deleted pool can never run (no node joins a deleted pool): it is
  // terminated as by an admin (deleting the pool was the admin's act). Queued, it holds no
  // cards and no bill is open; one running when the pool went was paused by the pool's drain.
  if (poolGone) {
    const command: TerminateSession = {
      type: 'TerminateSession',
      data: { reason: 'admin_force', at: state.at },
    };
    return [{ type: 'EndPinnedSession', data: { ...step, command } }];
  }
  if (missCovers(state, session)) return [];
  return [{ type: 'TryPlacement', data: step }];
};

export const decideQueue = (input: QueueInput, state: QueueState): QueueOutput[] => {
  switch (input.type) {
    case 'EventRecorded':
      return onEvent(input.data);
    case 'SessionRequestRecorded': {
      // The create request placing it in this process leaves it queued only when nothing fits,
      // which a pass would find too: a pass is needed only if that placement fails. (After a
      // crash nothing is in flight, and the pass at start finds the session anyway.)
      const { sessionId, position, placingHere, at } = input.data;
      return placingHere
        ? [{ type: 'AwaitCreatePlacement', data: { sessionId, position } }]
        : schedulePass(position, at);
    }
    case 'CreatePlacementSettled': {
      const { outcome, position, at } = input.data;
      // Left queued: a node may become usable without an event (one silent for half a window
      // reporting again), so the safety pass is armed.
      if (outcome === 'queued') return armSafetyPass(at);
      return outcome === 'placed' ? [] : schedulePass(position, at);
    }
    case 'PassRequested':
      return schedulePass(input.data.position, input.data.at);
    case 'RepairDue': {
      // Jobs are hints: with sessions waiting and no pass to come (Redis lost it, or was down
      // when one was asked for), the safety pass is armed.
      const { queued, passPending, at } = input.data;
      return queued > 0 && !passPending ? armSafetyPass(at) : [];
    }
    case 'TickFired':
      // Placement reads the Nodes read model and the pass the Sessions one: the job may run
      // before they apply the event that kicked it, and the pass would miss what it freed.
      return [
        { type: 'CatchUpReadModels', data: { position: input.data.position } },
        { type: 'PassOverQueue', data: {} },
      ];
    case 'SessionReached':
      return onSessionReached(input.data, state);
    case 'PassEnded':
      return stillWaiting(state) > 0
        ? [
            {
              type: 'ScheduleSafetyPass',
              data: { runAt: Date.parse(input.data.at) + SAFETY_TICK_MS },
            },
          ]
        : [];
    case 'PassStarted':
    case 'PlacementTried':
    case 'PinnedSessionEnded':
      return [];
    default:
      return assertNever(input, 'queue input');
  }
};

export const evolveQueue = (state: QueueState, input: QueueInput): QueueState => {
  switch (input.type) {
    case 'PassStarted':
      return { ...initialQueueState(), passId: input.data.passId, at: input.data.at };
    case 'SessionReached':
      return { ...state, reached: state.reached + 1 };
    case 'PlacementTried':
      return input.data.placed
        ? { ...state, left: state.left + 1 }
        : withMiss(state, input.data.session);
    case 'PinnedSessionEnded':
      return { ...state, left: state.left + 1 };
    default:
      return state;
  }
};

export const initialQueueState = (): QueueState => ({
  passId: null,
  at: null,
  misses: {},
  reached: 0,
  left: 0,
});

export const queueWorkflow: Workflow<QueueInput, QueueOutput, QueueState> = {
  decide: decideQueue,
  evolve: evolveQueue,
  initialState: initialQueueState,
};

/**
 * The context of the pass's commands for one waiting session: a system command caused by the
 * event that queued the session, in that request's correlation (as a reactor's command is), so
 * an auditor follows a placement from the queue back to the request (or drain) that queued it.
 * Not the event that freed the capacity: kicks are coalesced into one pass, and the safety pass
 * has none. Without a queuing event (none in the log): a chain of the command's own.
 */
export const queuedSessionContext = (
  passCommandId: string,
  sessionId: string,
  queuedBy: QueuedBy | null,
  now: Date,
): CommandContext =>
  systemContext(stepCommandId(passCommandId, sessionId), {
    now,
    ...(queuedBy && {
      cause: { eventId: queuedBy.eventId, metadata: { correlationId: queuedBy.correlationId } },
    }),
  });

/** The event that last put a session in the queue, from its stream (oldest first). */
export const queuedByIn = (stream: readonly StoredEvent[]): QueuedBy | null => {
  for (let i = stream.length - 1; i >= 0; i--) {
    const type = sessionCodec.decode(stream[i].type, stream[i].data)?.type;
    if (type === 'SessionRequested' || type === 'SessionResumeRequested')
      return queuedByOf(stream[i]);
  }
  return null;
};
