import request from 'supertest';
import { SimulatedVelero, VELERO } from '../../apps/control-plane/src/backups';
import { BackupSaga } from '../../apps/control-plane/src/backups/backup.saga';
import { BackupScheduleSaga } from '../../apps/control-plane/src/backups/backup-schedule.saga';
import { DELAYED_JOBS } from '../../apps/control-plane/src/platform/runtime/tokens';
import { startApp, TestApp } from '../support/app';
import { runningCluster } from '../support/clusters';
import { eventually } from '../support/reports';

describe('Velero backups over HTTP', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let auditor: Record<string, string>;
  let velero: SimulatedVelero;
  let clusterId: string;
  beforeAll(async () => {
    t = await startApp({ BACKUP_BUCKET: 's3://tenant-backups/prod' });
    admin = await t.auth('root', ['admin']);
    auditor = await t.auth('audit', ['auditor']);
    velero = t.app.get<SimulatedVelero>(VELERO);
    velero.delayMs = 100;
    clusterId = await runningCluster(t.url, admin, {
      name: 'backed-up',
      podCidr: '10.21.0.0/16',
      serviceCidr: '10.121.0.0/16',
    });
  });
  afterAll(async () => t.close());

  const backUp = (body: object = {}, id = clusterId) =>
    request(t.url).post(`/v1/clusters/${id}/backups`).set(admin).send(body);
  const settled = (backupId: string, status: string) =>
    eventually(async () => {
      const list = (await request(t.url).get(`/v1/clusters/${clusterId}/backups`).set(auditor))
        .body;
      const found = list.items.find((b: { backupId: string }) => b.backupId === backupId);
      return found?.status === status ? found : null;
    });

  it('takes an on-demand backup from pending to completed, under the tenant’s prefix', async () => {
    const res = await backUp({ includeNamespaces: ['inference'] });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      clusterId,
      trigger: 'manual',
      status: 'pending',
      startedAt: null,
      completedAt: null,
      includeNamespaces: ['inference'],
      snapshotVolumes: true,
    });
    const { backupId, location } = res.body;
    const owner = (await request(t.url).get(`/v1/clusters/${clusterId}`).set(admin)).body;
    expect(location).toMatch(
      new RegExp(`^s3://tenant-backups/prod/t-[0-9a-f]{64}/${clusterId}/${backupId}$`),
    );
    expect(owner.clusterId).toBe(clusterId);
    const done = await settled(backupId, 'completed');
    expect(done.startedAt).not.toBeNull();
    expect(done.completedAt).not.toBeNull();
    expect(velero.stored.has(location)).toBe(true);
    expect(Date.parse(done.expiresAt) - Date.parse(done.requestedAt)).toBe(720 * 3_600_000);
  });

  it('ends a backup Velero could not take in failed, with its reason', async () => {
    velero.failNext('bucket unreachable');
    const { backupId } = (await backUp()).body;
    const failed = await settled(backupId, 'failed');
    expect(failed.error).toBe('bucket unreachable');
  });

  it('refuses bad bodies and unknown clusters, appending nothing', async () => {
    const before = (await request(t.url).get('/v1/events?limit=1000').set(auditor)).body.events
      .length;
    for (const body of [
      { includeNamespaces: ['Not_A_Namespace'] },
      { snapshotVolumes: 'yes' },
      { extra: 1 },
    ]) {
      const res = await backUp(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    expect((await backUp({}, 'nowhere')).status).toBe(404);
    expect((await backUp({}, 'Bad_Id')).status).toBe(400);
    const after = (await request(t.url).get('/v1/events?limit=1000').set(auditor)).body.events
      .length;
    expect(after).toBe(before);
  });

  it('expires a finished backup past its ttl: deleted from storage, kept in the list', async () => {
    const { backupId, location, expiresAt } = (await backUp()).body;
    await settled(backupId, 'completed');
    const saga = t.app.get(BackupSaga);
    await saga.sweep(new Date(Date.parse(expiresAt) - 60_000)); // not yet
    expect(velero.stored.has(location)).toBe(true);
    await saga.sweep(new Date(Date.parse(expiresAt) + 1));
    await settled(backupId, 'expired');
    expect(velero.stored.has(location)).toBe(false);
  });

  describe('restores', () => {
    const restore = (body: object, who = admin, id = clusterId) =>
      request(t.url).post(`/v1/clusters/${id}/restores`).set(who).send(body);
    const finished = (operationId: string) =>
      eventually(async () => {
        const op = (await request(t.url).get(`/v1/operations/${operationId}`).set(admin)).body;
        return ['succeeded', 'failed', 'timeout'].includes(op.status) ? op : null;
      });
    const completedBackup = async () => {
      const { backupId } = (await backUp()).body;
      await settled(backupId, 'completed');
      return backupId as string;
    };

    it('restores a completed backup onto its cluster as a restore_cluster operation', async () => {
      const backupId = await completedBackup();
      const res = await restore({ backupId });
      expect(res.status).toBe(202);
      const op = await finished(res.body.operationId);
      expect(op).toMatchObject({ type: 'restore_cluster', status: 'succeeded', error: null });
      expect(op.steps).toEqual([expect.objectContaining({ name: 'restore', status: 'succeeded' })]);
      expect(velero.restored).toContain(`${backupId} → ${clusterId}`);
    });

    it('refuses a second restore of the cluster while one runs, and ends a failed one with Velero’s error', async () => {
      const backupId = await completedBackup();
      velero.delayMs = 800;
      velero.failNextRestore('restic repository locked');
      const first = await restore({ backupId });
      expect(first.status).toBe(202);
      const second = await restore({ backupId });
      expect(second.status).toBe(409);
      expect(second.body.error).toMatchObject({
        code: 'operation_in_progress',
        details: { clusterId, operationId: first.body.operationId },
      });
      const op = await finished(first.body.operationId);
      velero.delayMs = 100;
      expect(op).toMatchObject({ status: 'failed', error: 'restic repository locked' });
    });

    it('refuses a backup that is not completed, of another cluster, or unknown', async () => {
      velero.failNext('bucket unreachable');
      const { backupId: failed } = (await backUp()).body;
      await settled(failed, 'failed');
      const notDone = await restore({ backupId: failed });
      expect([notDone.status, notDone.body.error.code]).toEqual([409, 'backup_not_completed']);
      const other = await runningCluster(t.url, admin, {
        name: 'restore-target',
        podCidr: '10.23.0.0/16',
        serviceCidr: '10.123.0.0/16',
      });
      const backupId = await completedBackup();
      expect((await restore({ backupId }, admin, other)).status).toBe(404);
      expect((await restore({ backupId: '00000000-0000-4000-8000-000000000000' })).status).toBe(
        404,
      );
      expect((await restore({ backupId: 'nope' })).status).toBe(400);
    });

    it('lets an admin restore onto another running cluster, and nobody else', async () => {
      const backupId = await completedBackup();
      const other = await runningCluster(t.url, admin, {
        name: 'restore-onto',
        podCidr: '10.24.0.0/16',
        serviceCidr: '10.124.0.0/16',
      });
      const res = await restore({ backupId, targetClusterId: other });
      expect(res.status).toBe(202);
      const op = await finished(res.body.operationId);
      expect(op).toMatchObject({ status: 'succeeded', clusterId: other });
      expect(velero.restored).toContain(`${backupId} → ${other}`);
      // An owner who is no admin restores onto its own cluster only; an editor not at all.
      const bob = await t.auth('bob', ['user']);
      await request(t.url)
        .put(`/v1/clusters/${clusterId}/members/bob`)
        .set(admin)
        .send({ role: 'owner' })
        .expect(200);
      const elsewhere = await restore({ backupId, targetClusterId: other }, bob);
      expect([elsewhere.status, elsewhere.body.error.code]).toEqual([403, 'forbidden']);
      await request(t.url)
        .put(`/v1/clusters/${clusterId}/members/bob`)
        .set(admin)
        .send({ role: 'editor' })
        .expect(200);
      expect((await restore({ backupId }, bob)).status).toBe(403);
    });
  });

  describe('the backup policy and its schedule', () => {
    const put = (body: object, id = clusterId) =>
      request(t.url).put(`/v1/clusters/${id}/backup-policy`).set(admin).send(body);

    it('is disabled until set; a set policy shows its next runs and arms its timer', async () => {
      const none = await request(t.url).get(`/v1/clusters/${clusterId}/backup-policy`).set(auditor);
      expect(none.body).toMatchObject({ enabled: false, schedule: null, nextRuns: [] });
      const res = await put({ enabled: true, schedule: '0 3 * * *', ttlHours: 168 });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        clusterId,
        enabled: true,
        schedule: '0 3 * * *',
        ttlHours: 168,
        updatedBy: 'root',
      });
      expect(res.body.nextRuns).toHaveLength(3);
      for (const run of res.body.nextRuns) expect(run).toMatch(/T03:00:00\.000Z$/);
      const jobs = t.app.get<{ liveJobIds(q: string): Promise<Set<string>> }>(DELAYED_JOBS);
      await eventually(async () => (await jobs.liveJobIds('backup-schedule')).has(clusterId));
      // An on-demand backup now keeps the policy's retention.
      const manual = (await backUp()).body;
      expect(Date.parse(manual.expiresAt) - Date.parse(manual.requestedAt)).toBe(168 * 3_600_000);
    });

    it('refuses a schedule that is not a five-field cron, naming the field, and keeps the policy', async () => {
      for (const schedule of ['0 0 3 * * *', '@daily', '61 3 * * *']) {
        const res = await put({ enabled: true, schedule, ttlHours: 24 });
        expect(res.status).toBe(400);
        expect(res.body.error.details.fields[0].field).toBe('schedule');
      }
      expect((await put({ enabled: true, ttlHours: 24 })).status).toBe(400);
      expect((await put({ enabled: true, schedule: '0 3 * * *', ttlHours: 0 })).status).toBe(400);
      const kept = (await request(t.url).get(`/v1/clusters/${clusterId}/backup-policy`).set(admin))
        .body;
      expect(kept.ttlHours).toBe(168);
    });

    it('runs a schedule missed while the control plane was down once when it is back', async () => {
      const yearly = await runningCluster(t.url, admin, {
        name: 'yearly',
        podCidr: '10.22.0.0/16',
        serviceCidr: '10.122.0.0/16',
      });
      await put({ enabled: true, schedule: '0 3 1 1 *', ttlHours: 24 }, yearly);
      const dataDir = t.config.dataDir;
      await t.close();
      t = await startApp({ BACKUP_BUCKET: 's3://tenant-backups/prod' }, { dataDir });
      velero = t.app.get<SimulatedVelero>(VELERO);
      velero.delayMs = 100;
      const schedule = t.app.get(BackupScheduleSaga);
      // Back on 2027-01-05: the slots of 2027-01-01 (and any before) run once, as one backup.
      const back = new Date('2027-01-05T09:00:00Z');
      await schedule.repair(back);
      await schedule.repair(back);
      const scheduled = await eventually(async () => {
        const items = (await request(t.url).get(`/v1/clusters/${yearly}/backups`).set(admin)).body
          .items;
        return items.length > 0 && items.every((b: { status: string }) => b.status === 'completed')
          ? items
          : null;
      });
      expect(scheduled).toHaveLength(1);
      expect(scheduled[0]).toMatchObject({ trigger: 'schedule', clusterId: yearly });
    });
  });
});
