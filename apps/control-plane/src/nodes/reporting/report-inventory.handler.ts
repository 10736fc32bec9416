import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandContext } from '../../../../../libs/kernel/src';
import { NodeReport } from '../node.decider';
import { InventoryService, ReportedNode } from './inventory.service';

/**
 * The operator's inventory controller reports nodes of one cluster: each node is upserted by
 * (cluster, hostname); a report that changes nothing only refreshes the nodes' heartbeats.
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

@CommandHandler(ReportInventory)
export class ReportInventoryHandler implements ICommandHandler<ReportInventory> {
  constructor(@Inject(InventoryService) private readonly inventory: InventoryService) {}

  execute({ clusterId, nodes, ctx }: ReportInventory): Promise<ReportedNode[]> {
    return this.inventory.report(clusterId, nodes, ctx);
  }
}
