import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ReportInventory } from '../nodes.messages';
import { InventoryService, ReportedNode } from './inventory.service';

/** The operator endpoint's path: one instance, so its per-node and per-cluster turns cover every report. */
@CommandHandler(ReportInventory)
export class ReportInventoryHandler implements ICommandHandler<ReportInventory> {
  constructor(@Inject(InventoryService) private readonly inventory: InventoryService) {}

  execute({ clusterId, reports, ctx }: ReportInventory): Promise<ReportedNode[]> {
    return this.inventory.report(clusterId, reports, ctx);
  }
}
