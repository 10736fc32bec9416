import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { CommandContext, DomainError, notFound, uuidFrom } from '@fleet/kernel';
import { Doc, Filter, InvalidCursorError, ReadModelStore } from '@fleet/readmodels/port';
import { Caller, hasRole } from '../../platform/auth/caller';
import { ClusterRole } from '../../platform/auth/cluster-access';
import { validationFailed } from '../../platform/errors/error-envelope';
import { READ_MODELS } from '../../platform/runtime/tokens';
import { CLUSTER_STATUSES, clusterStreamId } from '../cluster.events';
import { CLUSTERS, ClusterDoc } from '../clusters.projection';
import { CLUSTERS_PROJECTION } from '../clusters.service';
import { ClusterViews } from '../cluster-views';
import { membershipAggregate, MembershipCommand } from './membership.decider';
import { MemberDoc, roleOn } from './members.projection';

/** `deleted` arrives with the lifecycle; a list without `status` leaves deleted clusters out. */
const DELETED = 'deleted';
const LIVE_STATUSES = CLUSTER_STATUSES.filter((s) => (s as string) !== DELETED);
export const LIST_STATUSES: readonly string[] = [...LIVE_STATUSES, DELETED];

export type ClusterListQuery = { status?: string; limit?: number; cursor?: string };

/**
 * A cluster's members and who sees which cluster. Every change waits for the clusters
 * projection to show it: the role guard reads that document, so a change holds from the
 * caller's next request.
 */
@Injectable()
export class MembersService {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(ClusterViews) private readonly views: ClusterViews,
  ) {}

  /**
   * The creator's owner membership, in the create request itself: the creator reads its
   * cluster in the very next request. A command of its own id (the create's events keep
   * theirs), so a replayed create adds nobody twice.
   */
  async addFirstOwner(clusterId: string, owner: string, ctx: CommandContext): Promise<void> {
    const own = { ...ctx, commandId: uuidFrom(ctx.commandId, 'first-owner') };
    await this.execute(
      clusterId,
      {
        type: 'PutMember',
        data: {
          clusterId,
          sub: owner,
          role: 'owner',
          by: ctx.actor.sub,
          at: ctx.now.toISOString(),
        },
      },
      own,
    );
  }

  async put(
    clusterId: string,
    sub: string,
    role: ClusterRole,
    ctx: CommandContext,
  ): Promise<MemberDoc> {
    await this.cluster(clusterId);
    const at = ctx.now.toISOString();
    await this.execute(
      clusterId,
      { type: 'PutMember', data: { clusterId, sub, role, by: ctx.actor.sub, at } },
      ctx,
    );
    const member = (await this.cluster(clusterId)).members?.find((m) => m.sub === sub);
    if (!member) throw new Error(`member ${sub} of ${clusterId} not projected after its change`);
    return member;
  }

  async remove(clusterId: string, sub: string, ctx: CommandContext): Promise<void> {
    await this.cluster(clusterId);
    await this.execute(
      clusterId,
      {
        type: 'RemoveMember',
        data: { clusterId, sub, by: ctx.actor.sub, at: ctx.now.toISOString() },
      },
      ctx,
    );
  }

  async list(clusterId: string): Promise<{ items: MemberDoc[] }> {
    return { items: (await this.cluster(clusterId)).members ?? [] };
  }

  /** The guard's question: `sub`'s role on the cluster, null for none or no such cluster. */
  async roleOf(sub: string, clusterId: string): Promise<ClusterRole | null> {
    return roleOn(await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId), sub);
  }

  /** A member sees its clusters, admin and auditor all; `myRole` says the caller's role. */
  async clustersOf(caller: Caller, query: ClusterListQuery) {
    const filter: Filter = {
      status: query.status ?? { $in: LIVE_STATUSES },
    };
    if (!hasRole(caller, ['admin', 'auditor'])) filter.memberSubs = caller.sub;
    try {
      const page = await this.readModels.find<ClusterDoc & Doc>(CLUSTERS, filter, {
        sort: { createdAt: 1 },
        limit: query.limit ?? 100,
        cursor: query.cursor ?? null,
      });
      return {
        items: await this.views.of(page.items, caller.sub),
        nextCursor: page.nextCursor,
      };
    } catch (error) {
      if (error instanceof InvalidCursorError) {
        throw validationFailed([{ field: 'cursor', problems: ['is not a cursor of this query'] }]);
      }
      throw error;
    }
  }

  private async cluster(clusterId: string): Promise<ClusterDoc> {
    const doc = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
    if (!doc) throw notFound('cluster', clusterId);
    return doc;
  }

  private async execute(clusterId: string, command: MembershipCommand, ctx: CommandContext) {
    const result = await this.pipeline.handle(
      membershipAggregate,
      clusterStreamId(clusterId),
      command,
      ctx,
    );
    await this.runner.settle(result.position, [CLUSTERS_PROJECTION]);
    return result;
  }
}

/** A user names only itself as a new cluster's owner (403 otherwise); an admin anyone. */
export const firstOwner = (caller: Caller, named: string | undefined): string => {
  const owner = named ?? caller.sub;
  if (owner !== caller.sub && !hasRole(caller, ['admin'])) {
    throw new DomainError(
      'forbidden',
      'only an admin may name another owner of a new cluster',
      'forbidden',
      {
        field: 'owner',
      },
    );
  }
  return owner;
};
