import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { EventCodec, Message } from '@fleet/kernel';
import { EventTypes } from '../platform/runtime/event-types';
import { Runtime } from '../platform/runtime/runtime.service';
import { Config } from '../config/config';
import { CONFIG } from '../platform/runtime/tokens';
import { SubscriptionsRegistry } from '../platform/runtime/subscriptions.registry';
import { HeartbeatModule } from '../nodes';
import { PlacementIndex } from './placement-index';
import { PlacementService } from './placement.service';
import { PoolAccessRule } from '../pools';
import { POOL_ACCESS } from './pool-access';
import { SessionProcessReactor } from './session-process.reactor';
import { SessionQueueSaga } from './session-queue.saga';
import { sessionCodec } from './session.events';
import { SessionsController } from './sessions.controller';
import { PauseSessionHandler } from './pause-session.handler';
import { ResumeSessionHandler } from './resume-session.handler';
import { TerminateSessionHandler } from './terminate-session.handler';
import { TryPlaceSessionHandler } from './try-place-session.handler';
import { ReleasePlacementHandler } from './release-placement.handler';
import { GetSessionStateHandler } from './get-session-state.handler';
import { sessionsProjection } from './sessions.projection';
import { SessionsService } from './sessions.service';

@Module({
  imports: [HeartbeatModule],
  controllers: [SessionsController],
  providers: [
    { provide: POOL_ACCESS, useClass: PoolAccessRule },
    PlacementIndex,
    PlacementService,
    SessionsService,
    SessionProcessReactor,
    SessionQueueSaga,
    PauseSessionHandler,
    ResumeSessionHandler,
    TerminateSessionHandler,
    TryPlaceSessionHandler,
    ReleasePlacementHandler,
    GetSessionStateHandler,
  ],
})
export class SessionsModule implements OnModuleInit {
  constructor(
    @Inject(SubscriptionsRegistry) private readonly registry: SubscriptionsRegistry,
    @Inject(EventTypes) private readonly types: EventTypes,
    @Inject(SessionProcessReactor) private readonly process: SessionProcessReactor,
    @Inject(SessionQueueSaga) private readonly queue: SessionQueueSaga,
    @Inject(Runtime) private readonly runtime: Runtime,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  onModuleInit(): void {
    this.types.register(sessionCodec as unknown as EventCodec<Message>);
    this.registry.addProjection(sessionsProjection);
    this.registry.addReactor({ name: 'session-process', react: (e) => this.process.react(e) });
    this.registry.addReactor({ name: 'session-queue', react: (e) => this.queue.react(e) });
    this.queue.register();
    // One pass at start: sessions left queued by a crash (or by lost timers) are looked at again.
    this.runtime.afterStart(() => this.queue.kick());
    // Redis may lose the pass (restarted empty) or refuse one (down when it was asked for).
    this.runtime.every('session-queue-repair', this.config.jobsRepairSec * 1000, () =>
      this.queue.repair(),
    );
  }
}
