import { Command } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';

/**
 * Opens the operation that follows a cluster's create, upgrade or repair. Handled by the
 * operations slice, which sits above this one: the command is declared here (a port), so
 * clusters ask for it without knowing who carries it out.
 */
export class OpenClusterOperation extends Command<{ operationId: string }> {
  constructor(
    readonly clusterId: string,
    readonly operationType: 'create_cluster' | 'upgrade_cluster' | 'repair_cluster',
    readonly reason: string | null,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}
