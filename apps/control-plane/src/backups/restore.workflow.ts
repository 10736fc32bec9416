import { Workflow, assertNever } from '@fleet/kernel';
import type { OperationState } from '../operations';

/** What reaches a restore: its operation opened (from the log), Velero's answer, a repair. */
export type RestoreInput =
  | { type: 'RestoreRequested'; data: { operationId: string; at: string } }
  | { type: 'RestoreRepairDue'; data: { operationId: string; at: string } }
  | { type: 'RestoreAnswered'; data: { operationId: string; failure: string | null; at: string } };

export type RestoreOutput =
  | { type: 'StartRestoreStep'; data: { operationId: string; at: string } }
  | { type: 'AskRestore'; data: { operationId: string; backupId: string; clusterId: string } }
  | { type: 'FinishRestore'; data: { operationId: string; error: string | null; at: string } };

/** The step of a restore_cluster operation that Velero carries out. */
export const RESTORE_STEP = 'restore';

/**
 * A restore_cluster operation carried out: its `restore` step started and Velero asked (again
 * after a restart: the call is idempotent), then the operation ends with Velero's answer.
 * Decided on the operation's own state, whichever input woke it.
 */
export const restoreWorkflow: Workflow<RestoreInput, RestoreOutput, OperationState> = {
  decide: (input, op) => {
    if (op.status === 'absent' || op.operationType !== 'restore_cluster') return [];
    if (op.status !== 'pending' && op.status !== 'running') return [];
    const { operationId, at } = input.data;
    const ask: RestoreOutput = {
      type: 'AskRestore',
      data: { operationId, backupId: op.backupId ?? '', clusterId: op.clusterId },
    };
    switch (input.type) {
      case 'RestoreRequested':
      case 'RestoreRepairDue': {
        const started = op.steps.some((s) => s.name === RESTORE_STEP);
        return started ? [ask] : [{ type: 'StartRestoreStep', data: { operationId, at } }, ask];
      }
      case 'RestoreAnswered':
        return [{ type: 'FinishRestore', data: { operationId, error: input.data.failure, at } }];
      default:
        return assertNever(input, 'restore input');
    }
  },
  evolve: (state) => state,
  initialState: () => ({ status: 'absent' }),
};
