import type { OperationState } from '../operations';
import { RestoreInput, restoreWorkflow } from './restore.workflow';

const at = '2026-12-07T10:00:00.000Z';
const op = (over: Partial<Extract<OperationState, { operationId: string }>> = {}): OperationState =>
  ({
    status: 'pending',
    operationId: 'o1',
    operationType: 'restore_cluster',
    clusterId: 'c1',
    poolId: null,
    fromSize: null,
    desiredSize: null,
    addHostnames: [],
    backupId: 'b1',
    reason: null,
    deadlineAt: '2026-12-07T10:30:00.000Z',
    requestedAt: at,
    steps: [],
    chosen: null,
    drains: {},
    error: null,
    endedAt: null,
    ...over,
  }) as OperationState;
const requested: RestoreInput = { type: 'RestoreRequested', data: { operationId: 'o1', at } };
const repair: RestoreInput = { type: 'RestoreRepairDue', data: { operationId: 'o1', at } };
const answered = (failure: string | null): RestoreInput => ({
  type: 'RestoreAnswered',
  data: { operationId: 'o1', failure, at },
});
const ask = { type: 'AskRestore', data: { operationId: 'o1', backupId: 'b1', clusterId: 'c1' } };

describe('a restore', () => {
  it('starts its restore step and asks Velero when its operation is requested', () => {
    expect(restoreWorkflow.decide(requested, op())).toEqual([
      { type: 'StartRestoreStep', data: { operationId: 'o1', at } },
      ask,
    ]);
  });

  it('asks again on repair, without starting the step twice', () => {
    const running = op({
      status: 'running',
      steps: [{ name: 'restore', status: 'running', startedAt: at, at, detail: null }],
    });
    expect(restoreWorkflow.decide(repair, running)).toEqual([ask]);
  });

  it('ends the operation with Velero’s answer', () => {
    expect(restoreWorkflow.decide(answered(null), op({ status: 'running' }))).toEqual([
      { type: 'FinishRestore', data: { operationId: 'o1', error: null, at } },
    ]);
    expect(restoreWorkflow.decide(answered('locked'), op({ status: 'running' }))).toEqual([
      { type: 'FinishRestore', data: { operationId: 'o1', error: 'locked', at } },
    ]);
  });

  it('does nothing for a finished operation, another type, or none', () => {
    for (const status of ['succeeded', 'failed', 'timeout'] as const) {
      expect(restoreWorkflow.decide(repair, op({ status }))).toEqual([]);
      expect(restoreWorkflow.decide(answered(null), op({ status }))).toEqual([]);
    }
    expect(restoreWorkflow.decide(requested, op({ operationType: 'create_cluster' }))).toEqual([]);
    expect(restoreWorkflow.decide(requested, { status: 'absent' })).toEqual([]);
  });
});
