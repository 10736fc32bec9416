import { BackupPolicyState } from './backup-policy.decider';
import { BackupScheduleInput, backupScheduleWorkflow } from './backup-schedule.workflow';

const policy = (
  over: Partial<Extract<BackupPolicyState, { status: 'set' }>> = {},
): BackupPolicyState => ({
  status: 'set',
  policy: { enabled: true, schedule: '0 3 * * *', ttlHours: 72, includeNamespaces: null },
  since: '2026-12-01T00:00:00.000Z',
  lastSlotAt: '2026-12-06T03:00:00.000Z',
  ...over,
});
const due = (at: string): BackupScheduleInput => ({
  type: 'BackupScheduleDue',
  data: { clusterId: 'c1', at },
});
const decide = (input: BackupScheduleInput, state: BackupPolicyState) =>
  backupScheduleWorkflow.decide(input, state);

describe('a cluster’s backup schedule', () => {
  it('takes the slot due and arms the next one', () => {
    const at = '2026-12-07T03:00:00.500Z';
    expect(decide(due(at), policy())).toEqual([
      { type: 'TakeBackupSlot', data: { clusterId: 'c1', slotAt: '2026-12-07T03:00:00.000Z', at } },
      { type: 'ArmBackupSchedule', data: { clusterId: 'c1', runAt: '2026-12-08T03:00:00.000Z' } },
    ]);
  });

  it('only arms when the slot due was taken already (a timer that fired twice)', () => {
    const at = '2026-12-07T03:00:01.000Z';
    expect(decide(due(at), policy({ lastSlotAt: '2026-12-07T03:00:00.000Z' }))).toEqual([
      { type: 'ArmBackupSchedule', data: { clusterId: 'c1', runAt: '2026-12-08T03:00:00.000Z' } },
    ]);
  });

  it('runs once, not once per slot, after days down', () => {
    const at = '2026-12-10T09:00:00.000Z';
    const outputs = decide(
      { type: 'BackupScheduleRepairDue', data: { clusterId: 'c1', at } },
      policy(),
    );
    expect(outputs.filter((o) => o.type === 'TakeBackupSlot')).toEqual([
      { type: 'TakeBackupSlot', data: { clusterId: 'c1', slotAt: '2026-12-10T03:00:00.000Z', at } },
    ]);
  });

  it('takes no slot from before the policy was set', () => {
    const at = '2026-12-07T04:00:00.000Z';
    const fresh = policy({ since: '2026-12-07T03:30:00.000Z', lastSlotAt: null });
    expect(decide({ type: 'BackupPolicyChanged', data: { clusterId: 'c1', at } }, fresh)).toEqual([
      { type: 'ArmBackupSchedule', data: { clusterId: 'c1', runAt: '2026-12-08T03:00:00.000Z' } },
    ]);
  });

  it('disarms a disabled or absent policy', () => {
    const off = policy({
      policy: { enabled: false, schedule: '0 3 * * *', ttlHours: 72, includeNamespaces: null },
    });
    expect(decide(due('2026-12-07T03:00:00.000Z'), off)).toEqual([
      { type: 'DisarmBackupSchedule', data: { clusterId: 'c1' } },
    ]);
    expect(decide(due('2026-12-07T03:00:00.000Z'), { status: 'none' })).toEqual([
      { type: 'DisarmBackupSchedule', data: { clusterId: 'c1' } },
    ]);
  });
});
