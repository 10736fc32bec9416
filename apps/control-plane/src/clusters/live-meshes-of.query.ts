import { Query } from '@nestjs/cqrs';

/**
 * How many Cluster Mesh requests of a cluster are still live (pending to connected, or on
 * their way out): a cluster's deletion waits for none. Answered by the mesh slice, which
 * cancels or disconnects them once the cluster is `deleting`.
 */
export class LiveMeshesOf extends Query<number> {
  constructor(readonly clusterId: string) {
    super();
  }
}
