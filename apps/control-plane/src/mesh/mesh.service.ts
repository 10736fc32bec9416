import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { CommandContext, DomainError, notFound, uuidFrom } from '@fleet/kernel';
import { Doc, Page, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { CLUSTERS, ClusterDoc, refuseUnlessWorking } from '../clusters';
import { validationFailed } from '../platform/errors/error-envelope';
import { READ_MODELS } from '../platform/runtime/tokens';
import { MeshCommand, meshAggregate } from './mesh.decider';
import { ClusterBlocks, MeshLink, meshCidrRefusal, meshGroup } from './mesh-cidr.rule';
import { LIVE_MESH_STATUSES, MESHED_STATUSES, MeshStatus, meshStreamId } from './mesh.events';
import { MESH_REQUESTS, MeshRequestDoc } from './mesh.projection';

export const MESH_PROJECTION = 'projection:mesh-requests';

export type MeshView = Omit<MeshRequestDoc, '_id' | '_rev' | 'clusterIds'>;

type PeopleMove = Extract<
  MeshCommand['type'],
  'ApproveMeshRequest' | 'RejectMeshRequest' | 'CancelMeshRequest' | 'DisconnectMesh'
>;

@Injectable()
export class MeshService {
  constructor(
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
  ) {}

  /** Opens a request `pending` after the checks of API.md: both running, no live pair, CIDRs apart. */
  async open(fromClusterId: string, toClusterId: string, ctx: CommandContext): Promise<MeshView> {
    if (fromClusterId === toClusterId) {
      throw validationFailed([
        { field: 'toClusterId', problems: ['must name another cluster than fromClusterId'] },
      ]);
    }
    const pair = { fromClusterId, toClusterId };
    const links = await this.liveLinks();
    const existing = links.find((l) => samePair(l, pair));
    if (existing) {
      throw new DomainError(
        'mesh_exists',
        `clusters ${fromClusterId} and ${toClusterId} already have mesh request ${existing.meshRequestId} (${existing.status})`,
        'conflict',
        { meshRequestId: existing.meshRequestId, status: existing.status },
      );
    }
    await this.checkCidrs(pair, links);
    const meshRequestId = uuidFrom('mesh', ctx.commandId);
    await this.execute(
      meshRequestId,
      {
        type: 'OpenMeshRequest',
        data: { meshRequestId, ...pair, requestedBy: ctx.actor.sub, at: ctx.now.toISOString() },
      },
      ctx,
    );
    return this.get(meshRequestId);
  }

  /** A person's move; approval checks the CIDR rule again, as the fleet may have changed. */
  async move(
    meshRequestId: string,
    type: PeopleMove,
    reason: string | null,
    ctx: CommandContext,
  ): Promise<MeshView> {
    const request = await this.get(meshRequestId);
    if (type === 'ApproveMeshRequest' && request.status === 'pending') {
      const links = (await this.liveLinks()).filter((l) => l.meshRequestId !== meshRequestId);
      await this.checkCidrs(request, links);
    }
    const data = { meshRequestId, by: ctx.actor.sub, reason, at: ctx.now.toISOString() };
    await this.execute(meshRequestId, { type, data } as MeshCommand, ctx);
    return this.get(meshRequestId);
  }

  async execute(meshRequestId: string, command: MeshCommand, ctx: CommandContext) {
    const result = await this.pipeline.handle(
      meshAggregate,
      meshStreamId(meshRequestId),
      command,
      ctx,
    );
    await this.runner.settle(result.position, [MESH_PROJECTION]);
    return result;
  }

  async get(meshRequestId: string): Promise<MeshView> {
    const doc = await this.readModels.get<MeshRequestDoc & Doc>(MESH_REQUESTS, meshRequestId);
    if (!doc) throw notFound('mesh request', meshRequestId);
    return view(doc);
  }

  /** The clusters `sub` is a member of (a user's mesh list covers those only). */
  async clustersOfMember(sub: string): Promise<string[]> {
    const docs = await findAll<ClusterDoc & Doc>(this.readModels, CLUSTERS, { memberSubs: sub });
    return docs.map((d) => d.clusterId);
  }

  async list(
    filter: { clusterIds?: string[]; status?: MeshStatus },
    limit: number,
    cursor: string | null,
  ): Promise<Page<MeshView>> {
    const query: Record<string, unknown> = {};
    if (filter.clusterIds) query.clusterIds = { $in: filter.clusterIds };
    if (filter.status) query.status = filter.status;
    const page = await this.readModels.find<MeshRequestDoc & Doc>(MESH_REQUESTS, query, {
      sort: { createdAt: -1 },
      limit,
      cursor,
    });
    return { items: page.items.map(view), nextCursor: page.nextCursor };
  }

  /** Every live request: the meshed ones count for the CIDR rule, all for mesh_exists. */
  private async liveLinks(): Promise<
    Array<MeshLink & { meshRequestId: string; status: MeshStatus }>
  > {
    const docs = await findAll<MeshRequestDoc & Doc>(this.readModels, MESH_REQUESTS, {
      status: { $in: LIVE_MESH_STATUSES },
    });
    return docs.map(({ meshRequestId, fromClusterId, toClusterId, status }) => ({
      meshRequestId,
      fromClusterId,
      toClusterId,
      status,
    }));
  }

  private async checkCidrs(
    pair: MeshLink,
    links: ReadonlyArray<MeshLink & { status: MeshStatus }>,
  ): Promise<void> {
    const meshed = links.filter((l) => MESHED_STATUSES.includes(l.status));
    const clusters = new Map<string, ClusterBlocks & Pick<ClusterDoc, 'status'>>();
    for (const clusterId of meshGroup(pair, meshed)) {
      const doc = await this.readModels.get<ClusterDoc & Doc>(CLUSTERS, clusterId);
      if (!doc) throw notFound('cluster', clusterId);
      clusters.set(clusterId, doc);
    }
    for (const clusterId of [pair.fromClusterId, pair.toClusterId]) {
      refuseUnlessWorking(clusterId, clusters.get(clusterId) as ClusterDoc);
    }
    const refusal = meshCidrRefusal(pair, meshed, clusters);
    if (refusal) throw refusal;
  }
}

/** Whether two links join the same two clusters, whichever way round. */
const samePair = (a: MeshLink, b: MeshLink): boolean =>
  (a.fromClusterId === b.fromClusterId && a.toClusterId === b.toClusterId) ||
  (a.fromClusterId === b.toClusterId && a.toClusterId === b.fromClusterId);

const view = (doc: MeshRequestDoc): MeshView => {
  const { _id: _i, _rev: _r, clusterIds: _c, ...rest } = doc;
  return rest;
};
