import { Aggregate } from '@fleet/cqrs';
import { Decider, EventCodec, Workflow, assertNever } from '@fleet/kernel';
import { DrainMode } from '../nodes';

/**
 * `gone`: no longer the drain's to move: terminated, or paused by its owner meanwhile (then it
 * is off the node, unbilled, and listed nowhere, as a session paused before the drain began).
 */
export type RelocationOutcome = 'relocated' | 'queued' | 'gone';
export type DrainOutcome = 'drained' | 'cancelled' | 'node_offline';

export const drainStreamId = (drainId: string): string => `drain-${drainId}`;

export type DrainEvent =
  | {
      type: 'DrainStarted';
      /** correlationId: the admin's command, carried by every command the drain issues. */
      data: { drainId: string; nodeId: string; mode: DrainMode; correlationId: string; at: string };
    }
  /** Intent, recorded before the session is paused: a crash after it resumes the relocation, never repeats it. */
  | { type: 'DrainRelocationStarted'; data: { drainId: string; sessionId: string; at: string } }
  | {
      type: 'DrainRelocationFinished';
      data: {
        drainId: string;
        sessionId: string;
        outcome: RelocationOutcome;
        toNodeId: string | null;
        at: string;
      };
    }
  /** Intent, recorded before a force drain ends the session: a crash after it still lists it. */
  | { type: 'DrainTerminationStarted'; data: { drainId: string; sessionId: string; at: string } }
  | { type: 'DrainSessionTerminated'; data: { drainId: string; sessionId: string; at: string } }
  /** A termination begun that ended nothing (paused or moved off by its owner first): unlisted. */
  | { type: 'DrainTerminationSkipped'; data: { drainId: string; sessionId: string; at: string } }
  | {
      type: 'DrainEnded';
      data: { drainId: string; nodeId: string; outcome: DrainOutcome; at: string };
    };

export const drainCodec = new EventCodec<DrainEvent>({
  DrainStarted: 1,
  DrainRelocationStarted: 1,
  DrainRelocationFinished: 1,
  DrainTerminationStarted: 1,
  DrainTerminationSkipped: 1,
  DrainSessionTerminated: 1,
  DrainEnded: 1,
});

export type DrainCommand =
  | {
      type: 'StartDrain';
      data: { drainId: string; nodeId: string; mode: DrainMode; correlationId: string; at: string };
    }
  | { type: 'BeginRelocation'; data: { sessionId: string; parallelism: number; at: string } }
  | {
      type: 'FinishRelocation';
      data: { sessionId: string; outcome: RelocationOutcome; toNodeId: string | null; at: string };
    }
  | { type: 'BeginForceTermination'; data: { sessionId: string; at: string } }
  | { type: 'RecordForceTermination'; data: { sessionId: string; at: string } }
  | { type: 'SkipForceTermination'; data: { sessionId: string; at: string } }
  | { type: 'EndDrain'; data: { outcome: DrainOutcome; at: string } };

type Progress = {
  readonly drainId: string;
  readonly nodeId: string;
  readonly mode: DrainMode;
  readonly correlationId: string;
  readonly startedAt: string;
  /** Relocations (force terminations, in force mode) begun and not yet finished, in order. */
  readonly inFlight: readonly string[];
  readonly finished: Readonly<
    Record<string, { outcome: RelocationOutcome; toNodeId: string | null }>
  >;
  readonly terminated: readonly string[];
};

export type DrainState =
  | { readonly status: 'absent' }
  | (Progress & { readonly status: 'running' })
  | (Progress & {
      readonly status: 'ended';
      readonly outcome: DrainOutcome;
      readonly endedAt: string;
    });

const progress = (s: DrainState): Progress => {
  if (s.status === 'absent') throw new Error('drain event before the drain started');
  return s;
};

