import { BackupJob, RestoreJob, Velero } from './velero.port';

/**
 * Backups in process (VELERO_URL unset): a backup is taken after `delayMs` and kept in
 * `stored` until deleted. Tests tell it to fail the next backup (`failNext`).
 */
export class SimulatedVelero implements Velero {
  readonly stored = new Set<string>();
  private failure: string | null = null;
  private restoreFailure: string | null = null;
  /** Restores made: `<backupId> → <clusterId>`. */
  readonly restored: string[] = [];

  constructor(public delayMs = 1000) {}

  failNext(reason = 'simulated backup failure'): void {
    this.failure = reason;
  }

  failNextRestore(reason = 'simulated restore failure'): void {
    this.restoreFailure = reason;
  }

  async restore(job: RestoreJob): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.delayMs).unref());
    if (this.restoreFailure !== null) {
      const reason = this.restoreFailure;
      this.restoreFailure = null;
      throw new Error(reason);
    }
    if (!this.stored.has(job.location)) throw new Error(`backup ${job.backupId} is not stored`);
    const made = `${job.backupId} → ${job.clusterId}`;
    if (!this.restored.includes(made)) this.restored.push(made);
  }

  async backUp(job: BackupJob): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.delayMs).unref());
    if (this.failure !== null) {
      const reason = this.failure;
      this.failure = null;
      throw new Error(reason);
    }
    this.stored.add(job.location);
  }

  async deleteBackup(job: Pick<BackupJob, 'location'>): Promise<void> {
    this.stored.delete(job.location);
  }
}
