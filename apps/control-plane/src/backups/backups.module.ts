import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';
import { Config } from '../config/config';
import { EventTypes } from '../platform/runtime/event-types';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { CONFIG } from '../platform/runtime/tokens';
import { backupCodec, backupPolicyCodec } from './backup.events';
import { BackupSaga } from './backup.saga';
import { RestoreSaga } from './restore.saga';
import { RestoresService } from './restores.service';
import { BackupScheduleSaga } from './backup-schedule.saga';
import { BackupPoliciesService } from './backup-policies.service';
import { backupPoliciesProjection } from './backup-policies.projection';
import { BackupsController } from './backups.controller';
import { backupsProjection } from './backups.projection';
import { BackupsService } from './backups.service';
import { HttpVelero } from './http-velero';
import { SimulatedVelero } from './simulated-velero';
import { VELERO } from './velero.port';
import { VeleroAtCreateReactor } from './velero-at-create.reactor';
import { BackupPoliciesOfHandler } from './backup-policies-of.handler';

@Module({
  controllers: [BackupsController],
  providers: [
    BackupsService,
    BackupPoliciesService,
    BackupSaga,
    BackupScheduleSaga,
    RestoresService,
    RestoreSaga,
    VeleroAtCreateReactor,
    BackupPoliciesOfHandler,
    {
      // VELERO_URL set: a Velero controller's HTTP API; unset: backups simulated in process.
      provide: VELERO,
      useFactory: (config: Config) =>
        config.veleroUrl ? new HttpVelero(config.veleroUrl) : new SimulatedVelero(),
      inject: [CONFIG],
    },
  ],
})
export class BackupsModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
  ) {}

  onModuleInit(): void {
    this.types.register(backupCodec as unknown as EventCodec<Message>);
    this.types.register(backupPolicyCodec as unknown as EventCodec<Message>);
    this.registry.addProjection(backupsProjection);
    this.registry.addProjection(backupPoliciesProjection);
  }
}
