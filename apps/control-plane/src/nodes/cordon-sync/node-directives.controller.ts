import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DomainError } from '@fleet/kernel';
import { Caller, mayReportFor } from '../../platform/auth/caller';
import { CurrentCaller, Roles } from '../../platform/auth/decorators';
import { validationFailed } from '../../platform/errors/error-envelope';
import { checkClusterId } from '../../platform/http/ids';
import { DEFAULT_WAIT_SEC, NodeDirectivesPage, NodeDirectivesQuery } from './node-directives.dto';
import { DirectiveCursors } from './directive-cursor';
import { NodeDirectivesService } from './node-directives.service';

@ApiTags('inventory')
@ApiBearerAuth()
@Controller('v1/clusters')
export class NodeDirectivesController {
  constructor(
    @Inject(NodeDirectivesService) private readonly directives: NodeDirectivesService,
    @Inject(DirectiveCursors) private readonly cursors: DirectiveCursors,
  ) {}

  /**
   * The operator's long-poll: the desired state of the cluster's nodes that changed after
   * `since`, answered as soon as one changes (or empty after `wait` seconds).
   */
  @Get(':clusterId/node-directives')
  @Roles('operator', 'admin')
  @ApiOkResponse({ type: NodeDirectivesPage })
  async list(
    @Param('clusterId') clusterId: string,
    @Query() query: NodeDirectivesQuery,
    @CurrentCaller() caller: Caller,
  ): Promise<NodeDirectivesPage> {
    checkClusterId(clusterId);
    if (!mayReportFor(caller, clusterId)) {
      throw new DomainError(
        'forbidden',
        `this token may not read directives of cluster ${clusterId}`,
        'forbidden',
      );
    }
    // Checked here, not by the DTO: whether a cursor opens depends on the cluster in the path.
    const since = query.since === undefined ? null : this.cursors.open(clusterId, query.since);
    if (query.since !== undefined && since === null) {
      throw validationFailed([
        {
          field: 'since',
          problems: [
            `must be a cursor this endpoint issued for cluster ${clusterId}; list again without since`,
          ],
        },
      ]);
    }
    const page = await this.directives.poll(
      clusterId,
      since,
      (query.wait ?? DEFAULT_WAIT_SEC) * 1000,
    );
    return { items: page.items, cursor: this.cursors.seal(clusterId, page.position) };
  }
}
