import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';
import { EventTypes } from '../platform/runtime/event-types';
import { Config } from '../config/config';
import { Runtime } from '../platform/runtime/runtime.service';
import { CONFIG } from '../platform/runtime/tokens';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { DrainSaga } from './drain.saga';
import { drainCodec } from './drain.workflow';
import { DrainsController } from './drains.controller';
import { DrainNodeHandler } from './drain-node.handler';
import { drainsProjection } from './drains.projection';
import { DrainsService } from './drains.service';

@Module({
  controllers: [DrainsController],
  providers: [DrainSaga, DrainsService, DrainNodeHandler],
})
export class DrainsModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
    @Inject(DrainSaga) private readonly saga: DrainSaga,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  onModuleInit(): void {
    this.types.register(drainCodec as unknown as EventCodec<Message>);
    this.registry.addProjection(drainsProjection);
    this.registry.addReactor({ name: 'drain-saga', react: (e) => this.saga.react(e) });
    this.saga.register();
    this.runtime.afterStart(() => this.saga.reconcile());
    // Redis may lose jobs while we run (restarted empty, flushed): re-arm what is gone.
    this.runtime.every(
      'drains-repair',
      this.config.jobsRepairSec * 1000,
      async () => void (await this.saga.repair()),
    );
  }
}
