import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { Carriers, WorkflowRunner } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { Clock, systemContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { Config } from '../config/config';
import {
  EndOperation,
  GetOperationState,
  OPERATIONS,
  OperationDoc,
  OperationState,
  ReportOperationStep,
  operationCodec,
} from '../operations';
import { Runtime } from '../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CLOCK, CONFIG, READ_MODELS } from '../platform/runtime/tokens';
import { BACKUPS, BackupDoc } from './backups.projection';
import { RESTORE_STEP, RestoreInput, RestoreOutput, restoreWorkflow } from './restore.workflow';
import { VELERO, Velero } from './velero.port';

/**
 * Carries restore_cluster operations out (restore.workflow.ts): on the operation's request from
 * the log, on Velero's answer, and on the leader's repair (at start and every
 * JOBS_REPAIR_SEC), which asks Velero again for a restore a restart left under way.
 */
@Injectable()
export class RestoreSaga implements OnModuleInit {
  private readonly logger = new Logger('backups');
  private readonly runner: WorkflowRunner<RestoreInput, RestoreOutput, OperationState>;
  private readonly asking = new Set<string>();

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(VELERO) private readonly velero: Velero,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CLOCK) clock: Clock,
  ) {
    this.runner = new WorkflowRunner({
      workflow: restoreWorkflow,
      load: async (id) => (await this.queries.execute(new GetOperationState(id))).state,
      carriers: this.carriers(),
      clock,
    });
  }

  onModuleInit(): void {
    this.registry.addReactor({ name: 'restores', react: (e) => this.react(e) });
    this.runtime.afterStart(() => this.repair());
    this.runtime.every('restores-repair', this.config.jobsRepairSec * 1000, () => this.repair());
  }

  async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('operation-')) return;
    const event = operationCodec.decode(stored.type, stored.data);
    if (event?.type !== 'OperationRequested' || event.data.operationType !== 'restore_cluster') {
      return;
    }
    const { operationId, at } = event.data;
    await this.runner.run(operationId, { type: 'RestoreRequested', data: { operationId, at } });
  }

  async repair(): Promise<void> {
    const open = await findAll<OperationDoc & Doc>(this.readModels, OPERATIONS, {
      operationType: 'restore_cluster',
      status: { $in: ['pending', 'running'] },
    });
    for (const { operationId } of open) {
      await this.runner.run(operationId, (now) => ({
        type: 'RestoreRepairDue',
        data: { operationId, at: now.toISOString() },
      }));
    }
  }

  /** Asks Velero without holding the operation's turn: the answer is a run of its own. */
  private ask(operationId: string, backupId: string, clusterId: string): void {
    if (this.asking.has(operationId)) return;
    this.asking.add(operationId);
    const call = async () => {
      const backup = await this.readModels.get<BackupDoc & Doc>(BACKUPS, backupId);
      const failure = backup
        ? await this.velero
            .restore({ restoreId: operationId, backupId, location: backup.location, clusterId })
            .then(
              () => null,
              (error: unknown) => (error instanceof Error ? error.message : String(error)),
            )
        : `backup ${backupId} does not exist`;
      await this.runner.run(operationId, (now) => ({
        type: 'RestoreAnswered',
        data: { operationId, failure, at: now.toISOString() },
      }));
    };
    void call()
      .catch((error: unknown) => this.logger.warn(`restore ${operationId}: ${String(error)}`))
      .finally(() => this.asking.delete(operationId));
  }

  private carriers(): Carriers<RestoreInput, RestoreOutput, OperationState> {
    const ctx = (operationId: string, what: string, at: string) =>
      systemContext(uuidFrom(operationId, what), { correlationId: operationId, now: new Date(at) });
    return {
      StartRestoreStep: ({ data }) =>
        this.commands.execute(
          new ReportOperationStep(
            data.operationId,
            RESTORE_STEP,
            { completed: false },
            ctx(data.operationId, 'restore-started', data.at),
          ),
        ),
      AskRestore: async ({ data }) => this.ask(data.operationId, data.backupId, data.clusterId),
      FinishRestore: async ({ data }) => {
        const { operationId, error, at } = data;
        if (error === null) {
          await this.commands.execute(
            new ReportOperationStep(
              operationId,
              RESTORE_STEP,
              { completed: true, detail: 'restored by Velero' },
              ctx(operationId, 'restore-completed', at),
            ),
          );
        }
        await this.commands.execute(
          new EndOperation(operationId, error, ctx(operationId, 'end', at)),
        );
      },
    };
  }
}
