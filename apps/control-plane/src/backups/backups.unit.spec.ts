import { deciderSpec } from '../../../../libs/kernel/testing/decider-spec';
import { backupDecider } from './backup.decider';
import { BackupEvent, BackupPolicyEvent } from './backup.events';
import { backupLocation, tenantPrefix } from './backup-location';
import { backupPolicyDecider } from './backup-policy.decider';

const at = '2026-12-07T03:00:00.000Z';
const later = '2026-12-08T03:00:00.000Z';
const requested: BackupEvent = {
  type: 'BackupRequested',
  data: {
    backupId: 'b1',
    clusterId: 'c1',
    trigger: 'manual',
    slotAt: null,
    location: 's3://backups/t-x/c1/b1',
    includeNamespaces: null,
    snapshotVolumes: true,
    expiresAt: later,
    by: 'alice',
    at,
  },
};
const started: BackupEvent = { type: 'BackupStarted', data: { backupId: 'b1', at } };
const completed: BackupEvent = { type: 'BackupCompleted', data: { backupId: 'b1', at } };
const failed: BackupEvent = {
  type: 'BackupFailed',
  data: { backupId: 'b1', reason: 'velero: bucket unreachable', at },
};

describe('a backup', () => {
  const spec = deciderSpec(backupDecider);

  it('is requested pending once', () => {
    spec.given([]).when({ type: 'RequestBackup', data: requested.data }).then([requested]);
    spec.given([requested]).when({ type: 'RequestBackup', data: requested.data }).thenNothing();
  });

  it('runs from pending, then completes or fails', () => {
    spec
      .given([requested])
      .when({ type: 'StartBackup', data: { backupId: 'b1', at } })
      .then([started]);
    spec
      .given([requested, started])
      .when({ type: 'CompleteBackup', data: { backupId: 'b1', at } })
      .then([completed]);
    spec.given([requested, started]).when({ type: 'FailBackup', data: failed.data }).then([failed]);
    spec.given([requested]).when({ type: 'FailBackup', data: failed.data }).then([failed]);
  });

  it('refuses to complete what never ran and to restart what ended', () => {
    spec
      .given([requested])
      .when({ type: 'CompleteBackup', data: { backupId: 'b1', at } })
      .thenRefuses('invalid_transition', { from: 'pending' });
    spec
      .given([requested, started, completed])
      .when({ type: 'StartBackup', data: { backupId: 'b1', at } })
      .thenRefuses('invalid_transition', { from: 'completed' });
    spec
      .given([requested, started, failed])
      .when({ type: 'CompleteBackup', data: { backupId: 'b1', at } })
      .thenRefuses('invalid_transition', { from: 'failed' });
    spec
      .given([])
      .when({ type: 'StartBackup', data: { backupId: 'b1', at } })
      .thenRefuses('not_found');
  });

  it('expires a finished backup at its expiresAt, not before, and not one still at work', () => {
    const expire = (when: string) => ({
      type: 'ExpireBackup' as const,
      data: { backupId: 'b1', at: when },
    });
    spec.given([requested, started, completed]).when(expire(at)).thenNothing();
    spec
      .given([requested, started, completed])
      .when(expire(later))
      .then([{ type: 'BackupExpired', data: { backupId: 'b1', at: later } }]);
    spec
      .given([requested, started, failed])
      .when(expire(later))
      .then([{ type: 'BackupExpired', data: { backupId: 'b1', at: later } }]);
    spec.given([requested, started]).when(expire(later)).thenNothing();
    spec.given([requested]).when(expire(later)).thenNothing();
    const expired: BackupEvent = { type: 'BackupExpired', data: { backupId: 'b1', at: later } };
    spec.given([requested, started, completed, expired]).when(expire(later)).thenNothing();
  });
});

describe('a backup location', () => {
  it('lies under the owner’s own prefix of the bucket', () => {
    expect(backupLocation('s3://fleet-backups/', 'alice@example.com', 'c1', 'b1')).toBe(
      `s3://fleet-backups/${tenantPrefix('alice@example.com')}/c1/b1`,
    );
    expect(tenantPrefix('alice@example.com')).toMatch(/^t-[0-9a-f]{64}$/);
    expect(backupLocation('s3://fleet-backups//', 'a', 'c1', 'b1')).toBe(
      `s3://fleet-backups/${tenantPrefix('a')}/c1/b1`,
    );
  });

  it('never gives two owners one prefix, whatever their text', () => {
    const owners = [
      'alice',
      'Alice',
      'alice ',
      'a/b',
      'a%2Fb',
      '앨리스',
      'alice@example.com',
      'alice@example.co',
    ];
    expect(new Set(owners.map(tenantPrefix)).size).toBe(owners.length);
  });
});

