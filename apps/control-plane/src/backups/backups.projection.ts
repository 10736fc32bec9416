import { Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { assertNever } from '@fleet/kernel';
import { BackupEvent, BackupStatus, BackupTrigger, backupCodec } from './backup.events';

export const BACKUPS = 'backups';

export type BackupDoc = {
  _id: string;
  _rev: number;
  backupId: string;
  clusterId: string;
  trigger: BackupTrigger;
  status: BackupStatus;
  location: string;
  includeNamespaces: string[] | null;
  snapshotVolumes: boolean;
  requestedBy: string;
  requestedAt: string;
  startedAt: string | null;
  completedAt: string | null;
  expiresAt: string;
  /** Why it failed (Velero's reason), else null. */
  error: string | null;
};

export const projectBackup = (
  doc: BackupDoc | null,
  event: BackupEvent,
  revision: number,
): BackupDoc | null => {
  if (event.type === 'BackupRequested') {
    const { slotAt: _s, by, at, ...d } = event.data;
    return {
      _id: d.backupId,
      _rev: revision,
      ...d,
      status: 'pending',
      requestedBy: by,
      requestedAt: at,
      startedAt: null,
      completedAt: null,
      error: null,
    };
  }
  if (!doc) return null;
  const next = { ...doc, _rev: revision };
  switch (event.type) {
    case 'BackupStarted':
      return { ...next, status: 'running', startedAt: event.data.at };
    case 'BackupCompleted':
      return { ...next, status: 'completed', completedAt: event.data.at };
    case 'BackupFailed':
      return { ...next, status: 'failed', completedAt: event.data.at, error: event.data.reason };
    case 'BackupExpired':
      return { ...next, status: 'expired' };
    default:
      return assertNever(event, 'backup event');
  }
};

export const backupsProjection: Projection = {
  name: 'backups',
  collections: [
    {
      name: BACKUPS,
      // A cluster's backups newest first; the sweep's pending, running and finished ones.
      indexes: [
        { clusterId: 1, requestedAt: -1, _id: 1 },
        { status: 1, expiresAt: 1, _id: 1 },
      ],
    },
  ],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('backup-') || stored.streamId.startsWith('backup-policy-')) {
      return;
    }
    const event = backupCodec.decode(stored.type, stored.data);
    if (!event) return;
    const id = stored.streamId.slice('backup-'.length);
    const doc = await writer.get<BackupDoc>(BACKUPS, id);
    if (doc && stored.revision <= doc._rev) return;
    const next = projectBackup(doc, event, stored.revision);
    if (next) writer.upsert(BACKUPS, next);
  },
};
