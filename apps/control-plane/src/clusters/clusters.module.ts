import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '../../../../libs/kernel/src';
import { OperationsModule } from '../operations/operations.module';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { clusterCodec } from './cluster.events';
import { ClustersController } from './clusters.controller';
import { clustersProjection } from './clusters.projection';
import { ClustersService } from './clusters.service';

@Module({
  imports: [OperationsModule],
  controllers: [ClustersController],
  providers: [ClustersService],
  exports: [ClustersService],
})
export class ClustersModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
    @Inject(ClustersService) private readonly clusters: ClustersService,
  ) {}

  onModuleInit(): void {
    this.types.register(clusterCodec as unknown as EventCodec<Message>);
    this.registry.addProjection(clustersProjection);
    this.registry.addReactor({ name: 'cluster-adoption', react: (e) => this.clusters.react(e) });
  }
}
