import { Aggregate } from '@fleet/cqrs';
import { Decider, assertNever, invalidTransition, notFound } from '@fleet/kernel';
import { BackupEvent, BackupStatus, backupCodec } from './backup.events';

type Requested = Extract<BackupEvent, { type: 'BackupRequested' }>['data'];

export type BackupCommand =
  | { type: 'RequestBackup'; data: Requested }
  | { type: 'StartBackup'; data: { backupId: string; at: string } }
  | { type: 'CompleteBackup'; data: { backupId: string; at: string } }
  | { type: 'FailBackup'; data: { backupId: string; reason: string; at: string } }
  | { type: 'ExpireBackup'; data: { backupId: string; at: string } };

export type BackupState =
  | { readonly status: 'absent' }
  | {
      readonly status: BackupStatus;
      readonly backupId: string;
      readonly clusterId: string;
      readonly expiresAt: string;
      readonly location: string;
    };

type Existing = Exclude<BackupState, { status: 'absent' }>;

const existing = (state: BackupState, id: string): Existing => {
  if (state.status === 'absent') throw notFound('backup', id);
  return state;
};

/** A move from `from` to `to`: a repeat is nothing, another start is refused. */
const step = (
  state: BackupState,
  id: string,
  from: readonly BackupStatus[],
  to: BackupStatus,
  event: BackupEvent,
): BackupEvent[] => {
  const backup = existing(state, id);
  if (backup.status === to) return [];
  if (!from.includes(backup.status)) {
    throw invalidTransition('backup', backup.status, `become ${to}`);
  }
  return [event];
};

export const decideBackup = (command: BackupCommand, state: BackupState): BackupEvent[] => {
  const id = command.data.backupId;
  switch (command.type) {
    case 'RequestBackup':
      if (state.status !== 'absent') return [];
      return [{ type: 'BackupRequested', data: command.data }];
    case 'StartBackup':
      return step(state, id, ['pending'], 'running', { type: 'BackupStarted', data: command.data });
    case 'CompleteBackup':
      return step(state, id, ['running'], 'completed', {
        type: 'BackupCompleted',
        data: command.data,
      });
    case 'FailBackup':
      return step(state, id, ['pending', 'running'], 'failed', {
        type: 'BackupFailed',
        data: command.data,
      });
    case 'ExpireBackup': {
      const backup = existing(state, id);
      // Only a finished backup expires, and not before its time (a stale timer changes nothing).
      if (backup.status === 'pending' || backup.status === 'running') return [];
      if (Date.parse(command.data.at) < Date.parse(backup.expiresAt)) return [];
      return step(state, id, ['completed', 'failed'], 'expired', {
        type: 'BackupExpired',
        data: command.data,
      });
    }
    default:
      return assertNever(command, 'backup command');
  }
};

export const evolveBackup = (state: BackupState, event: BackupEvent): BackupState => {
  switch (event.type) {
    case 'BackupRequested': {
      const { backupId, clusterId, expiresAt, location } = event.data;
      return { status: 'pending', backupId, clusterId, expiresAt, location };
    }
    case 'BackupStarted':
      return { ...existing(state, event.data.backupId), status: 'running' };
    case 'BackupCompleted':
      return { ...existing(state, event.data.backupId), status: 'completed' };
    case 'BackupFailed':
      return { ...existing(state, event.data.backupId), status: 'failed' };
    case 'BackupExpired':
      return { ...existing(state, event.data.backupId), status: 'expired' };
    default:
      return assertNever(event, 'backup event');
  }
};

export const backupDecider: Decider<BackupCommand, BackupEvent, BackupState> = {
  decide: decideBackup,
  evolve: evolveBackup,
  initialState: () => ({ status: 'absent' }),
};

export const backupAggregate: Aggregate<BackupCommand, BackupEvent, BackupState> = {
  name: 'backup',
  decider: backupDecider,
  codec: backupCodec,
};
