import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { clusterCodec } from './cluster.events';
import { clusterLivenessCodec } from './cluster-liveness.events';
import { AdoptClusterHandler } from './adopt-cluster.handler';
import { AddPoolToClusterHandler } from './add-pool-to-cluster.handler';
import { RemovePoolFromClusterHandler } from './remove-pool-from-cluster.handler';
import { MarkClusterReportsStalledHandler } from './mark-cluster-reports-stalled.handler';
import { ResumeClusterReportsHandler } from './resume-cluster-reports.handler';
import { GetClusterStateHandler } from './get-cluster-state.handler';
import {
  DeleteClusterHandler,
  SetClusterNetworkHandler,
  TransitionClusterHandler,
} from './transition-cluster.handler';
import { GetClusterLivenessHandler } from './get-cluster-liveness.handler';
import { ClustersController } from './clusters.controller';
import { KubernetesVersionsController } from './kubernetes-versions.controller';
import { clustersProjection } from './clusters.projection';
import { ClustersService } from './clusters.service';
import { ClusterViews } from './cluster-views';
import { membershipCodec } from './members/membership.events';
import { MembersService } from './members/members.service';
import { ClusterRoleOfHandler } from './members/cluster-role-of.handler';
import { TenancyController } from './members/tenancy.controller';

@Module({
  controllers: [ClustersController, KubernetesVersionsController, TenancyController],
  providers: [
    ClustersService,
    ClusterViews,
    MembersService,
    ClusterRoleOfHandler,
    AdoptClusterHandler,
    AddPoolToClusterHandler,
    RemovePoolFromClusterHandler,
    MarkClusterReportsStalledHandler,
    ResumeClusterReportsHandler,
    GetClusterStateHandler,
    GetClusterLivenessHandler,
    TransitionClusterHandler,
    DeleteClusterHandler,
    SetClusterNetworkHandler,
  ],
})
export class ClustersModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
  ) {}

  onModuleInit(): void {
    this.types.register(clusterCodec as unknown as EventCodec<Message>);
    this.types.register(clusterLivenessCodec as unknown as EventCodec<Message>);
    this.types.register(membershipCodec as unknown as EventCodec<Message>);
    this.registry.addProjection(clustersProjection);
  }
}
