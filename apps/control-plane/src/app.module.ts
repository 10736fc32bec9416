import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { Config } from './config/config';
import { AuditModule } from './audit';
import { BillingModule } from './billing';
import { ClustersModule } from './clusters';
import { PoolsModule } from './pools';
import { OperationsModule } from './operations';
import { KubeconfigModule } from './kubeconfig';
import { DrainsModule } from './drains';
import { NodesModule } from './nodes';
import { SessionsModule } from './sessions';
import { NotificationsModule } from './notifications';
import { MeshModule } from './mesh';
import { BackupsModule } from './backups';
import { IdempotencyModule } from './platform/idempotency/idempotency.module';
import { AuthModule } from './platform/auth/auth.module';
import { InfrastructureModule } from './platform/runtime/infrastructure.module';
import { ObservabilityModule } from './platform/observability/observability.module';

@Module({})
export class AppModule {
  /** `jwtSecret` is resolved before the app starts (configured, or generated into DATA_DIR). */
  static forRoot(config: Config, jwtSecret: string): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // First: its start registers the bus handlers, which the runtime's start (reactors,
        // reconcilers) already sends commands to. Global modules start in the order listed.
        CqrsModule.forRoot(),
        InfrastructureModule.forRoot(config),
        AuthModule.forRoot(jwtSecret),
        IdempotencyModule,
        ObservabilityModule,
        AuditModule,
        NotificationsModule,
        NodesModule,
        BillingModule,
        SessionsModule,
        DrainsModule,
        ClustersModule,
        PoolsModule,
        OperationsModule,
        KubeconfigModule,
        MeshModule,
        BackupsModule,
      ],
    };
  }
}
