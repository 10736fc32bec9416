import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CommandPipeline, SubscriptionRunner } from '@fleet/cqrs';
import { DomainError, uuidFrom } from '@fleet/kernel';
import { ReadModelStore } from '@fleet/readmodels/port';
import { READ_MODELS } from '../platform/runtime/tokens';
import { ClusterOperationsService } from './cluster-operations.service';
import { OperationCommand, operationAggregate } from './operation.decider';
import { operationStreamId } from './operation.events';
import { OPERATIONS } from './operations.projection';
import {
  EndOperation,
  GetOperationState,
  OpenMeshOperation,
  OpenRestoreOperation,
  ReportOperationStep,
} from './tracked-operations';

@CommandHandler(OpenRestoreOperation)
export class OpenRestoreOperationHandler implements ICommandHandler<OpenRestoreOperation> {
  constructor(
    @Inject(ClusterOperationsService) private readonly operations: ClusterOperationsService,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
  ) {}

  async execute({ clusterId, backupId, reason, ctx }: OpenRestoreOperation) {
    // A read, as pool names are: two restores asked in one instant may both pass (documented).
    const running = await this.readModels.find(
      OPERATIONS,
      { clusterId, operationType: 'restore_cluster', status: { $in: ['pending', 'running'] } },
      { limit: 1 },
    );
    if (running.items.length > 0) {
      const operationId = running.items[0]._id;
      throw new DomainError(
        'operation_in_progress',
        `cluster ${clusterId} is being restored by operation ${operationId}`,
        'conflict',
        { clusterId, operationId },
      );
    }
    return this.operations.open(clusterId, 'restore_cluster', reason, ctx, [], { backupId });
  }
}

@CommandHandler(OpenMeshOperation)
export class OpenMeshOperationHandler implements ICommandHandler<OpenMeshOperation> {
  constructor(
    @Inject(ClusterOperationsService) private readonly operations: ClusterOperationsService,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
  ) {}

  async execute({ clusterId, operationType, reason, ctx }: OpenMeshOperation) {
    const opened = await this.operations.open(clusterId, operationType, reason, ctx);
    const step = operationType === 'connect_mesh' ? 'connect' : 'disconnect';
    await this.pipeline.handle(
      operationAggregate,
      operationStreamId(opened.operationId),
      { type: 'StartOperationStep', data: { name: step, at: ctx.now.toISOString() } },
      { ...ctx, commandId: uuidFrom(ctx.commandId, 'step') },
    );
    return opened;
  }
}

/** Reports of an operation carried out elsewhere, on its stream (each a no-op when repeated). */
abstract class OnOperation {
  constructor(
    protected readonly pipeline: CommandPipeline,
    protected readonly runner: SubscriptionRunner,
  ) {}

  /** Nothing for an operation never opened (a mesh cancelled before it was approved). */
  protected async send(operationId: string, command: OperationCommand, ctx: EndOperation['ctx']) {
    const stream = operationStreamId(operationId);
    if ((await this.pipeline.load(operationAggregate, stream)).state.status === 'absent') return;
    const result = await this.pipeline.handle(
      operationAggregate,
      operationStreamId(operationId),
      command,
      ctx,
    );
    await this.runner.settle(result.position, ['projection:operations']);
  }
}

@CommandHandler(ReportOperationStep)
export class ReportOperationStepHandler
  extends OnOperation
  implements ICommandHandler<ReportOperationStep>
{
  constructor(
    @Inject(CommandPipeline) pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) runner: SubscriptionRunner,
  ) {
    super(pipeline, runner);
  }

  execute({ operationId, name, progress, ctx }: ReportOperationStep) {
    const at = ctx.now.toISOString();
    return this.send(
      operationId,
      progress.completed
        ? { type: 'CompleteOperationStep', data: { name, detail: progress.detail, at } }
        : { type: 'StartOperationStep', data: { name, at } },
      ctx,
    );
  }
}

@CommandHandler(EndOperation)
export class EndOperationHandler extends OnOperation implements ICommandHandler<EndOperation> {
  constructor(
    @Inject(CommandPipeline) pipeline: CommandPipeline,
    @Inject(SubscriptionRunner) runner: SubscriptionRunner,
  ) {
    super(pipeline, runner);
  }

  execute({ operationId, error, ctx }: EndOperation) {
    const at = ctx.now.toISOString();
    return this.send(
      operationId,
      error === null
        ? { type: 'SucceedOperation', data: { at } }
        : { type: 'FailOperation', data: { error, at } },
      ctx,
    );
  }
}

@QueryHandler(GetOperationState)
export class GetOperationStateHandler implements IQueryHandler<GetOperationState> {
  constructor(@Inject(CommandPipeline) private readonly pipeline: CommandPipeline) {}

  execute({ operationId }: GetOperationState) {
    return this.pipeline.load(operationAggregate, operationStreamId(operationId));
  }
}
