import { Inject } from '@nestjs/common';
import { Command, CommandBus, CommandHandler, ICommandHandler, QueryBus } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { CommandContext, notFound, uuidFrom } from '@fleet/kernel';
import { GetClusterState, refuseUnlessWorking } from '../clusters';
import { validationFailed } from '../platform/errors/error-envelope';
import { KeepPoolWithinBounds } from './keep-pool-within-bounds.command';
import { poolAggregate } from './pool.decider';
import { poolStreamId } from './pool.events';
import { EditNodePoolDto, PoolView } from './pools.dto';
import { PoolsService } from './pools.service';

/** An admin (an editor, once the cluster roles land) edits a pool's autoscaling and access. */
export class EditNodePool extends Command<PoolView> {
  constructor(
    readonly poolId: string,
    readonly body: EditNodePoolDto,
    readonly ctx: CommandContext,
  ) {
    super();
  }
}

@CommandHandler(EditNodePool)
export class EditNodePoolHandler implements ICommandHandler<EditNodePool> {
  constructor(
    @Inject(PoolsService) private readonly pools: PoolsService,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  /**
   * The edit on the pool's stream (refused whole, or applied whole); then, when autoscaling
   * was given, its bounds hold at once: the scale operation that starts shows as the pool's
   * `operation` in the answer.
   */
  async execute({ poolId, body, ctx }: EditNodePool): Promise<PoolView> {
    if (body.autoscaling == null && body.access == null) {
      throw validationFailed([
        { field: 'autoscaling', problems: ['give autoscaling, access or both'] },
      ]);
    }
    // null would read as "unchanged"; autoscaling is turned off with {"enabled": false}.
    const nulls = (['autoscaling', 'access'] as const).filter((f) => body[f] === null);
    if (nulls.length > 0) {
      throw validationFailed(
        nulls.map((field) => ({ field, problems: [`must be an object, not null`] })),
      );
    }
    const pool = (await this.pipeline.load(poolAggregate, poolStreamId(poolId))).state;
    if (pool.status === 'absent' || pool.status === 'deleted') throw notFound('node pool', poolId);
    const cluster = (await this.queries.execute(new GetClusterState(pool.clusterId))).state;
    refuseUnlessWorking(pool.clusterId, cluster);
    const at = ctx.now.toISOString();
    await this.pools.execute(
      poolId,
      {
        type: 'EditNodePool',
        data: { autoscaling: body.autoscaling, tenants: body.access?.tenants, at },
      },
      ctx,
    );
    if (body.autoscaling) {
      await this.commands.execute(
        new KeepPoolWithinBounds(poolId, {
          ...ctx,
          commandId: uuidFrom(ctx.commandId, 'keep-within-bounds'),
        }),
      );
    }
    return this.pools.get(poolId);
  }
}
