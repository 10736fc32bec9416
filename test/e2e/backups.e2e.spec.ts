import request from 'supertest';
import { SimulatedVelero, VELERO } from '../../apps/control-plane/src/backups';
import { BackupSaga } from '../../apps/control-plane/src/backups/backup.saga';
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
});
