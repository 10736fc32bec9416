import { Workflow, assertNever } from '@fleet/kernel';
import { BackupState } from './backup.decider';

/** What reaches a backup's process: its moves from the log, Velero's answers, a sweep. */
export type BackupInput =
  | { type: 'BackupMoved'; data: { backupId: string; to: 'pending' | 'running'; at: string } }
  | {
      type: 'VeleroAnswered';
      data: { backupId: string; action: 'backup' | 'delete'; failure: string | null; at: string };
    }
  /** The leader's sweep: work a restart left in flight, and retention. */
  | { type: 'BackupSweepDue'; data: { backupId: string; at: string } };

type At = { backupId: string; at: string };

export type BackupOutput =
  | { type: 'StartBackup'; data: At }
  /** `at`: the input's time; a deletion's answer is dated by it (the sweep that found it due). */
  | { type: 'AskVelero'; data: { backupId: string; action: 'backup' | 'delete'; at: string } }
  | { type: 'CompleteBackup'; data: At }
  | { type: 'FailBackup'; data: At & { reason: string } }
  | { type: 'ExpireBackup'; data: At };

const expired = (state: Exclude<BackupState, { status: 'absent' }>, at: string) =>
  (state.status === 'completed' || state.status === 'failed') &&
  Date.parse(at) >= Date.parse(state.expiresAt);

/**
 * Carries a backup from pending to running (Velero asked) to completed or failed, and a
 * finished one past its `expiresAt` out of storage to `expired`. Decided on the backup's own
 * stream, whichever input woke it.
 */
export const backupWorkflow: Workflow<BackupInput, BackupOutput, BackupState> = {
  decide: (input, state) => {
    if (state.status === 'absent') return [];
    const { backupId, at } = input.data;
    switch (input.type) {
      case 'BackupMoved':
      case 'BackupSweepDue':
        if (state.status === 'pending') return [{ type: 'StartBackup', data: { backupId, at } }];
        if (state.status === 'running') {
          return [{ type: 'AskVelero', data: { backupId, action: 'backup', at } }];
        }
        if (input.type === 'BackupSweepDue' && expired(state, at)) {
          return [{ type: 'AskVelero', data: { backupId, action: 'delete', at } }];
        }
        return [];
      case 'VeleroAnswered': {
        const { action, failure } = input.data;
        if (action === 'backup' && state.status === 'running') {
          return failure === null
            ? [{ type: 'CompleteBackup', data: { backupId, at } }]
            : [{ type: 'FailBackup', data: { backupId, at, reason: failure } }];
        }
        // A failed delete is asked again by the next sweep.
        if (action === 'delete' && failure === null && expired(state, at)) {
          return [{ type: 'ExpireBackup', data: { backupId, at } }];
        }
        return [];
      }
      default:
        return assertNever(input, 'backup input');
    }
  },
  evolve: (state) => state,
  initialState: () => ({ status: 'absent' }),
};
