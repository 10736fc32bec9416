import { BackupJob, Velero } from './velero.port';

/**
 * A Velero controller's HTTP API (VELERO_URL): `POST /v1/backups` with the job, answered 2xx
 * once the backup completed; `DELETE /v1/backups/{backupId}` (2xx or 404: gone). Anything else
 * is a failure naming the status. `Idempotency-Key` is the backup and action.
 */
export class HttpVelero implements Velero {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 30 * 60_000,
  ) {}

  async backUp(job: BackupJob): Promise<void> {
    const res = await this.call('POST', 'v1/backups', job.backupId, 'backup', job);
    if (!res.ok) throw new Error(`velero answered ${res.status} to backup ${job.backupId}`);
  }

  async deleteBackup(job: Pick<BackupJob, 'backupId'>): Promise<void> {
    const res = await this.call('DELETE', `v1/backups/${job.backupId}`, job.backupId, 'delete');
    if (!res.ok && res.status !== 404) {
      throw new Error(`velero answered ${res.status} to deleting backup ${job.backupId}`);
    }
  }

  private call(method: string, path: string, backupId: string, action: string, body?: unknown) {
    const base = this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`;
    return fetch(new URL(path, base), {
      method,
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `${backupId}:${action}`,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
  }
}
