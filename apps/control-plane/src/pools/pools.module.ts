import { ClusterOfPoolHandler } from './cluster-of-pool.handler';
import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';
import { NodesModule } from '../nodes';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CreateNodePoolHandler } from './create-node-pool.handler';
import { CheckNodePoolsHandler } from './check-node-pools.handler';
import { poolCodec } from './pool.events';
import { PoolsController } from './pools.controller';
import { GpuTypesController } from './gpu-types.controller';
import { BeginPoolOperationHandler } from './begin-pool-operation.handler';
import { EndPoolOperationHandler } from './end-pool-operation.handler';
import { MarkPoolDeletedHandler } from './mark-pool-deleted.handler';
import { ChangePoolSpecHandler } from './change-pool-spec.handler';
import { AssignNodeToPoolHandler } from './assign-node-to-pool.handler';
import { EditNodePoolHandler } from './edit-node-pool.handler';
import { GetPoolStateHandler } from './get-pool-state.handler';
import { ListPoolMembersHandler } from './list-pool-members.handler';
import { PoolSummariesOfHandler } from './pool-summaries-of.handler';
import { nodePoolsProjection } from './pools.projection';
import { PoolsService } from './pools.service';

@Module({
  imports: [NodesModule],
  controllers: [PoolsController, GpuTypesController],
  providers: [
    PoolsService,
    CreateNodePoolHandler,
    CheckNodePoolsHandler,
    BeginPoolOperationHandler,
    EndPoolOperationHandler,
    MarkPoolDeletedHandler,
    ChangePoolSpecHandler,
    AssignNodeToPoolHandler,
    EditNodePoolHandler,
    GetPoolStateHandler,
    ListPoolMembersHandler,
    ClusterOfPoolHandler,
    PoolSummariesOfHandler,
  ],
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
