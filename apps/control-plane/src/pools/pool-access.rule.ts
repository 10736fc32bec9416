import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../../../libs/cqrs/src';
import { PoolAccess } from '../sessions/pool-access';
import { poolAggregate } from './pool.decider';
import { poolStreamId } from './pool.events';

/**
 * Who may place sessions in a pool: everyone when its tenant list is empty, else only the
 * listed owners. Nodes in no pool, and pools this process never created, stay open.
 */
@Injectable()
export class PoolAccessRule implements PoolAccess {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  async mayUse(owner: string, poolId: string | null): Promise<boolean> {
    if (poolId === null) return true;
    const { state } = await this.pipeline.load(poolAggregate, poolStreamId(poolId));
    if (state.status === 'absent') return true;
    return state.tenants.length === 0 || state.tenants.includes(owner);
  }
}
