import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '@fleet/cqrs';
import { Loaded } from '../platform/bus/messages';
import { poolAggregate, PoolState } from './pool.decider';
import { poolStreamId } from './pool.events';

/** The pool as its stream has it now. */
export class GetPoolState extends Query<Loaded<PoolState>> {
  constructor(readonly poolId: string) {
    super();
  }
}

@QueryHandler(GetPoolState)
export class GetPoolStateHandler implements IQueryHandler<GetPoolState> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ poolId }: GetPoolState) {
    return this.pipeline.load(poolAggregate, poolStreamId(poolId));
  }
}
