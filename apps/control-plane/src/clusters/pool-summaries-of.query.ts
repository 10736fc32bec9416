import { Query } from '@nestjs/cqrs';

/** A pool as the cluster view lists it (API.md v1.1): `size` is its node count now. */
export type ClusterPoolSummary = {
  poolId: string;
  name: string;
  kind: 'gpu' | 'cpu';
  gpuType: string | null;
  size: number;
};

/**
 * The summaries of these pools, by pool id, in one question for a whole page of clusters.
 * Answered by the pools slice (above this one); a pool its read model does not show yet is
 * left out of the answer.
 */
export class PoolSummariesOf extends Query<ReadonlyMap<string, ClusterPoolSummary>> {
  constructor(readonly poolIds: readonly string[]) {
    super();
  }
}
