import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { Message, EventCodec } from '@fleet/kernel';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { JWT_SECRET } from '../platform/auth/auth.module';
import { ClusterAdoptionReactor } from './cluster-adoption.reactor';
import { CordonSyncSaga } from './cordon-sync/cordon-sync.saga';
import { DirectiveCursors } from './cordon-sync/directive-cursor';
import { NodeDirectivesController } from './cordon-sync/node-directives.controller';
import { NodeDirectivesService } from './cordon-sync/node-directives.service';
import { HeartbeatModule } from './heartbeat/heartbeat.module';
import { InventoryController } from './reporting/inventory.controller';
import { InventoryService } from './reporting/inventory.service';
import { ReportInventoryHandler } from './reporting/report-inventory.handler';
import { CordonNodeHandler } from './cordon-node.handler';
import { UncordonNodeHandler } from './uncordon-node.handler';
import { LivenessSaga } from './liveness/liveness.saga';
import { nodeCodec } from './node.events';
import { gpuClaimsCodec } from './reporting/gpu-claims';
import { NodeCommands } from './nodes.commands';
import { NodesController } from './nodes.controller';
import { AllocateOnNodeHandler } from './allocate-on-node.handler';
import { ReleaseNodeCapacityHandler } from './release-node-capacity.handler';
import { StartNodeDrainHandler } from './start-node-drain.handler';
import { EndNodeDrainHandler } from './end-node-drain.handler';
import { SetNodePoolHandler } from './set-node-pool.handler';
import { RequestNodeRemovalHandler } from './request-node-removal.handler';
import { DeleteNodeHandler } from './delete-node.handler';
import { GetNodeStateHandler } from './get-node-state.handler';
import { nodesProjection } from './nodes.projection';
import { NodesQueries } from './nodes.queries';

@Module({
  imports: [HeartbeatModule],
  controllers: [InventoryController, NodesController, NodeDirectivesController],
  providers: [
    ClusterAdoptionReactor,
    InventoryService,
    LivenessSaga,
    NodesQueries,
    NodeCommands,
    CordonNodeHandler,
    UncordonNodeHandler,
    NodeDirectivesService,
    CordonSyncSaga,
    AllocateOnNodeHandler,
    ReleaseNodeCapacityHandler,
    StartNodeDrainHandler,
    EndNodeDrainHandler,
    SetNodePoolHandler,
    RequestNodeRemovalHandler,
    DeleteNodeHandler,
    ReportInventoryHandler,
    GetNodeStateHandler,
    {
      provide: DirectiveCursors,
      useFactory: (secret: string) => new DirectiveCursors(secret),
      inject: [JWT_SECRET],
    },
  ],
  exports: [NodesQueries, HeartbeatModule],
})
export class NodesModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
    @Inject(ClusterAdoptionReactor) private readonly adoption: ClusterAdoptionReactor,
  ) {}

  onModuleInit(): void {
    this.registry.addProjection(nodesProjection);
    this.types.register(nodeCodec as unknown as EventCodec<Message>);
    this.types.register(gpuClaimsCodec as unknown as EventCodec<Message>);
    this.registry.addReactor({ name: 'cluster-adoption', react: (e) => this.adoption.react(e) });
  }
}
