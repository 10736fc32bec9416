import { Workflow, assertNever } from '@fleet/kernel';
import { BackupPolicyState } from './backup-policy.decider';
import { dueSlot, nextRuns } from './backup-schedule';

/** What wakes a cluster's schedule: its timer, a policy change, the leader's repair. */
export type BackupScheduleInput = {
  type: 'BackupScheduleDue' | 'BackupPolicyChanged' | 'BackupScheduleRepairDue';
  data: { clusterId: string; at: string };
};

export type BackupScheduleOutput =
  /** Take the slot on the policy's stream, then request its backup (ids from the slot). */
  | { type: 'TakeBackupSlot'; data: { clusterId: string; slotAt: string; at: string } }
  | { type: 'ArmBackupSchedule'; data: { clusterId: string; runAt: string } }
  | { type: 'DisarmBackupSchedule'; data: { clusterId: string } };

/**
 * A cluster's backup schedule: whenever woken, the latest slot due and not yet taken is taken
 * (one, however many passed while the control plane was down), and the timer is armed for the
 * next slot. A disabled or absent policy disarms it. Pure: the slots come from cron-parser.
 */
export const backupScheduleWorkflow: Workflow<
  BackupScheduleInput,
  BackupScheduleOutput,
  BackupPolicyState
> = {
  decide: (input, state) => {
    switch (input.type) {
      case 'BackupScheduleDue':
      case 'BackupPolicyChanged':
      case 'BackupScheduleRepairDue': {
        const { clusterId, at } = input.data;
        if (state.status !== 'set' || !state.policy.enabled || state.policy.schedule === null) {
          return [{ type: 'DisarmBackupSchedule', data: { clusterId } }];
        }
        const { schedule } = state.policy;
        const now = new Date(at);
        const slot = dueSlot(schedule, state.since, state.lastSlotAt, now);
        const [next] = nextRuns(schedule, now, 1);
        return [
          ...(slot
            ? [{ type: 'TakeBackupSlot' as const, data: { clusterId, slotAt: slot, at } }]
            : []),
          { type: 'ArmBackupSchedule', data: { clusterId, runAt: next } },
        ];
      }
      default:
        return assertNever(input.type, 'backup schedule input');
    }
  },
  evolve: (state) => state,
  initialState: () => ({ status: 'none' }),
};
