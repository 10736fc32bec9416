import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { Clock, CommandContext, notFound } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { CLUSTERS } from '../clusters';
import { CLOCK, READ_MODELS } from '../platform/runtime/tokens';
import { BackupPolicy, backupPolicyStreamId } from './backup.events';
import { BackupPolicyCommand, backupPolicyAggregate } from './backup-policy.decider';
import { BACKUP_POLICIES, BackupPolicyDoc } from './backup-policies.projection';
import { nextRuns } from './backup-schedule';

export const BACKUP_POLICIES_PROJECTION = 'projection:backup-policies';

export type BackupPolicyView = BackupPolicy & {
  clusterId: string;
  /** The next three scheduled runs (none while disabled). */
  nextRuns: string[];
  updatedBy: string | null;
  updatedAt: string | null;
};

@Injectable()
export class BackupPoliciesService {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async set(
    clusterId: string,
    policy: BackupPolicy,
    ctx: CommandContext,
  ): Promise<BackupPolicyView> {
    if (!(await this.readModels.get(CLUSTERS, clusterId))) throw notFound('cluster', clusterId);
    const data = { clusterId, ...policy, by: ctx.actor.sub, at: ctx.now.toISOString() };
    await this.execute(clusterId, { type: 'SetBackupPolicy', data }, ctx);
    return this.get(clusterId);
  }

  async execute(clusterId: string, command: BackupPolicyCommand, ctx: CommandContext) {
    const result = await this.pipeline.handle(
      backupPolicyAggregate,
      backupPolicyStreamId(clusterId),
      command,
      ctx,
    );
    await this.runner.settle(result.position, [BACKUP_POLICIES_PROJECTION]);
    return result;
  }

  /** The cluster's policy: disabled with no schedule until one is set. */
  async get(clusterId: string): Promise<BackupPolicyView> {
    if (!(await this.readModels.get(CLUSTERS, clusterId))) throw notFound('cluster', clusterId);
    const doc = await this.readModels.get<BackupPolicyDoc & Doc>(BACKUP_POLICIES, clusterId);
    return this.viewOf(clusterId, doc);
  }

  /** The policies of these clusters in one read (the cluster list's `velero`), by cluster id. */
  async viewsOf(clusterIds: readonly string[]): Promise<Map<string, BackupPolicyView>> {
    if (clusterIds.length === 0) return new Map();
    const docs = await findAll<BackupPolicyDoc & Doc>(this.readModels, BACKUP_POLICIES, {
      _id: { $in: [...clusterIds] },
    });
    const byCluster = new Map(docs.map((d) => [d.clusterId, d]));
    return new Map(clusterIds.map((id) => [id, this.viewOf(id, byCluster.get(id) ?? null)]));
  }

  private viewOf(clusterId: string, doc: BackupPolicyDoc | null): BackupPolicyView {
    if (!doc) {
      return {
        clusterId,
        enabled: false,
        schedule: null,
        ttlHours: DEFAULT_POLICY_TTL_HOURS,
        includeNamespaces: null,
        nextRuns: [],
        updatedBy: null,
        updatedAt: null,
      };
    }
    const { enabled, schedule, ttlHours, includeNamespaces, updatedBy, updatedAt } = doc;
    return {
      clusterId,
      enabled,
      schedule,
      ttlHours,
      includeNamespaces,
      nextRuns: enabled && schedule ? nextRuns(schedule, this.clock.now(), 3) : [],
      updatedBy,
      updatedAt,
    };
  }
}

/** How long a backup is kept when no policy says (30 days). */
export const DEFAULT_POLICY_TTL_HOURS = 720;
