/** A backup as the Velero controller needs it. */
export type BackupJob = {
  readonly backupId: string;
  readonly clusterId: string;
  readonly location: string;
  readonly includeNamespaces: readonly string[] | null;
  readonly snapshotVolumes: boolean;
};

/**
 * Backs clusters up and deletes backups (Velero). Each call resolves once done, throws with the
 * controller's reason when it could not, and is idempotent per backup: asked again after a
 * restart, it finishes what it started (a backup already taken is not taken twice).
 */
export interface Velero {
  backUp(job: BackupJob): Promise<void>;
  deleteBackup(job: Pick<BackupJob, 'backupId' | 'clusterId' | 'location'>): Promise<void>;
}

export const VELERO = Symbol('VELERO');
