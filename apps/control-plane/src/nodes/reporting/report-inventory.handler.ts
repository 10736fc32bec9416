import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '@fleet/kernel';
import { InventoryService, ReportedNode } from './inventory.service';
import { NodeReport } from '../node.decider';

/**
 * An operator's report of nodes of one cluster (the simulated provisioner's nodes report this
 * way too), through the inventory command path: registered, changed, or nothing at all.
 */
export class ReportInventory extends Command<ReportedNode[]> {
  constructor(
    readonly clusterId: string,
    readonly nodes: readonly NodeReport[],
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

/** The operator endpoint's own path: one instance, so its per-node and per-cluster turns cover every report. */
@CommandHandler(ReportInventory)
export class ReportInventoryHandler implements ICommandHandler<ReportInventory> {
  constructor(@Inject(InventoryService) private readonly inventory: InventoryService) {}

  execute({ clusterId, nodes, ctx }: ReportInventory) {
    return this.inventory.report(clusterId, nodes, ctx);
  }
}
