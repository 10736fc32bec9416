import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CommandContext, DomainError, forbidden, notFound } from '@fleet/kernel';
import { Doc, ReadModelStore } from '@fleet/readmodels/port';
import { CLUSTERS, ClusterDoc, refuseUnlessWorking } from '../clusters';
import { OpenRestoreOperation } from '../operations';
import { Caller, isPrivileged } from '../platform/auth/caller';
import { READ_MODELS } from '../platform/runtime/tokens';
import { BACKUPS, BackupDoc } from './backups.projection';

/**
 * A restore of a completed backup of `clusterId`: onto the same cluster, or by an admin onto
 * another running one. A restore_cluster operation that the restore saga carries out.
 */
@Injectable()
export class RestoresService {
  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(CommandBus) private readonly commands: CommandBus,
  ) {}

  async restore(
    clusterId: string,
    backupId: string,
    target: string | null,
    caller: Caller,
    ctx: CommandContext,
  ): Promise<{ operationId: string }> {
    const onto = target ?? clusterId;
    if (onto !== clusterId && !isPrivileged(caller)) {
      throw forbidden('only an admin restores a backup onto another cluster');
    }
    const backup = await this.readModels.get<BackupDoc & Doc>(BACKUPS, backupId);
    // Another cluster's backup is as unknown here as a missing one.
    if (!backup || backup.clusterId !== clusterId) throw notFound('backup', backupId);
    if (backup.status !== 'completed') {
      throw new DomainError(
        'backup_not_completed',
        `backup ${backupId} is ${backup.status}: only a completed backup can be restored`,
        'conflict',
        { backupId, status: backup.status },
      );
    }
    const cluster = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, onto);
    if (!cluster) throw notFound('cluster', onto);
    refuseUnlessWorking(onto, cluster);
    const reason =
      onto === clusterId ? `restore ${backupId}` : `restore ${backupId} of cluster ${clusterId}`;
    return this.commands.execute(new OpenRestoreOperation(onto, backupId, reason, ctx));
  }
}
