import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { ClusterPoolSummary, PoolSummariesOf } from '../clusters';
import { NODES } from '../nodes';
import { READ_MODELS } from '../platform/runtime/tokens';
import { NODE_POOLS, PoolDoc } from './pools.projection';

/** Nodes in the pool now (its view's `size`); a deleted pool has none. */
export const poolSize = (readModels: ReadModelStore, doc: PoolDoc): Promise<number> =>
  doc.status === 'deleted' ? Promise.resolve(0) : readModels.count(NODES, { poolId: doc.poolId });

/**
 * The clusters slice's question for its view: its pools' names, kinds and sizes. One read of
 * the pools for the whole page, then each size counted as the pool's own view counts it (in
 * parallel, on the nodes' index by pool).
 */
@QueryHandler(PoolSummariesOf)
export class PoolSummariesOfHandler implements IQueryHandler<PoolSummariesOf> {
  constructor(@Inject(READ_MODELS) private readonly readModels: ReadModelStore) {}

  async execute({ poolIds }: PoolSummariesOf): Promise<Map<string, ClusterPoolSummary>> {
    if (poolIds.length === 0) return new Map();
    const docs = await findAll<PoolDoc & Doc>(this.readModels, NODE_POOLS, {
      // By _id (the pool id): indexed on every store.
      _id: { $in: [...poolIds] },
    });
    const sizes = await Promise.all(docs.map((d) => poolSize(this.readModels, d)));
    return new Map(
      docs.map((d, i) => [
        d.poolId,
        { poolId: d.poolId, name: d.name, kind: d.kind, gpuType: d.gpuType, size: sizes[i] },
      ]),
    );
  }
}
