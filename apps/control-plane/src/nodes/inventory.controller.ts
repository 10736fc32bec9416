import { Body, Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommandContext, DomainError } from '../../../../libs/kernel/src';
import { Caller, mayReportFor } from '../platform/auth/caller';
import { CurrentCaller, Roles } from '../platform/auth/decorators';
import { validationFailed } from '../platform/errors/error-envelope';
import { Ctx } from '../platform/http/command-context';
import { LeanRoute, leanRoute } from '../platform/http/lean-route';
import { InventoryReportDto, InventoryReportResponse, NodeReportDto } from './inventory.dto';
import { InventoryReportPipe, isPlainValidInventoryReport } from './inventory-report.pipe';
import { InventoryService } from './inventory.service';
import { NodeReport } from './node.decider';

const LABEL_KEY =
  /^([a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?\/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$/;

/**
 * Label keys and values seen valid before: a fleet repeats a handful of them on every node
 * of every report, and a Set lookup is much cheaper than the regexes. Bounded (start over).
 */
const KNOWN_CAPACITY = 10_000;
const knownKeys = new Set<string>();
const knownValues = new Set<string>();
const valid = (known: Set<string>, pattern: RegExp, text: string): boolean => {
  if (known.has(text)) return true;
  if (!pattern.test(text)) return false;
  if (known.size >= KNOWN_CAPACITY) known.clear();
  known.add(text);
  return true;
};
const isLabel = (key: string, value: unknown): boolean =>
  valid(knownKeys, LABEL_KEY, key) &&
  typeof value === 'string' &&
  valid(knownValues, LABEL_VALUE, value);

/**
 * How far ahead of the server's receive time an observedAt may be: reports are ordered by it,
 * so one from a clock far ahead would make every later real report look older (a frozen node).
 */
const OBSERVED_AHEAD_MS = 60_000;

/** Checks what class-validator cannot express, naming each bad field. */
const semanticProblems = (
  nodes: readonly NodeReportDto[],
  now: Date,
): Array<{ field: string; problems: string[] }> => {
  const out: Array<{ field: string; problems: string[] }> = [];
  const hostnames = new Set<string>();
  /** uuid → the index of the first node listing it: one card is on one node. */
  const cards = new Map<string, number>();
  const latest = now.getTime() + OBSERVED_AHEAD_MS;
  nodes.forEach((n, i) => {
    const at = `nodes.${i}`;
    if (hostnames.has(n.hostname))
      out.push({ field: `${at}.hostname`, problems: ['appears twice in this report'] });
    hostnames.add(n.hostname);
    const labels = n.labels ?? {};
    const keys = Object.keys(labels);
    if (keys.length > 64) out.push({ field: `${at}.labels`, problems: ['at most 64 labels'] });
    for (const k of keys) {
      if (!isLabel(k, labels[k])) {
        out.push({
          field: `${at}.labels.${k}`,
          problems: ['must be a Kubernetes label key with a string value'],
        });
      }
    }
    const mode = labels['fleet/mode'];
    if (mode !== undefined && mode !== 'shared' && mode !== 'dedicated') {
      out.push({ field: `${at}.labels.fleet/mode`, problems: ['must be shared or dedicated'] });
    }
    const gpus = n.gpus ?? [];
    if (gpus.length > 0 && n.role !== 'gpu')
      out.push({ field: `${at}.gpus`, problems: ['only gpu nodes carry GPU cards'] });
    let twice = false;
    let taken: Array<{ field: string; problems: string[] }> | undefined; // rare: none allocated
    for (let k = 0; k < gpus.length; k++) {
      const first = cards.get(gpus[k].uuid);
      if (first === undefined) cards.set(gpus[k].uuid, i);
      else if (first === i) twice = true;
      else
        (taken ??= []).push({
          field: `${at}.gpus.${k}.uuid`,
          problems: [`also reported by nodes.${first}`],
        });
    }
    if (twice) out.push({ field: `${at}.gpus`, problems: ['a GPU uuid appears twice'] });
    if (taken) out.push(...taken);
    if (n.observedAt && Date.parse(n.observedAt) > latest) {
      out.push({
        field: `${at}.observedAt`,
        problems: [
          `is more than ${OBSERVED_AHEAD_MS / 1000} s after the server's time (${now.toISOString()}): the operator's clock is wrong`,
        ],
      });
    }
  });
  return out;
};

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
  constructor(@Inject(InventoryService) private readonly inventory: InventoryService) {}

  /** The operator's inventory controller reports nodes; `desired` is what it applies to Kubernetes. */
  @Post('reports')
  @HttpCode(200)
  @Roles('operator', 'admin')
  @ApiBody({ type: InventoryReportDto })
  @ApiOkResponse({ type: InventoryReportResponse })
  async report(
    // Not typed with the class (Readonly<> emits `Object`): the global ValidationPipe skips it
    // and InventoryReportPipe checks it, falling back to that pipe for anything it refuses.
    @Body(InventoryReportPipe) body: Readonly<InventoryReportDto>,
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
    const problems = semanticProblems(body.nodes, ctx.now);
    if (problems.length > 0) throw validationFailed(problems);
    const nodes = await this.inventory.report(
      body.clusterId,
      body.nodes.map((n) => normalise(body.clusterId, n)),
      ctx,
    );
    return { nodes };
  }
}

/**
 * A report may list 1000 nodes: at ~1 KB a GPU node with 8 cards and a few labels, a full
 * report of an ordinary fleet is past the 1 MiB every other route takes. Its own limit, so
 * only this route (an operator's, every few seconds) parses bodies this large.
 */
export const INVENTORY_BODY_LIMITS: ReadonlyMap<string, number> = new Map([
  ['POST /v1/inventory/reports', 8 * 1024 * 1024],
]);

const reportPipe = new InventoryReportPipe();

/** Every controller's reports, every few seconds: served on the lean path (lean-route.ts). */
export const INVENTORY_LEAN_ROUTES: readonly LeanRoute[] = [
  leanRoute(InventoryController, 'report', ({ body, caller, ctx }) =>
    // The pipe's own fast check, without its promise: a valid report's arguments are made at once.
    isPlainValidInventoryReport(body)
      ? ([body, caller, ctx] as const)
      : reportPipe.transform(body).then((dto) => [dto, caller, ctx] as const),
  ),
];
