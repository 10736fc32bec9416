import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { Message, EventCodec } from '../../../../libs/kernel/src';
import { clusterLivenessCodec } from '../clusters/cluster-liveness.events';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { JWT_SECRET } from '../platform/auth/auth.module';
import { CordonSyncService } from './cordon-sync/cordon-sync.service';
import { DirectiveCursors } from './cordon-sync/directive-cursor';
import { NodeDirectivesController } from './cordon-sync/node-directives.controller';
import { NodeDirectivesService } from './cordon-sync/node-directives.service';
import { HeartbeatModule } from './heartbeat/heartbeat.module';
import { InventoryController } from './reporting/inventory.controller';
import { InventoryService } from './reporting/inventory.service';
import { ReportInventoryHandler } from './reporting/report-inventory.handler';
import { CordonNodeHandler } from './cordon-node.handler';
import { DeleteNodeHandler } from './delete-node.handler';
import { UncordonNodeHandler } from './uncordon-node.handler';
import { LivenessService } from './liveness.service';
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
    LivenessService,
    NodesQueries,
    NodeCommands,
    ...[ReportInventoryHandler, CordonNodeHandler, UncordonNodeHandler, DeleteNodeHandler],
    NodeDirectivesService,
    CordonSyncService,
    {
      provide: DirectiveCursors,
      useFactory: (secret: string) => new DirectiveCursors(secret),
      inject: [JWT_SECRET],
    },
  ],
  exports: [NodesQueries, NodeCommands, LivenessService, InventoryService, HeartbeatModule],
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
