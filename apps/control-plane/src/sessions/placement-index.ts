import { Inject, Injectable } from '@nestjs/common';
import { SubscriptionRunner } from '@fleet/cqrs';
import { EventStore, LogPosition, asLogPosition } from '@fleet/eventstore/port';
import { Doc, ReadModelStore, pagesOf } from '@fleet/readmodels/port';
import { SessionDemand, nodeCodec, NODES, NodeDoc, nodesProjection } from '../nodes';
import { EVENT_STORE, READ_MODELS } from '../platform/runtime/tokens';
import { FitList, NodeFit, fitOf } from './placement';

const PAGE = 1000;
/**
 * For this many pages the index reads every event through the subscription runner (recent ones
 * are in the window its subscribers share: no query, no parsing); further behind, only node
 * events from the store. Counted in pages read, never in positions (they are opaque).
 */
const NEAR_PAGES = 5;
const NODE_STREAM = 'node-';
/** Up to this many changed nodes are fetched one by one, more with one `$in` query per page. */
const FEW = 16;

/**
 * What placement knows of every node, as the Nodes read model shows it: one small `NodeFit`
 * per node, grouped by role and card model, so best fit is one pass over plain objects
 * instead of a filtered, sorted, copied query of the whole fleet per placement.
 *
 * Exactly as fresh as the read model: before answering, it reads the Nodes projection's
 * checkpoint and refetches from the read model the nodes whose streams have events up to it
 * (taken from the log). So it shows what a query of the read model would show at that moment;
 * the node stream's allocation remains the check, as with the query.
 */
@Injectable()
export class PlacementIndex {
  private readonly byNode = new Map<string, NodeFit>();
  /** `gpu:<model>` or `cpu` → its nodes in best-fit order. */
  private readonly byKind = new Map<string, FitList>();
  /** The Nodes projection checkpoint the index reflects; -1 before the first build. */
  /** The Nodes checkpoint the index reflects; null before the first build. */
  private synced: LogPosition | null = null;
  private syncing: Promise<void> | null = null;
  private readonly nodeTypes = nodeCodec.storedTypes();

  constructor(
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(SubscriptionRunner) private readonly runner: SubscriptionRunner,
  ) {}

  /** The best `limit` nodes for the demand (of `poolId` when given), best fit first. */
  async bestFit(demand: SessionDemand, poolId: string | null, limit: number): Promise<NodeFit[]> {
    await this.current();
    const key = demand.kind === 'gpu' ? `gpu:${demand.gpuModel}` : 'cpu';
    return this.byKind.get(key)?.best(demand, poolId, limit) ?? [];
  }

  /** Catches up with the Nodes projection as it is now (concurrent callers share the work). */
  private async current(): Promise<void> {
    const target = asLogPosition(await this.readModels.checkpoint(nodesProjection.name));
    if (this.synced !== null && target < this.synced) this.synced = null; // rebuilt: start over
    while (this.synced === null || this.synced < target) {
      this.syncing ??= this.catchUp().finally(() => (this.syncing = null));
      await this.syncing;
    }
  }

  private async catchUp(): Promise<void> {
    const to = asLogPosition(await this.readModels.checkpoint(nodesProjection.name));
    if (this.synced === null || to < this.synced) return this.build(to);
    const touched = new Set<string>();
    for (let after = this.synced, pages = 0; after < to; pages++) {
      const page =
        pages < NEAR_PAGES
          ? await this.runner.readAll({ after, limit: PAGE })
          : await this.events.readAll({ after, limit: PAGE, types: this.nodeTypes });
      for (const e of page) {
        if (e.position > to) break;
        if (e.streamId.startsWith(NODE_STREAM)) touched.add(e.streamId.slice(NODE_STREAM.length));
      }
      if (page.length < PAGE) break;
      after = page[page.length - 1].position;
    }
    const ids = [...touched];
    if (ids.length <= FEW) {
      // A few documents by id: plain lookups, no query to compile and run.
      const docs = await Promise.all(
        ids.map((id) => this.readModels.get<NodeDoc & Doc>(NODES, id)),
      );
      ids.forEach((id, i) => {
        const doc = docs[i];
        if (doc) this.put(fitOf(doc));
        else this.remove(id);
      });
      this.synced = to;
      return;
    }
    for (let i = 0; i < ids.length; i += PAGE) {
      const chunk = ids.slice(i, i + PAGE);
      const found = await this.readModels.find<NodeDoc & Doc>(
        NODES,
        { _id: { $in: chunk } },
        { limit: chunk.length },
      );
      const present = new Set<string>();
      for (const doc of found.items) {
        present.add(doc.nodeId);
        this.put(fitOf(doc));
      }
      for (const id of chunk) if (!present.has(id)) this.remove(id);
    }
    this.synced = to;
  }

  /** The whole fleet from the read model (first use, or after a rebuild of the read models). */
  private async build(to: LogPosition): Promise<void> {
    this.byNode.clear();
    this.byKind.clear();
    for await (const page of pagesOf<NodeDoc & Doc>(this.readModels, NODES, {}, {})) {
      for (const doc of page) this.put(fitOf(doc));
    }
    this.synced = to;
  }

  private put(fit: NodeFit): void {
    this.remove(fit.nodeId);
    this.byNode.set(fit.nodeId, fit);
    for (const key of this.keysOf(fit)) {
      let nodes = this.byKind.get(key);
      if (!nodes) {
        const model = key.slice('gpu:'.length);
        nodes = new FitList(fit.role === 'gpu' ? (n) => n.freeCards[model] ?? 0 : (n) => n.freeCpu);
        this.byKind.set(key, nodes);
      }
      nodes.put(fit);
    }
  }

  private remove(nodeId: string): void {
    const old = this.byNode.get(nodeId);
    if (!old) return;
    this.byNode.delete(nodeId);
    for (const key of this.keysOf(old)) this.byKind.get(key)?.remove(nodeId);
  }

  private keysOf(fit: NodeFit): string[] {
    return fit.role === 'gpu' ? Object.keys(fit.freeCards).map((m) => `gpu:${m}`) : ['cpu'];
  }
}
