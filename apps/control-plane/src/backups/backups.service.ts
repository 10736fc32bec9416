import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { CommandContext, DomainError, notFound, uuidFrom } from '@fleet/kernel';
import { Doc, Page, ReadModelStore } from '@fleet/readmodels/port';
import { CLUSTERS, ClusterDoc } from '../clusters';
import { Config } from '../config/config';
import { CONFIG, READ_MODELS } from '../platform/runtime/tokens';
import { BackupCommand, backupAggregate } from './backup.decider';
import { BackupTrigger, backupStreamId } from './backup.events';
import { backupLocation } from './backup-location';
import { BACKUPS, BackupDoc } from './backups.projection';

export const BACKUPS_PROJECTION = 'projection:backups';

/** Cluster states that take backups (API.md: running, upgrading or degraded). */
const WORKING = ['running', 'upgrading', 'degraded'];
export type BackupView = Omit<BackupDoc, '_id' | '_rev'>;

export type BackupRequest = {
  includeNamespaces: string[] | null;
  snapshotVolumes: boolean;
  ttlHours: number;
  trigger: BackupTrigger;
  slotAt: string | null;
};

/**
 * The tenant whose prefix a cluster's backups lie under: its first owner, who created it (an
 * owner added later does not move the backups), else the fleet's own prefix for a cluster
 * adopted from reports.
 */
export const tenantOf = (cluster: ClusterDoc): string => {
  const members = (cluster as ClusterDoc & { members?: Array<{ sub: string; role: string }> })
    .members;
  return members?.find((m) => m.role === 'owner')?.sub ?? 'fleet';
};

@Injectable()
export class BackupsService {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
  ) {}

  /** A backup of a working cluster, `pending` until its process starts it. */
  /** `backupId`: a scheduled slot's own (from the slot); else it follows the command. */
  async request(
    clusterId: string,
    ask: BackupRequest,
    ctx: CommandContext,
    backupId = uuidFrom('backup', ctx.commandId),
  ): Promise<BackupView> {
    const cluster = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    if (!cluster) throw notFound('cluster', clusterId);
    if (!WORKING.includes(cluster.status)) {
      throw new DomainError(
        'cluster_not_running',
        `cluster ${clusterId} is ${cluster.status}: a backup needs it running`,
        'conflict',
        { clusterId, status: cluster.status },
      );
    }
    const at = ctx.now.toISOString();
    await this.execute(
      backupId,
      {
        type: 'RequestBackup',
        data: {
          backupId,
          clusterId,
          trigger: ask.trigger,
          slotAt: ask.slotAt,
          location: backupLocation(
            this.config.backupBucket,
            tenantOf(cluster),
            clusterId,
            backupId,
          ),
          includeNamespaces: ask.includeNamespaces,
          snapshotVolumes: ask.snapshotVolumes,
          expiresAt: new Date(ctx.now.getTime() + ask.ttlHours * 3_600_000).toISOString(),
          by: ctx.actor.sub,
          at,
        },
      },
      ctx,
    );
    return this.get(backupId);
  }

  async execute(backupId: string, command: BackupCommand, ctx: CommandContext) {
    const result = await this.pipeline.handle(
      backupAggregate,
      backupStreamId(backupId),
      command,
      ctx,
    );
    await this.runner.settle(result.position, [BACKUPS_PROJECTION]);
    return result;
  }

  async get(backupId: string): Promise<BackupView> {
    const doc = await this.readModels.get<BackupDoc & Doc>(BACKUPS, backupId);
    if (!doc) throw notFound('backup', backupId);
    return view(doc);
  }

  async list(clusterId: string, limit: number, cursor: string | null): Promise<Page<BackupView>> {
    const page = await this.readModels.find<BackupDoc & Doc>(
      BACKUPS,
      { clusterId },
      { sort: { requestedAt: -1 }, limit, cursor },
    );
    return { items: page.items.map(view), nextCursor: page.nextCursor };
  }
}

const view = (doc: BackupDoc): BackupView => {
  const { _id: _i, _rev: _r, ...rest } = doc;
  return rest;
};
