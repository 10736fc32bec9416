import { Command } from '@nestjs/cqrs';

/**
 * Checks the node pools of a cluster's create before anything is recorded: each as the
 * node-pool create body (plus `size`), names unique. Handled by the pools slice, which owns that
 * body; refused with 400 validation_failed naming `nodePools[i].<field>`.
 */
export class CheckNodePools extends Command<void> {
  constructor(readonly pools: readonly unknown[]) {
    super();
  }
}
