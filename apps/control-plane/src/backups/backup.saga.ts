import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Carriers, CommandPipeline, WorkflowRunner, sendCommand } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { Clock, systemContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { Config } from '../config/config';
import { Runtime } from '../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CLOCK, CONFIG, READ_MODELS } from '../platform/runtime/tokens';
import { BackupState, backupAggregate } from './backup.decider';
import { backupCodec, backupStreamId } from './backup.events';
import { BackupInput, BackupOutput, backupWorkflow } from './backup.workflow';
import { BACKUPS, BackupDoc } from './backups.projection';
import { VELERO, Velero } from './velero.port';

type StepOutput = Exclude<BackupOutput, { type: 'AskVelero' }>;

/**
 * Runs each backup's workflow (backup.workflow.ts) on its moves from the log, on Velero's
 * answers, and on the leader's sweep (at start and every JOBS_REPAIR_SEC): work a restart left
 * in flight is asked again, finished backups past their time are deleted and expired.
 */
@Injectable()
export class BackupSaga implements OnModuleInit {
  private readonly logger = new Logger('backups');
  private readonly runner: WorkflowRunner<BackupInput, BackupOutput, BackupState>;
  private readonly asking = new Set<string>();

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(VELERO) private readonly velero: Velero,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.runner = new WorkflowRunner({
      workflow: backupWorkflow,
      load: async (id) => (await this.pipeline.load(backupAggregate, backupStreamId(id))).state,
      carriers: this.carriers(),
      clock,
    });
  }

  onModuleInit(): void {
    this.registry.addReactor({ name: 'backups', react: (e) => this.react(e) });
    this.runtime.afterStart(() => this.sweep());
    this.runtime.every('backups-sweep', this.config.jobsRepairSec * 1000, () => this.sweep());
  }

  async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('backup-')) return;
    const event = backupCodec.decode(stored.type, stored.data);
    if (event?.type !== 'BackupRequested' && event?.type !== 'BackupStarted') return;
    const to = event.type === 'BackupRequested' ? 'pending' : 'running';
    const { backupId, at } = event.data;
    await this.runner.run(backupId, { type: 'BackupMoved', data: { backupId, to, at } });
  }

  /** Backups at work, and finished ones whose time has come. */
  async sweep(at: Date = this.clock.now()): Promise<void> {
    const now = at.toISOString();
    const docs = await findAll<BackupDoc & Doc>(this.readModels, BACKUPS, {
      $or: [
        { status: { $in: ['pending', 'running'] } },
        { status: { $in: ['completed', 'failed'] }, expiresAt: { $lte: now } },
      ],
    });
    for (const { backupId } of docs) {
      await this.runner.run(backupId, { type: 'BackupSweepDue', data: { backupId, at: now } });
    }
  }

  /** Asks Velero without holding the backup's turn: the answer is a run of its own. */
  private ask(
    backupId: string,
    action: 'backup' | 'delete',
    askedAt: string,
    state: BackupState,
  ): void {
    const key = `${backupId}:${action}`;
    if (this.asking.has(key) || state.status === 'absent') return;
    this.asking.add(key);
    const call = async () => {
      const doc = await this.readModels.get<BackupDoc & Doc>(BACKUPS, backupId);
      const job = {
        backupId,
        clusterId: state.clusterId,
        location: state.location,
        includeNamespaces: doc?.includeNamespaces ?? null,
        snapshotVolumes: doc?.snapshotVolumes ?? true,
      };
      const failure = await (
        action === 'backup' ? this.velero.backUp(job) : this.velero.deleteBackup(job)
      ).then(
        () => null,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      await this.runner.run(backupId, (now) => ({
        type: 'VeleroAnswered',
        data: { backupId, action, failure, at: action === 'delete' ? askedAt : now.toISOString() },
      }));
    };
    void call()
      .catch((error: unknown) =>
        this.logger.warn(`${action} of backup ${backupId}: ${String(error)}`),
      )
      .finally(() => this.asking.delete(key));
  }

  private carriers(): Carriers<BackupInput, BackupOutput, BackupState> {
    // Each step happens once in a backup's life: its command id follows from the two.
    const step = sendCommand(this.pipeline, backupAggregate, (output: StepOutput) => ({
      streamId: backupStreamId(output.data.backupId),
      command: output,
      context: systemContext(uuidFrom(output.data.backupId, output.type), {
        correlationId: output.data.backupId,
        now: new Date(output.data.at),
      }),
    }));
    return {
      StartBackup: step,
      CompleteBackup: step,
      FailBackup: step,
      ExpireBackup: step,
      AskVelero: async ({ data }, run) => this.ask(data.backupId, data.action, data.at, run.state),
    };
  }
}
