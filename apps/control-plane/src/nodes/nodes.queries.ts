import { Inject, Injectable } from '@nestjs/common';
import { UnavailableError, notFound } from '@fleet/kernel';
import { Doc, Filter, InvalidCursorError, ReadModelStore } from '@fleet/readmodels/port';
import { validationFailed } from '../platform/errors/error-envelope';
import { READ_MODELS } from '../platform/runtime/tokens';
import { HEARTBEATS } from './heartbeat/heartbeat.module';
import { HeartbeatStore } from './heartbeat/heartbeat.store';
import { NODES, NodeDoc, NodeGpuView } from './nodes.projection';
import { ListNodesQuery, NodeView } from './nodes.dto';

/** The Nodes screen: read models, with heartbeat age computed at read time. */
@Injectable()
export class NodesQueries {
  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(HEARTBEATS) private readonly heartbeats: HeartbeatStore,
  ) {}

  async list(
    query: ListNodesQuery,
    now = Date.now(),
  ): Promise<{ items: NodeView[]; nextCursor: string | null }> {
    const filter: Filter = {};
    if (query.clusterId) filter.clusterId = query.clusterId;
    if (query.poolId) filter.poolId = query.poolId === 'none' ? null : query.poolId;
    if (query.role) filter.role = query.role;
    if (query.status) filter.status = query.status;
    if (query.mode) filter.mode = query.mode;
    try {
      // Sorted on fields that never change for a node, so paging is stable while nodes register.
      const page = await this.readModels.find<NodeDoc & Doc>(NODES, filter, {
        sort: { clusterId: 1, hostname: 1 },
        limit: query.limit ?? 100,
        cursor: query.cursor ?? null,
      });
      return { items: await this.views(page.items, now), nextCursor: page.nextCursor };
    } catch (error) {
      if (error instanceof InvalidCursorError) {
        throw validationFailed([{ field: 'cursor', problems: ['is not a cursor of this query'] }]);
      }
      throw error;
    }
  }

  async get(nodeId: string, now = Date.now()): Promise<NodeView> {
    const doc = await this.readModels.get<NodeDoc & Doc>(NODES, nodeId);
    if (!doc) throw notFound('node', nodeId);
    return (await this.views([doc], now))[0];
  }

  async gpus(nodeId: string): Promise<NodeGpuView[]> {
    const doc = await this.readModels.get<NodeDoc & Doc>(NODES, nodeId);
    if (!doc) throw notFound('node', nodeId);
    return [...doc.gpus, ...(doc.unlisted ?? [])].map((g) => ({
      uuid: g.uuid,
      model: g.model,
      memoryGiB: g.memoryGiB,
      sessionId: g.sessionId,
      owner: g.owner,
    }));
  }

  /**
   * With the heartbeat store out of reach, the nodes are still shown (the Nodes screen was a
   * 503 for the whole outage, and a command's answer must not be one: it says nothing was
   * done), with the last sighting this process recorded, else the node's last recorded
   * change. No report can be recorded meanwhile, so the age shown grows as it truly does.
   */
  private async views(docs: readonly NodeDoc[], now: number): Promise<NodeView[]> {
    const ids = docs.map((d) => d.nodeId);
    const beats = await this.heartbeats.get(ids).catch((error: unknown) => {
      if (error instanceof UnavailableError) return this.heartbeats.recordedHere(ids);
      throw error;
    });
    return docs.map((d, i) => {
      const lastSeen = Math.max(beats[i]?.seenAt ?? 0, Date.parse(d.changedAt));
      return {
        nodeId: d.nodeId,
        clusterId: d.clusterId,
        hostname: d.hostname,
        role: d.role,
        poolId: d.poolId,
        mode: d.mode,
        status: d.status,
        offlineReason: d.offlineReason,
        gpuCount: d.gpuCount,
        runningSessions: d.runningSessions,
        capacity: d.capacity,
        lastSeenAt: new Date(lastSeen).toISOString(),
        heartbeatAgeSec: Math.max(0, Math.floor((now - lastSeen) / 1000)),
        cordon: { desired: d.cordon.desired, observed: d.cordon.observed },
        drain: d.drain,
      };
    });
  }
}
