import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { Message, EventCodec } from '../../../../libs/kernel/src';
import { clusterLivenessCodec } from '../clusters/cluster-liveness.events';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { JWT_SECRET } from '../platform/auth/auth.module';
import { CordonSyncSaga } from './cordon-sync/cordon-sync.saga';
import { DirectiveCursors } from './cordon-sync/directive-cursor';
import { NodeDirectivesController } from './cordon-sync/node-directives.controller';
import { NodeDirectivesService } from './cordon-sync/node-directives.service';
import { HeartbeatModule } from './heartbeat/heartbeat.module';
import { InventoryController } from './inventory.controller';
import { InventoryService } from './inventory.service';
import { LivenessSaga } from './liveness/liveness.saga';
import { nodeCodec } from './node.events';
import { NodeCommands } from './nodes.commands';
import { NodesController } from './nodes.controller';
import { nodesProjection } from './nodes.projection';
import { NodesQueries } from './nodes.queries';

@Module({
  imports: [HeartbeatModule],
  controllers: [InventoryController, NodesController, NodeDirectivesController],
  providers: [
    InventoryService,
    LivenessSaga,
    NodesQueries,
    NodeCommands,
    NodeDirectivesService,
    CordonSyncSaga,
    {
      provide: DirectiveCursors,
      useFactory: (secret: string) => new DirectiveCursors(secret),
      inject: [JWT_SECRET],
    },
  ],
  exports: [NodesQueries, NodeCommands, LivenessSaga, InventoryService, HeartbeatModule],
})
export class NodesModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
  ) {}

  onModuleInit(): void {
    this.registry.addProjection(nodesProjection);
    this.types.register(nodeCodec as unknown as EventCodec<Message>);
    this.types.register(clusterLivenessCodec as unknown as EventCodec<Message>);
  }
}