describe('a backup policy', () => {
  const spec = deciderSpec(backupPolicyDecider);
  const policy = {
    clusterId: 'c1',
    enabled: true,
    schedule: '0 3 * * *',
    ttlHours: 72,
    includeNamespaces: null,
    by: 'bob',
    at,
  };
  const set: BackupPolicyEvent = { type: 'BackupPolicySet', data: policy };
  const take = (slotAt: string) => ({
    type: 'TakeBackupSlot' as const,
    data: { clusterId: 'c1', slotAt, backupId: `b-${slotAt}`, at: slotAt },
  });

  it('is set, and setting the same again changes nothing', () => {
    spec.given([]).when({ type: 'SetBackupPolicy', data: policy }).then([set]);
    spec
      .given([set])
      .when({ type: 'SetBackupPolicy', data: { ...policy, at: later } })
      .thenNothing();
  });

  it('refuses a schedule that is not a five-field cron, naming the field', () => {
    spec
      .given([])
      .when({ type: 'SetBackupPolicy', data: { ...policy, schedule: '0 0 3 * * *' } })
      .thenRefuses('validation_failed', { fields: [{ field: 'schedule' }] });
    spec
      .given([])
      .when({ type: 'SetBackupPolicy', data: { ...policy, schedule: null } })
      .thenRefuses('validation_failed', { fields: [{ field: 'schedule' }] });
  });

  it('takes each slot once, in order, and none while disabled', () => {
    spec
      .given([set])
      .when(take(later))
      .then([{ type: 'BackupSlotTaken', data: take(later).data }]);
    const taken: BackupPolicyEvent = { type: 'BackupSlotTaken', data: take(later).data };
    spec.given([set, taken]).when(take(later)).thenNothing();
    spec.given([set, taken]).when(take(at)).thenNothing();
    const off: BackupPolicyEvent = { type: 'BackupPolicySet', data: { ...policy, enabled: false } };
    spec.given([set, off]).when(take(later)).thenNothing();
    spec.given([]).when(take(later)).thenNothing();
  });

  it('takes any one field changed as a new policy', () => {
    for (const change of [
      { enabled: false },
      { schedule: '0 4 * * *' },
      { ttlHours: 24 },
      { includeNamespaces: ['inference'] },
    ]) {
      const changed = { ...policy, ...change, at: later };
      spec
        .given([set])
        .when({ type: 'SetBackupPolicy', data: changed })
        .then([{ type: 'BackupPolicySet', data: changed }]);
    }
  });

  it('names the problem with a schedule', () => {
    const refused = () =>
      backupPolicyDecider.decide(
        { type: 'SetBackupPolicy', data: { ...policy, schedule: '@daily' } },
        { status: 'none' },
      );
    expect(refused).toThrow(
      expect.objectContaining({
        details: {
          fields: [{ field: 'schedule', problems: [expect.stringMatching(/five-field/)] }],
        },
      }),
    );
  });

  it('keeps when its schedule began while the schedule stays, and starts it again when it changes', () => {
    const again: BackupPolicyEvent = {
      type: 'BackupPolicySet',
      data: { ...policy, ttlHours: 24, at: later },
    };
    expect(spec.given([set, again]).state).toMatchObject({ since: at });
    const moved: BackupPolicyEvent = {
      type: 'BackupPolicySet',
      data: { ...policy, schedule: '0 4 * * *', at: later },
    };
    expect(spec.given([set, moved]).state).toMatchObject({ since: later });
    const off: BackupPolicyEvent = {
      type: 'BackupPolicySet',
      data: { ...policy, enabled: false, at: later },
    };
    const on: BackupPolicyEvent = {
      type: 'BackupPolicySet',
      data: { ...policy, at: '2026-12-09T00:00:00.000Z' },
    };
    expect(spec.given([set, off, on]).state).toMatchObject({ since: '2026-12-09T00:00:00.000Z' });
  });
});
