import { BackupJob, Velero } from './velero.port';

/**
 * Backups in process (VELERO_URL unset): a backup is taken after `delayMs` and kept in
 * `stored` until deleted. Tests tell it to fail the next backup (`failNext`).
 */
export class SimulatedVelero implements Velero {
  readonly stored = new Set<string>();
  private failure: string | null = null;

  constructor(public delayMs = 1000) {}

  failNext(reason = 'simulated backup failure'): void {
    this.failure = reason;
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