export const evolveDrain = (state: DrainState, event: DrainEvent): DrainState => {
  switch (event.type) {
    case 'DrainStarted':
      return {
        status: 'running',
        drainId: event.data.drainId,
        nodeId: event.data.nodeId,
        mode: event.data.mode,
        correlationId: event.data.correlationId,
        startedAt: event.data.at,
        inFlight: [],
        finished: {},
        terminated: [],
      };
    case 'DrainRelocationStarted': {
      const p = progress(state);
      return {
        ...state,
        ...p,
        status: 'running',
        inFlight: [...p.inFlight, event.data.sessionId],
      } as DrainState;
    }
    case 'DrainRelocationFinished': {
      const p = progress(state);
      const { sessionId, outcome, toNodeId } = event.data;
      return {
        ...state,
        inFlight: p.inFlight.filter((id) => id !== sessionId),
        finished: { ...p.finished, [sessionId]: { outcome, toNodeId } },
      } as DrainState;
    }
    case 'DrainTerminationStarted': {
      const p = progress(state);
      return { ...state, inFlight: [...p.inFlight, event.data.sessionId] } as DrainState;
    }
    case 'DrainSessionTerminated': {
      const p = progress(state);
      const { sessionId } = event.data;
      return {
        ...state,
        inFlight: p.inFlight.filter((id) => id !== sessionId),
        terminated: [...p.terminated, sessionId],
      } as DrainState;
    }
    case 'DrainTerminationSkipped': {
      const p = progress(state);
      const { sessionId } = event.data;
      return { ...state, inFlight: p.inFlight.filter((id) => id !== sessionId) } as DrainState;
    }
    case 'DrainEnded':
      return {
        ...progress(state),
        status: 'ended',
        outcome: event.data.outcome,
        endedAt: event.data.at,
      };
    default:
      return assertNever(event, 'drain event');
  }
};

/**
 * The drain workflow's bookkeeping: which sessions it is moving, moved, queued or ended.
 * Its side effects (pause, resume, placement, termination) are commands on the session and
 * node streams issued by the saga; this decider only makes each step happen once.
 */
export const decideDrain = (command: DrainCommand, state: DrainState): DrainEvent[] => {
  switch (command.type) {
    case 'StartDrain':
      return state.status === 'absent' ? [{ type: 'DrainStarted', data: command.data }] : [];
    case 'BeginRelocation': {
      if (state.status !== 'running' || state.mode !== 'relocate') return [];
      const { sessionId, parallelism, at } = command.data;
      if (state.inFlight.includes(sessionId) || state.finished[sessionId]) return [];
      if (state.inFlight.length >= parallelism) return [];
      return [{ type: 'DrainRelocationStarted', data: { drainId: state.drainId, sessionId, at } }];
    }
    case 'FinishRelocation': {
      if (state.status === 'absent' || !state.inFlight.includes(command.data.sessionId)) return [];
      return [
        { type: 'DrainRelocationFinished', data: { drainId: state.drainId, ...command.data } },
      ];
    }
    case 'BeginForceTermination': {
      if (state.status !== 'running' || state.mode !== 'force') return [];
      const { sessionId, at } = command.data;
      if (state.inFlight.includes(sessionId) || state.terminated.includes(sessionId)) return [];
      return [{ type: 'DrainTerminationStarted', data: { drainId: state.drainId, sessionId, at } }];
    }
    case 'RecordForceTermination': {
      if (state.status === 'absent' || state.terminated.includes(command.data.sessionId)) return [];
      return [
        { type: 'DrainSessionTerminated', data: { drainId: state.drainId, ...command.data } },
      ];
    }
    case 'SkipForceTermination': {
      if (state.status === 'absent' || !state.inFlight.includes(command.data.sessionId)) return [];
      return [
        { type: 'DrainTerminationSkipped', data: { drainId: state.drainId, ...command.data } },
      ];
    }
    case 'EndDrain':
      if (state.status !== 'running') return [];
      return [
        {
          type: 'DrainEnded',
          data: {
            drainId: state.drainId,
            nodeId: state.nodeId,
            outcome: command.data.outcome,
            at: command.data.at,
          },
        },
      ];
    default:
      return assertNever(command, 'drain command');
  }
};

export const drainDecider: Decider<DrainCommand, DrainEvent, DrainState> = {
  decide: decideDrain,
  evolve: evolveDrain,
  initialState: () => ({ status: 'absent' }),
};

export const drainAggregate: Aggregate<DrainCommand, DrainEvent, DrainState> = {
  name: 'drain',
  decider: drainDecider,
  codec: drainCodec,
};

/** What the saga does next, from the drain, the node's held sessions and the node's status. */
export type DrainStep =
  | { kind: 'end'; outcome: DrainOutcome }
  | { kind: 'terminate'; sessionIds: string[] }
  | { kind: 'relocate'; resume: string[]; begin: string[] }
  | { kind: 'wait' }
  | { kind: 'none' };

