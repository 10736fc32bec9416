import { Projection } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { BackupPolicy, backupPolicyCodec } from './backup.events';
import { BackupPolicyState, evolveBackupPolicy } from './backup-policy.decider';

export const BACKUP_POLICIES = 'backup_policies';

export type BackupPolicyDoc = BackupPolicy & {
  _id: string;
  _rev: number;
  clusterId: string;
  since: string;
  lastSlotAt: string | null;
  updatedBy: string;
  updatedAt: string;
};

/** Each cluster's policy as its decider folds it, with who set it last. */
export const backupPoliciesProjection: Projection = {
  name: 'backup-policies',
  collections: [{ name: BACKUP_POLICIES, indexes: [{ enabled: 1, _id: 1 }] }],
  async apply(stored: StoredEvent, writer) {
    if (!stored.streamId.startsWith('backup-policy-')) return;
    const event = backupPolicyCodec.decode(stored.type, stored.data);
    if (!event) return;
    const clusterId = event.data.clusterId;
    const doc = await writer.get<BackupPolicyDoc>(BACKUP_POLICIES, clusterId);
    if (doc && stored.revision <= doc._rev) return;
    const state: BackupPolicyState = doc
      ? { status: 'set', policy: doc, since: doc.since, lastSlotAt: doc.lastSlotAt }
      : { status: 'none' };
    const next = evolveBackupPolicy(state, event);
    if (next.status !== 'set') return;
    const by = event.type === 'BackupPolicySet' ? event.data : null;
    writer.upsert(BACKUP_POLICIES, {
      _id: clusterId,
      _rev: stored.revision,
      clusterId,
      enabled: next.policy.enabled,
      schedule: next.policy.schedule,
      ttlHours: next.policy.ttlHours,
      includeNamespaces: next.policy.includeNamespaces,
      since: next.since,
      lastSlotAt: next.lastSlotAt,
      updatedBy: by?.by ?? doc?.updatedBy ?? 'system',
      updatedAt: by?.at ?? doc?.updatedAt ?? event.data.at,
    });
  },
};
