/** The backups slice as other slices see it: nothing else of this folder is imported elsewhere. */
export { BACKUP_STATUSES, BackupEvent, backupCodec, backupStreamId } from './backup.events';
export { BACKUPS, BackupDoc } from './backups.projection';
export { VELERO, Velero } from './velero.port';
export { SimulatedVelero } from './simulated-velero';
export { BackupsModule } from './backups.module';
