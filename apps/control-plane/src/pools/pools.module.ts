import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '../../../../libs/kernel/src';
import { NodesModule } from '../nodes';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CreateNodePoolHandler } from './create-node-pool.handler';
import { poolCodec } from './pool.events';
import { PoolsController } from './pools.controller';
import { POOL_HANDLERS } from './pools.handlers';
import { nodePoolsProjection } from './pools.projection';
import { PoolsService } from './pools.service';

@Module({
  imports: [NodesModule],
  controllers: [PoolsController],
  providers: [PoolsService, CreateNodePoolHandler, ...POOL_HANDLERS],
})
export class PoolsModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
    @Inject(PoolsService) private readonly pools: PoolsService,
  ) {}

  onModuleInit(): void {
    this.types.register(poolCodec as unknown as EventCodec<Message>);
    this.registry.addProjection(nodePoolsProjection);
    this.registry.addReactor({ name: 'node-pools', react: (e) => this.pools.react(e) });
  }
}
