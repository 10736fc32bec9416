import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Carriers, CommandPipeline, WorkflowRunner, cancelTimer, scheduleTimer } from '@fleet/cqrs';
import { StoredEvent } from '@fleet/eventstore/port';
import { DelayedJobs } from '@fleet/jobs/port';
import { Clock, DomainError, systemContext, uuidFrom } from '@fleet/kernel';
import { Doc, ReadModelStore, findAll } from '@fleet/readmodels/port';
import { Config } from '../config/config';
import { Runtime } from '../platform/runtime/runtime.service';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CLOCK, CONFIG, DELAYED_JOBS, READ_MODELS } from '../platform/runtime/tokens';
import { backupPolicyCodec, backupPolicyStreamId } from './backup.events';
import { BackupPolicyState, backupPolicyAggregate } from './backup-policy.decider';
import { BACKUP_POLICIES, BackupPolicyDoc } from './backup-policies.projection';
import {
  BackupScheduleInput,
  BackupScheduleOutput,
  backupScheduleWorkflow,
} from './backup-schedule.workflow';
import { BackupsService } from './backups.service';

export const BACKUP_SCHEDULE_QUEUE = 'backup-schedule';

/**
 * Runs each cluster's backup schedule (backup-schedule.workflow.ts): one delayed job per
 * cluster (id = clusterId) for its next slot, re-decided on a policy change and by the
 * leader's repair (at start and every JOBS_REPAIR_SEC), which also takes a slot missed while
 * the control plane was down, once. A taken slot becomes its backup by a reactor on the log.
 */
@Injectable()
export class BackupScheduleSaga implements OnModuleInit {
  private readonly logger = new Logger('backups');
  private readonly runner: WorkflowRunner<
    BackupScheduleInput,
    BackupScheduleOutput,
    BackupPolicyState
  >;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CommandPipeline) private readonly pipeline: CommandPipeline,
    @Inject(READ_MODELS) private readonly readModels: ReadModelStore,
    @Inject(DELAYED_JOBS) private readonly jobs: DelayedJobs,
    @Inject(BackupsService) private readonly backups: BackupsService,
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CLOCK) clock: Clock,
  ) {
    this.runner = new WorkflowRunner({
      workflow: backupScheduleWorkflow,
      load: async (clusterId) =>
        (await this.pipeline.load(backupPolicyAggregate, backupPolicyStreamId(clusterId))).state,
      carriers: this.carriers(),
      clock,
    });
  }

  onModuleInit(): void {
    this.jobs.register<{ clusterId: string }>(BACKUP_SCHEDULE_QUEUE, async ({ clusterId }) => {
      await this.wake(clusterId, 'BackupScheduleDue');
    });
    this.registry.addReactor({ name: 'backup-schedule', react: (e) => this.react(e) });
    this.runtime.afterStart(() => this.repair());
    this.runtime.every('backup-schedule-repair', this.config.jobsRepairSec * 1000, () =>
      this.repair(),
    );
  }

  async react(stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('backup-policy-')) return;
    const event = backupPolicyCodec.decode(stored.type, stored.data);
    if (event?.type === 'BackupPolicySet') {
      await this.wake(event.data.clusterId, 'BackupPolicyChanged');
    } else if (event?.type === 'BackupSlotTaken') {
      await this.backUp(event.data, stored.eventId);
    }
  }

  /** Every enabled policy, woken: missed slots taken once, lost timers armed again. */
  async repair(at?: Date): Promise<void> {
    const docs = await findAll<BackupPolicyDoc & Doc>(this.readModels, BACKUP_POLICIES, {
      enabled: true,
    });
    for (const { clusterId } of docs) await this.wake(clusterId, 'BackupScheduleRepairDue', at);
  }

  /** `at`: the time to decide at (the run's clock when not given). */
  private wake(clusterId: string, type: BackupScheduleInput['type'], at?: Date) {
    return this.runner.run(clusterId, (now) => ({
      type,
      data: { clusterId, at: (at ?? now).toISOString() },
    }));
  }

  /** The slot's backup (its id the slot's): a cluster not running now misses this slot. */
  private async backUp(
    slot: { clusterId: string; slotAt: string; backupId: string },
    eventId: string,
  ): Promise<void> {
    const policy = await this.readModels.get<BackupPolicyDoc & Doc>(
      BACKUP_POLICIES,
      slot.clusterId,
    );
    const ctx = systemContext(uuidFrom(eventId, 'scheduled-backup'), {
      correlationId: slot.backupId,
    });
    try {
      await this.backups.request(
        slot.clusterId,
        {
          trigger: 'schedule',
          slotAt: slot.slotAt,
          ttlHours: policy?.ttlHours ?? 720,
          includeNamespaces: policy?.includeNamespaces ?? null,
          snapshotVolumes: true,
        },
        ctx,
        slot.backupId,
      );
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      this.logger.warn(
        `scheduled backup of ${slot.clusterId} at ${slot.slotAt} skipped: ${error.message}`,
      );
    }
  }

  private carriers(): Carriers<BackupScheduleInput, BackupScheduleOutput, BackupPolicyState> {
    return {
      TakeBackupSlot: async ({ data }) => {
        const { clusterId, slotAt, at } = data;
        const backupId = uuidFrom('scheduled-backup', clusterId, slotAt);
        await this.pipeline.handle(
          backupPolicyAggregate,
          backupPolicyStreamId(clusterId),
          { type: 'TakeBackupSlot', data: { clusterId, slotAt, backupId, at } },
          systemContext(uuidFrom(clusterId, slotAt, 'slot'), {
            correlationId: backupId,
            now: new Date(at),
          }),
        );
      },
      ArmBackupSchedule: scheduleTimer(this.jobs, BACKUP_SCHEDULE_QUEUE, ({ data }) => ({
        jobId: data.clusterId,
        runAt: Date.parse(data.runAt),
        payload: { clusterId: data.clusterId },
      })),
      DisarmBackupSchedule: cancelTimer(
        this.jobs,
        BACKUP_SCHEDULE_QUEUE,
        ({ data }) => data.clusterId,
      ),
    };
  }
}
