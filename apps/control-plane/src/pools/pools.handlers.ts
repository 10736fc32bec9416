import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../../libs/cqrs/src';
import { poolAggregate } from './pool.decider';
import { poolStreamId } from './pool.events';
import {
  AddNodeToPool,
  BeginPoolOperation,
  ChangePoolSpec,
  EndPoolOperation,
  GetPoolState,
  ListPoolMembers,
  MarkPoolDeleted,
} from './pools.messages';
import { PoolsService } from './pools.service';

/** Each runs the one command path on the pool's stream: load, decide, append. */
abstract class OnPool {
  constructor(@Inject(CommandPipeline) protected readonly pipeline: CommandPipeline) {}
}

@CommandHandler(BeginPoolOperation)
export class BeginPoolOperationHandler
  extends OnPool
  implements ICommandHandler<BeginPoolOperation>
{
  execute({ poolId, data, ctx }: BeginPoolOperation) {
    const command = { type: 'BeginPoolOperation' as const, data };
    return this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
  }
}

@CommandHandler(EndPoolOperation)
export class EndPoolOperationHandler extends OnPool implements ICommandHandler<EndPoolOperation> {
  execute({ poolId, data, ctx }: EndPoolOperation) {
    const command = { type: 'EndPoolOperation' as const, data };
    return this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
  }
}

@CommandHandler(MarkPoolDeleted)
export class MarkPoolDeletedHandler extends OnPool implements ICommandHandler<MarkPoolDeleted> {
  execute({ poolId, data, ctx }: MarkPoolDeleted) {
    const command = { type: 'MarkPoolDeleted' as const, data };
    return this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
  }
}

@CommandHandler(ChangePoolSpec)
export class ChangePoolSpecHandler extends OnPool implements ICommandHandler<ChangePoolSpec> {
  execute({ poolId, data, ctx }: ChangePoolSpec) {
    const command = { type: 'ChangePoolSpec' as const, data };
    return this.pipeline.handle(poolAggregate, poolStreamId(poolId), command, ctx);
  }
}

@QueryHandler(GetPoolState)
export class GetPoolStateHandler extends OnPool implements IQueryHandler<GetPoolState> {
  execute({ poolId }: GetPoolState) {
    return this.pipeline.load(poolAggregate, poolStreamId(poolId));
  }
}

/** The pools service's own rules (the assignment's checks, the members' query). */
abstract class ByPoolsService {
  constructor(@Inject(PoolsService) protected readonly pools: PoolsService) {}
}

@CommandHandler(AddNodeToPool)
export class AddNodeToPoolHandler extends ByPoolsService implements ICommandHandler<AddNodeToPool> {
  execute({ nodeId, poolId, ctx }: AddNodeToPool) {
    return this.pools.assignNode(nodeId, poolId, ctx);
  }
}

@QueryHandler(ListPoolMembers)
export class ListPoolMembersHandler
  extends ByPoolsService
  implements IQueryHandler<ListPoolMembers>
{
  execute({ poolId }: ListPoolMembers) {
    return this.pools.members(poolId);
  }
}

export const POOL_HANDLERS = [
  BeginPoolOperationHandler,
  EndPoolOperationHandler,
  MarkPoolDeletedHandler,
  ChangePoolSpecHandler,
  GetPoolStateHandler,
  AddNodeToPoolHandler,
  ListPoolMembersHandler,
];
