import { ClusterOfOperationHandler } from './cluster-of-operation.handler';
import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';
import { EventTypes } from '../platform/runtime/event-types';
import { Config } from '../config/config';
import { Runtime } from '../platform/runtime/runtime.service';
import { CONFIG } from '../platform/runtime/tokens';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { ProvisionerModule } from '../provisioner';
import { DeleteNodePoolHandler } from './delete-node-pool.handler';
import { OpenClusterOperationHandler } from './open-cluster-operation.handler';
import { KeepPoolWithinBoundsHandler } from './keep-pool-within-bounds.handler';
import { operationCodec } from './operation.events';
import { OperationsController } from './operations.controller';
import { operationsProjection } from './operations.projection';
import { OperationsSaga } from './operations.saga';
import { OperationsService } from './operations.service';
import { OperationsQueries } from './operations.queries';
import { ClusterOperationsService } from './cluster-operations.service';
import {
  EndOperationHandler,
  GetOperationStateHandler,
  OpenMeshOperationHandler,
  OpenRestoreOperationHandler,
  ReportOperationStepHandler,
} from './tracked-operations.handlers';
import { ResizeNodePoolHandler } from './resize-node-pool.handler';
import { ScaleNodePoolHandler } from './scale-node-pool.handler';
import { AUTOSCALER_TICK_MS, AutoscalerService } from './autoscaler.service';

@Module({
  imports: [ProvisionerModule],
  controllers: [OperationsController],
  providers: [
    ...[OperationsSaga, OperationsService, OperationsQueries, ClusterOperationsService],
    ...[AutoscalerService, OpenClusterOperationHandler, KeepPoolWithinBoundsHandler],
    // Operations other slices carry out (a restore): they open it and report its steps.
    ...[OpenRestoreOperationHandler, ReportOperationStepHandler, EndOperationHandler],
    GetOperationStateHandler,
    OpenMeshOperationHandler,
    // The pool operations the API sends (operations.controller.ts).
    ...[ScaleNodePoolHandler, ResizeNodePoolHandler, DeleteNodePoolHandler],
    ClusterOfOperationHandler,
  ],
})
export class OperationsModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
    @Inject(OperationsSaga) private readonly saga: OperationsSaga,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(AutoscalerService) private readonly autoscaler: AutoscalerService,
    @Inject(OperationsService) private readonly operations: OperationsService,
  ) {}

  onModuleInit(): void {
    this.types.register(operationCodec as unknown as EventCodec<Message>);
    this.registry.addProjection(operationsProjection);
    this.registry.addReactor({ name: 'operations-saga', react: (e) => this.saga.react(e) });
    this.saga.register();
    this.runtime.afterStart(() => this.saga.reconcile());
    // Redis may lose jobs while we run (restarted empty, flushed): re-arm what is gone.
    this.runtime.every(
      'operations-repair',
      this.config.jobsRepairSec * 1000,
      async () => void (await this.saga.repair()),
    );
    this.runtime.every('autoscaler', AUTOSCALER_TICK_MS, (term) =>
      this.autoscaler.tick(Date.now(), term.epoch),
    );
    // A delete that died between its two appends left its pool off the cluster's list.
    this.runtime.every(
      'pools-relist-strays',
      this.config.jobsRepairSec * 1000,
      async (term) => void (await this.operations.relistStrays(term.epoch)),
    );
  }
}
