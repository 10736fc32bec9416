import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
} from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CommandContext, thenMade } from '@fleet/kernel';
import { Roles } from '../platform/auth/decorators';
import { Ctx } from '../platform/http/command-context';
import { checkId } from '../platform/http/ids';
import { LeanRoute, leanRoute } from '../platform/http/lean/lean-route';
import { NoBody } from '../platform/http/no-body';
import { CordonNode } from './cordon-node.handler';
import { CordonNodeDto, ListNodesQuery, NodePage, NodeView } from './nodes.dto';
import { DeleteNode } from './delete-node.handler';
import { NodesQueries } from './nodes.queries';
import { UncordonNode } from './uncordon-node.handler';

const checkNodeId = (nodeId: string): string => checkId('nodeId', nodeId);

@ApiTags('nodes')
@ApiBearerAuth()
@Controller('v1/nodes')
export class NodesController {
  constructor(
    @Inject(NodesQueries) private readonly queries: NodesQueries,
    @Inject(CommandBus) private readonly commands: CommandBus,
  ) {}

  @Get()
  @Roles('admin', 'auditor')
  @ApiOkResponse({ type: NodePage })
  list(@Query() query: ListNodesQuery): Promise<NodePage> {
    return this.queries.list(query);
  }

  @Get(':nodeId')
  @Roles('admin', 'auditor')
  @ApiOkResponse({ type: NodeView })
  get(@Param('nodeId') nodeId: string): Promise<NodeView> {
    return this.queries.get(checkNodeId(nodeId));
  }

  @Get(':nodeId/gpus')
  @Roles('admin', 'auditor')
  async gpus(@Param('nodeId') nodeId: string) {
    return { items: await this.queries.gpus(checkNodeId(nodeId)) };
  }

  @Post(':nodeId/cordon')
  @HttpCode(200)
  @Roles('admin')
  @ApiOkResponse({ type: NodeView })
  @ApiBody({ type: CordonNodeDto, required: false })
  async cordon(
    @Param('nodeId') nodeId: string,
    @Body() body: CordonNodeDto,
    @Ctx() ctx: CommandContext,
  ) {
    // On the CommandBus like every command: here too its cost is within the noise (docs/PERFORMANCE.md).
    await this.commands.execute(new CordonNode(checkNodeId(nodeId), body.reason ?? null, ctx));
    return this.queries.get(nodeId);
  }

  @Post(':nodeId/uncordon')
  @NoBody()
  @HttpCode(200)
  @Roles('admin')
  @ApiOkResponse({ type: NodeView })
  async uncordon(@Param('nodeId') nodeId: string, @Ctx() ctx: CommandContext) {
    await this.commands.execute(new UncordonNode(checkNodeId(nodeId), ctx));
    return this.queries.get(nodeId);
  }

  @Delete(':nodeId')
  @NoBody()
  @HttpCode(204)
  @Roles('admin')
  async remove(@Param('nodeId') nodeId: string, @Ctx() ctx: CommandContext): Promise<void> {
    await this.commands.execute(new DeleteNode(checkNodeId(nodeId), ctx));
  }
}

/** The no-op cordon is one of the API's hot routes: served on the lean path (lean-route.ts). */
export const NODE_LEAN_ROUTES: readonly LeanRoute[] = [
  leanRoute(NodesController, 'cordon', ({ params, validated, ctx }) =>
    thenMade(validated(CordonNodeDto), (body) => [params.nodeId, body, ctx] as const),
  ),
];
