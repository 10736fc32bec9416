import { EventCodec } from '@fleet/kernel';

export const BACKUP_STATUSES = ['pending', 'running', 'completed', 'failed', 'expired'] as const;
export type BackupStatus = (typeof BACKUP_STATUSES)[number];
export type BackupTrigger = 'schedule' | 'manual';

export const backupStreamId = (backupId: string): string => `backup-${backupId}`;
export const backupPolicyStreamId = (clusterId: string): string => `backup-policy-${clusterId}`;

export type BackupEvent =
  | {
      type: 'BackupRequested';
      data: {
        backupId: string;
        clusterId: string;
        trigger: BackupTrigger;
        /** The schedule's slot a scheduled backup runs for (null: on demand). */
        slotAt: string | null;
        location: string;
        includeNamespaces: string[] | null;
        snapshotVolumes: boolean;
        expiresAt: string;
        by: string;
        at: string;
      };
    }
  | { type: 'BackupStarted'; data: { backupId: string; at: string } }
  | { type: 'BackupCompleted'; data: { backupId: string; at: string } }
  | { type: 'BackupFailed'; data: { backupId: string; reason: string; at: string } }
  /** Past its `expiresAt`: deleted from storage, kept in the log. */
  | { type: 'BackupExpired'; data: { backupId: string; at: string } };

export const backupCodec = new EventCodec<BackupEvent>({
  BackupRequested: 1,
  BackupStarted: 1,
  BackupCompleted: 1,
  BackupFailed: 1,
  BackupExpired: 1,
});

export type BackupPolicy = {
  enabled: boolean;
  schedule: string | null;
  ttlHours: number;
  includeNamespaces: string[] | null;
};

export type BackupPolicyEvent =
  | { type: 'BackupPolicySet'; data: BackupPolicy & { clusterId: string; by: string; at: string } }
  /** A scheduled slot was taken: its backup is `backupId`. A slot is taken once. */
  | {
      type: 'BackupSlotTaken';
      data: { clusterId: string; slotAt: string; backupId: string; at: string };
    };

export const backupPolicyCodec = new EventCodec<BackupPolicyEvent>({
  BackupPolicySet: 1,
  BackupSlotTaken: 1,
});