/** The drained node as a step reads it: `gone` once deleted. */
export type DrainedNode = {
  readonly status: 'online' | 'offline' | 'gone';
  readonly cordoned: boolean;
  readonly sessionsOnNode: readonly string[];
};

export const nextDrainStep = (
  drain: DrainState,
  node: DrainedNode,
  parallelism: number,
): DrainStep => {
  if (drain.status !== 'running') return { kind: 'none' };
  if (node.status !== 'online') return { kind: 'end', outcome: 'node_offline' };
  if (!node.cordoned) return { kind: 'end', outcome: 'cancelled' };
  if (drain.mode === 'force') {
    // Terminations begun before a crash are finished (and listed) too, off the node or not.
    const sessionIds = [...new Set([...drain.inFlight, ...node.sessionsOnNode])];
    return sessionIds.length > 0
      ? { kind: 'terminate', sessionIds }
      : { kind: 'end', outcome: 'drained' };
  }
  // Relocations begun before a crash are finished first; then new ones up to the parallelism.
  const resume = [...drain.inFlight];
  const free = Math.max(0, parallelism - resume.length);
  const begin = node.sessionsOnNode
    .filter((id) => !drain.inFlight.includes(id) && !drain.finished[id])
    .slice(0, free);
  if (resume.length === 0 && begin.length === 0) {
    // Held by sessions it already relocated (their release is on its way), or nothing at all.
    return node.sessionsOnNode.length === 0
      ? { kind: 'end', outcome: 'drained' }
      : { kind: 'wait' };
  }
  return { kind: 'relocate', resume, begin };
};

/** A drain's step fell due (its job fired), at the runner's time. */
export type DrainInput = { type: 'DrainStepDue'; data: { drainId: string; at: string } };

/** What a step decides on: the drain and its node as read now, and how many may move at once. */
export type DrainView = {
  readonly drain: DrainState;
  readonly node: DrainedNode;
  readonly parallelism: number;
};

/**
 * What a step sets off. `EndDrain` goes to the drain's stream, `EndDrainOnNode` to the node's;
 * a relocation or force termination is a sequence on the session's stream that the saga
 * carries out (each command re-decided there); then the next step is armed.
 */
export type DrainOutput =
  | Extract<DrainCommand, { type: 'EndDrain' }>
  | {
      type: 'EndDrainOnNode';
      data: { drainId: string; nodeId: string; outcome: DrainOutcome; at: string };
    }
  /** `begin`: a relocation not begun yet, recorded first (BeginRelocation) and moved if it was. */
  | { type: 'RelocateSession'; data: { sessionId: string; begin: boolean } }
  | { type: 'ForceTerminateSession'; data: { sessionId: string } }
  | { type: 'ScheduleDrainStep'; data: { drainId: string } };

/**
 * The drain saga's step as a workflow. Its state is read afresh from the drain's and the
 * node's streams at every step, not folded from its inputs (a step due says nothing new).
 */
export const drainWorkflow: Workflow<DrainInput, DrainOutput, DrainView> = {
  decide: ({ data: { drainId, at } }, { drain, node, parallelism }) => {
    if (drain.status !== 'running') return [];
    const step = nextDrainStep(drain, node, parallelism);
    const next: DrainOutput = { type: 'ScheduleDrainStep', data: { drainId } };
    switch (step.kind) {
      case 'none':
      case 'wait':
        return [];
      case 'end': {
        const { outcome } = step;
        return [
          { type: 'EndDrain', data: { outcome, at } },
          { type: 'EndDrainOnNode', data: { drainId, nodeId: drain.nodeId, outcome, at } },
        ];
      }
      case 'terminate':
        return [
          ...step.sessionIds.map((sessionId): DrainOutput => ({
            type: 'ForceTerminateSession',
            data: { sessionId },
          })),
          next,
        ];
      case 'relocate':
        return [
          ...step.resume.map((sessionId): DrainOutput => ({
            type: 'RelocateSession',
            data: { sessionId, begin: false },
          })),
          ...step.begin.map((sessionId): DrainOutput => ({
            type: 'RelocateSession',
            data: { sessionId, begin: true },
          })),
          next,
        ];
      default:
        return assertNever(step, 'drain step');
    }
  },
  evolve: (view) => view,
  initialState: () => ({
    drain: { status: 'absent' },
    node: { status: 'gone', cordoned: false, sessionsOnNode: [] },
    parallelism: 1,
  }),
};
