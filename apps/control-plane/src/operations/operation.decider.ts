import { Aggregate } from '@fleet/cqrs';
import { Decider, assertNever, notFound } from '@fleet/kernel';
import {
  OperationEvent,
  OperationStatus,
  OperationTarget,
  OperationType,
  operationCodec,
} from './operation.events';

export type OperationCommand =
  | {
      type: 'RequestOperation';
      data: OperationTarget & {
        operationId: string;
        operationType: OperationType;
        reason: string | null;
        deadlineAt: string;
        at: string;
      };
    }
  | { type: 'StartOperationStep'; data: { name: string; at: string } }
  | { type: 'CompleteOperationStep'; data: { name: string; detail: string | null; at: string } }
  | {
      type: 'ChooseOperationNodes';
      data: { nodes: Array<{ nodeId: string; hostname: string }>; at: string };
    }
  | { type: 'RecordOperationDrain'; data: { nodeId: string; drainId: string; at: string } }
  | { type: 'SucceedOperation'; data: { at: string } }
  | { type: 'FailOperation'; data: { error: string; at: string } }
  /** The deadline job fired (a timeout as a command): stale when it comes before the deadline. */
  | { type: 'TimeOutOperation'; data: { at: string } };

export type OperationStep = {
  readonly name: string;
  readonly status: 'running' | 'succeeded' | 'failed';
  readonly startedAt: string;
  readonly at: string;
  readonly detail: string | null;
};

export type OperationFacts = OperationTarget & {
  readonly operationId: string;
  readonly operationType: OperationType;
  readonly reason: string | null;
  readonly deadlineAt: string;
  readonly requestedAt: string;
  readonly steps: readonly OperationStep[];
  readonly chosen: ReadonlyArray<{ nodeId: string; hostname: string }> | null;
  readonly drains: Readonly<Record<string, string>>;
  readonly error: string | null;
  readonly endedAt: string | null;
};

export type OperationState =
  { readonly status: 'absent' } | ({ readonly status: OperationStatus } & OperationFacts);

type Existing = Extract<OperationState, { operationId: string }>;

export const isFinished = (status: OperationState['status']): boolean =>
  status === 'succeeded' || status === 'failed' || status === 'timeout';

const existing = (state: OperationState): Existing => {
  if (state.status === 'absent') throw notFound('operation', '');
  return state;
};

export const stepOf = (state: Existing, name: string): OperationStep | undefined =>
  state.steps.find((s) => s.name === name);

export const decideOperation = (
  command: OperationCommand,
  state: OperationState,
): OperationEvent[] => {
  if (command.type === 'RequestOperation') {
    if (state.status !== 'absent') return [];
    return [{ type: 'OperationRequested', data: command.data }];
  }
  const op = existing(state);
  // A finished operation takes nothing more: a late step after its timeout changes nothing.
  if (isFinished(op.status)) return [];
  const { operationId } = op;
  switch (command.type) {
    case 'StartOperationStep':
      if (stepOf(op, command.data.name)) return [];
      return [{ type: 'OperationStepStarted', data: { operationId, ...command.data } }];
    case 'CompleteOperationStep': {
      const step = stepOf(op, command.data.name);
      if (step?.status !== 'running') return [];
      return [{ type: 'OperationStepCompleted', data: { operationId, ...command.data } }];
    }
    case 'ChooseOperationNodes':
      if (op.chosen !== null) return [];
      return [{ type: 'OperationNodesChosen', data: { operationId, ...command.data } }];
    case 'RecordOperationDrain':
      if (op.drains[command.data.nodeId] === command.data.drainId) return [];
      return [{ type: 'OperationDrainStarted', data: { operationId, ...command.data } }];
    case 'SucceedOperation':
      return [{ type: 'OperationSucceeded', data: { operationId, at: command.data.at } }];
    case 'FailOperation':
      return [{ type: 'OperationFailed', data: { operationId, ...command.data } }];
    case 'TimeOutOperation': {
      if (Date.parse(command.data.at) < Date.parse(op.deadlineAt)) return [];
      const running = op.steps.find((s) => s.status === 'running');
      return [
        {
          type: 'OperationTimedOut',
          data: {
            operationId,
            deadlineAt: op.deadlineAt,
            step: running?.name ?? null,
            at: command.data.at,
          },
        },
      ];
    }
    default:
      return assertNever(command, 'operation command');
  }
};

const finishSteps = (op: Existing, at: string): OperationStep[] =>
  op.steps.map((s) => (s.status === 'running' ? { ...s, status: 'failed', at } : s));

export const evolveOperation = (state: OperationState, event: OperationEvent): OperationState => {
  if (event.type === 'OperationRequested') {
    const { at, ...d } = event.data;
    return {
      ...d,
      status: 'pending',
      requestedAt: at,
      steps: [],
      chosen: null,
      drains: {},
      error: null,
      endedAt: null,
    };
  }
  const op = existing(state);
  switch (event.type) {
    case 'OperationStepStarted': {
      const { name, at } = event.data;
      return {
        ...op,
        status: 'running',
        steps: [...op.steps, { name, status: 'running', startedAt: at, at, detail: null }],
      };
    }
    case 'OperationStepCompleted': {
      const { name, at, detail } = event.data;
      return {
        ...op,
        steps: op.steps.map((s) =>
          s.name === name ? { ...s, status: 'succeeded', at, detail } : s,
        ),
      };
    }
    case 'OperationNodesChosen':
      return { ...op, chosen: event.data.nodes };
    case 'OperationDrainStarted':
      return { ...op, drains: { ...op.drains, [event.data.nodeId]: event.data.drainId } };
    case 'OperationSucceeded':
      return { ...op, status: 'succeeded', endedAt: event.data.at };
    case 'OperationFailed':
      return {
        ...op,
        status: 'failed',
        error: event.data.error,
        steps: finishSteps(op, event.data.at),
        endedAt: event.data.at,
      };
    case 'OperationTimedOut':
      return {
        ...op,
        status: 'timeout',
        error: `deadline ${event.data.deadlineAt} passed${event.data.step ? ` during ${event.data.step}` : ''}`,
        steps: finishSteps(op, event.data.at),
        endedAt: event.data.at,
      };
    default:
      return assertNever(event, 'operation event');
  }
};

export const operationDecider: Decider<OperationCommand, OperationEvent, OperationState> = {
  decide: decideOperation,
  evolve: evolveOperation,
  initialState: () => ({ status: 'absent' }),
};

export const operationAggregate: Aggregate<OperationCommand, OperationEvent, OperationState> = {
  name: 'operation',
  decider: operationDecider,
  codec: operationCodec,
};
