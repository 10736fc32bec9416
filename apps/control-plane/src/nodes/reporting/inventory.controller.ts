import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommandContext, DomainError, thenMade } from '@fleet/kernel';
import { Caller, mayReportFor } from '../../platform/auth/caller';
import { CurrentCaller, Roles } from '../../platform/auth/decorators';
import { validationFailed } from '../../platform/errors/error-envelope';
import { Ctx } from '../../platform/http/command-context';
import { LeanRoute, leanRoute } from '../../platform/http/lean/lean-route';
import { NodeReport } from '../node.decider';
import { InventoryReportDto, InventoryReportResponse, NodeReportDto } from './inventory.dto';
import { LabelRules, reportProblems } from './inventory-report.rules';
import { ReportInventory } from './report-inventory.handler';

const normalise = (clusterId: string, n: NodeReportDto): NodeReport => ({
  clusterId,
  hostname: n.hostname,
  role: n.role,
  // A spread defines own keys: `constructor` or `prototype` stay ordinary labels.
  labels: { ...(n.labels ?? {}) },
  capacity: { cpu: n.capacity.cpu, memoryGiB: n.capacity.memoryGiB, diskGiB: n.capacity.diskGiB },
  gpus: (n.gpus ?? []).map((g) => ({ uuid: g.uuid, model: g.model, memoryGiB: g.memoryGiB })),
  kubeletReady: n.kubeletReady,
  unschedulable: n.unschedulable ?? null,
  observedAt: n.observedAt ? new Date(n.observedAt).toISOString() : null,
});

@ApiTags('inventory')
@ApiBearerAuth()
@Controller('v1/inventory')
export class InventoryController {
  private readonly labelRules = new LabelRules();

  constructor(@Inject(CommandBus) private readonly commands: CommandBus) {}

  /** The operator's inventory controller reports nodes; `desired` is what it applies to Kubernetes. */
  @Post('reports')
  @HttpCode(200)
  @Roles('operator', 'admin')
  @ApiBody({ type: InventoryReportDto })
  @ApiOkResponse({ type: InventoryReportResponse })
  async report(
    // Validated by the app's pipe, on the DTO's own fast path (inventory-report.check.ts).
    @Body() body: InventoryReportDto,
    @CurrentCaller() caller: Caller,
    @Ctx() ctx: CommandContext,
  ): Promise<InventoryReportResponse> {
    if (!mayReportFor(caller, body.clusterId)) {
      throw new DomainError(
        'forbidden',
        `this token may not report for cluster ${body.clusterId}`,
        'forbidden',
      );
    }
    const problems = reportProblems(body.nodes, ctx.now, this.labelRules);
    if (problems.length > 0) throw validationFailed(problems);
    const nodes = body.nodes.map((n) => normalise(body.clusterId, n));
    // On the CommandBus like every command: here too its cost is within the noise (docs/PERFORMANCE.md).
    return { nodes: await this.commands.execute(new ReportInventory(body.clusterId, nodes, ctx)) };
  }
}

/**
 * A report may list 1000 nodes: at ~1 KB a GPU node with 8 cards and a few labels, a full
 * report is past the 1 MiB every other route takes. Its own limit, so only this route (an
 * operator's, every few seconds) parses bodies this large.
 */
export const INVENTORY_BODY_LIMITS: ReadonlyMap<string, number> = new Map([
  ['POST /v1/inventory/reports', 8 * 1024 * 1024],
]);

/** Every controller's reports, every few seconds: served on the lean path (lean-route.ts). */
export const INVENTORY_LEAN_ROUTES: readonly LeanRoute[] = [
  leanRoute(InventoryController, 'report', ({ caller, ctx, validated }) =>
    // A report the fast path accepts makes its arguments at once, without a promise.
    thenMade(validated(InventoryReportDto), (body) => [body, caller, ctx] as const),
  ),
];
