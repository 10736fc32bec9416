import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { Config } from './config/config';
import { AuditModule } from './audit/audit.module';
import { BillingModule } from './billing/billing.module';
import { ClustersModule } from './clusters';
import { PoolsModule } from './pools/pools.module';
import { OperationsModule } from './operations/operations.module';
import { DrainsModule } from './drains/drains.module';
import { NodesModule } from './nodes';
import { SessionsModule } from './sessions/sessions.module';
import { NotificationsModule } from './notifications/notifications.module';
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
      ],
    };
  }
}
