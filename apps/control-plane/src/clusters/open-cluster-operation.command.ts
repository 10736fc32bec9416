import { Command } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';

/**
 * A node pool asked for in a cluster's create: the node-pool create body plus `size` (its
 * first node count), already checked by CheckNodePools. Opaque here: the pools slice owns it.
 */
export type ClusterPoolSpec = Readonly<Record<string, unknown>> & {
  readonly name: string;
  readonly size?: number;
};

/**
 * Opens the operation that carries out a cluster's create, upgrade, repair or delete. Handled
 * by the operations slice, which sits above this one: the command is declared here (a port),
 * so clusters ask for it without knowing who carries it out. `pools`: a create's node pools.
 */
export class OpenClusterOperation extends Command<{ operationId: string }> {
  constructor(
    readonly clusterId: string,
    readonly operationType:
      'create_cluster' | 'upgrade_cluster' | 'repair_cluster' | 'delete_cluster',
    readonly reason: string | null,
    readonly ctx: CommandContext,
    readonly pools: readonly ClusterPoolSpec[] = [],
  ) {
    super();
  }
}
