import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';
import { ClusterRoles } from '../platform/auth/cluster-roles.service';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { MeshConnectorModule } from '../provisioner';
import { MeshController } from './mesh.controller';
import { ClusterNetworkController } from './cluster-network.controller';
import { MeshLinkSaga } from './mesh-link.saga';
import { ClusterDeletionReactor } from './cluster-deletion.reactor';
import { LiveMeshesOfHandler } from './live-meshes-of.handler';
import { meshCodec } from './mesh.events';
import { meshProjection } from './mesh.projection';
import { MeshService } from './mesh.service';

@Module({
  imports: [MeshConnectorModule],
  controllers: [MeshController, ClusterNetworkController],
  // ClusterRoles: the cluster-role table over a mesh request's two clusters (the controller).
  providers: [MeshService, MeshLinkSaga, ClusterDeletionReactor, LiveMeshesOfHandler, ClusterRoles],
})
export class MeshModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
  ) {}

  onModuleInit(): void {
    this.types.register(meshCodec as unknown as EventCodec<Message>);
    this.registry.addProjection(meshProjection);
  }
}
