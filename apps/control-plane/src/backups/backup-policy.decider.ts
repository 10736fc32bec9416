import { Aggregate } from '@fleet/cqrs';
import { Decider, assertNever } from '@fleet/kernel';
import { validationFailed } from '../platform/errors/error-envelope';
import { BackupPolicy, BackupPolicyEvent, backupPolicyCodec } from './backup.events';
import { scheduleProblem } from '../catalog/cron-schedule';

export type BackupPolicyCommand =
  | { type: 'SetBackupPolicy'; data: BackupPolicy & { clusterId: string; by: string; at: string } }
  /** The scheduler takes a due slot for `backupId`; a slot already taken changes nothing. */
  | {
      type: 'TakeBackupSlot';
      data: { clusterId: string; slotAt: string; backupId: string; at: string };
    };

export type BackupPolicyState =
  | { readonly status: 'none' }
  | {
      readonly status: 'set';
      readonly policy: BackupPolicy;
      /** When the schedule took effect: slots before it are not due. */
      readonly since: string;
      readonly lastSlotAt: string | null;
    };

const samePolicy = (a: BackupPolicy, b: BackupPolicy): boolean =>
  a.enabled === b.enabled &&
  a.schedule === b.schedule &&
  a.ttlHours === b.ttlHours &&
  JSON.stringify(a.includeNamespaces) === JSON.stringify(b.includeNamespaces);

const refuse = (field: string, problem: string) =>
  validationFailed([{ field, problems: [problem] }]);

export const decideBackupPolicy = (
  command: BackupPolicyCommand,
  state: BackupPolicyState,
): BackupPolicyEvent[] => {
  switch (command.type) {
    case 'SetBackupPolicy': {
      const { enabled, schedule } = command.data;
      if (enabled && schedule === null) refuseMissingSchedule();
      const problem = schedule === null ? null : scheduleProblem(schedule);
      if (problem) throw refuse('schedule', problem);
      if (state.status === 'set' && samePolicy(state.policy, command.data)) return [];
      return [{ type: 'BackupPolicySet', data: command.data }];
    }
    case 'TakeBackupSlot': {
      if (state.status !== 'set' || !state.policy.enabled) return [];
      const last = state.lastSlotAt === null ? -Infinity : Date.parse(state.lastSlotAt);
      if (Date.parse(command.data.slotAt) <= last) return [];
      return [{ type: 'BackupSlotTaken', data: command.data }];
    }
    default:
      return assertNever(command, 'backup policy command');
  }
};

const refuseMissingSchedule = (): never => {
  throw refuse('schedule', 'is required when enabled is true');
};

export const evolveBackupPolicy = (
  state: BackupPolicyState,
  event: BackupPolicyEvent,
): BackupPolicyState => {
  switch (event.type) {
    case 'BackupPolicySet': {
      const { enabled, schedule, ttlHours, includeNamespaces, at } = event.data;
      const policy = { enabled, schedule, ttlHours, includeNamespaces };
      const scheduleKept =
        state.status === 'set' && state.policy.schedule === schedule && state.policy.enabled;
      return {
        status: 'set',
        policy,
        since: scheduleKept ? state.since : at,
        lastSlotAt: state.status === 'set' ? state.lastSlotAt : null,
      };
    }
    case 'BackupSlotTaken':
      if (state.status !== 'set') return state;
      return { ...state, lastSlotAt: event.data.slotAt };
    default:
      return assertNever(event, 'backup policy event');
  }
};

export const backupPolicyDecider: Decider<
  BackupPolicyCommand,
  BackupPolicyEvent,
  BackupPolicyState
> = {
  decide: decideBackupPolicy,
  evolve: evolveBackupPolicy,
  initialState: () => ({ status: 'none' }),
};

export const backupPolicyAggregate: Aggregate<
  BackupPolicyCommand,
  BackupPolicyEvent,
  BackupPolicyState
> = { name: 'backup policy', decider: backupPolicyDecider, codec: backupPolicyCodec };
