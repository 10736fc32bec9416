import { workflowSpec } from '../../../../../libs/kernel/testing/workflow-spec';
import { OperationState, operationDecider } from '../operation.decider';
import { OperationEvent, OperationType } from '../operation.events';
import {
  ChosenNode,
  OperationInput,
  OperationOutput,
  OperationSnapshot,
  operationWorkflow,
} from '../operation.workflow';

/** Fixtures of the operation workflow's specs: an operation's events, snapshots, outputs. */
export const spec = workflowSpec(operationWorkflow);
export const T0 = '2026-12-02T10:00:00.000Z';
export const at = '2026-12-02T10:01:00.000Z';
export const deadlineAt = '2026-12-02T10:30:00.000Z';

export const requested = (
  operationType: OperationType,
  target: Partial<Extract<OperationEvent, { type: 'OperationRequested' }>['data']> = {},
): OperationEvent => ({
  type: 'OperationRequested',
  data: {
    operationId: 'o1',
    operationType,
    clusterId: 'c1',
    poolId: 'p1',
    fromSize: 2,
    desiredSize: 2,
    addHostnames: [],
    reason: null,
    deadlineAt,
    at: T0,
    ...target,
  },
});
export const started = (name: string): OperationEvent => ({
  type: 'OperationStepStarted',
  data: { operationId: 'o1', name, at: T0 },
});
export const done = (name: string): OperationEvent => ({
  type: 'OperationStepCompleted',
  data: { operationId: 'o1', name, detail: null, at: T0 },
});
export const chose = (...nodeIds: string[]): OperationEvent => ({
  type: 'OperationNodesChosen',
  data: {
    operationId: 'o1',
    nodes: nodeIds.map((id) => ({ nodeId: id, hostname: `h-${id}` })),
    at: T0,
  },
});
export const drained = (nodeId: string): OperationEvent => ({
  type: 'OperationDrainStarted',
  data: { operationId: 'o1', nodeId, drainId: `d-${nodeId}`, at: T0 },
});
export const opOf = (events: OperationEvent[]): OperationState =>
  events.reduce(operationDecider.evolve, operationDecider.initialState());

export const given = (events: OperationEvent[], seen: Partial<OperationSnapshot> = {}) =>
  spec.givenState({
    ...operationWorkflow.initialState(),
    poolSeen: true,
    ...seen,
    op: opOf(events),
  });
export const node = (status: ChosenNode['status'], sessions = 0, poolId: string | null = 'p1') => ({
  status,
  poolId,
  hostname: 'h',
  sessions,
});

export const stepDue: OperationInput = {
  type: 'OperationStepDue',
  data: { operationId: 'o1', at },
};
export const again = (delayMs: number): OperationOutput => ({
  type: 'ScheduleOperationStep',
  data: { delayMs },
});
export const start = (name: string, when = at): OperationOutput => ({
  type: 'StartOperationStep',
  data: { name, at: when },
});
export const complete = (name: string, detail: string | null, when = at): OperationOutput => ({
  type: 'CompleteOperationStep',
  data: { name, detail, at: when },
});
export const succeed = (when = at): OperationOutput => ({
  type: 'SucceedOperation',
  data: { at: when },
});
export const fail = (error: string, when = at): OperationOutput => ({
  type: 'FailOperation',
  data: { error, at: when },
});
