import { BackupState } from './backup.decider';
import { BackupStatus } from './backup.events';
import { BackupInput, backupWorkflow } from './backup.workflow';

const at = '2026-12-07T03:00:00.000Z';
const past = '2026-12-10T03:00:00.000Z';
const given = (status: BackupStatus | 'absent'): BackupState =>
  status === 'absent'
    ? { status }
    : {
        status,
        backupId: 'b1',
        clusterId: 'c1',
        expiresAt: '2026-12-08T03:00:00.000Z',
        location: 'l',
      };
const moved = (to: 'pending' | 'running'): BackupInput => ({
  type: 'BackupMoved',
  data: { backupId: 'b1', to, at },
});
const sweep = (when = at): BackupInput => ({
  type: 'BackupSweepDue',
  data: { backupId: 'b1', at: when },
});
const answered = (
  action: 'backup' | 'delete',
  failure: string | null = null,
  when = at,
): BackupInput => ({
  type: 'VeleroAnswered',
  data: { backupId: 'b1', action, failure, at: when },
});
const decide = (input: BackupInput, status: BackupStatus | 'absent') =>
  backupWorkflow.decide(input, given(status));

describe('a backup’s process', () => {
  it('starts a requested backup, then asks Velero for it', () => {
    expect(decide(moved('pending'), 'pending')).toEqual([
      { type: 'StartBackup', data: { backupId: 'b1', at } },
    ]);
    expect(decide(moved('running'), 'running')).toEqual([
      { type: 'AskVelero', data: { backupId: 'b1', action: 'backup', at } },
    ]);
  });

  it('completes it, or fails it with Velero’s reason', () => {
    expect(decide(answered('backup'), 'running')).toEqual([
      { type: 'CompleteBackup', data: { backupId: 'b1', at } },
    ]);
    expect(decide(answered('backup', 'bucket unreachable'), 'running')).toEqual([
      { type: 'FailBackup', data: { backupId: 'b1', at, reason: 'bucket unreachable' } },
    ]);
    expect(decide(answered('backup'), 'completed')).toEqual([]); // a repeat answer
  });

  it('asks again on a sweep for whatever a restart left in flight', () => {
    expect(decide(sweep(), 'pending')).toEqual([
      { type: 'StartBackup', data: { backupId: 'b1', at } },
    ]);
    expect(decide(sweep(), 'running')).toEqual([
      { type: 'AskVelero', data: { backupId: 'b1', action: 'backup', at } },
    ]);
  });

  it('deletes a finished backup past its expiresAt, then marks it expired; not before', () => {
    expect(decide(sweep(at), 'completed')).toEqual([]);
    for (const status of ['completed', 'failed'] as const) {
      expect(decide(sweep(past), status)).toEqual([
        { type: 'AskVelero', data: { backupId: 'b1', action: 'delete', at: past } },
      ]);
      expect(decide(answered('delete', null, past), status)).toEqual([
        { type: 'ExpireBackup', data: { backupId: 'b1', at: past } },
      ]);
    }
    expect(decide(answered('delete', 'denied', past), 'completed')).toEqual([]);
    expect(decide(sweep(past), 'expired')).toEqual([]);
    expect(decide(moved('pending'), 'absent')).toEqual([]);
  });
});
