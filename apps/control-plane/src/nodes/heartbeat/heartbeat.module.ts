import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Config } from '../../config/config';
import { CONFIG } from '../../platform/runtime/tokens';
import { HeartbeatStore, MemoryHeartbeatStore, RedisHeartbeatStore } from './heartbeat.store';

export const HEARTBEATS = Symbol('HEARTBEATS');

@Module({
  providers: [
    {
      provide: HEARTBEATS,
      inject: [CONFIG],
      useFactory: (config: Config): HeartbeatStore =>
        config.redisUrl
          ? new RedisHeartbeatStore(config.redisUrl, config.redisPrefix)
          : new MemoryHeartbeatStore(),
    },
  ],
  exports: [HEARTBEATS],
})
export class HeartbeatModule implements OnApplicationShutdown {
  constructor(@Inject(HEARTBEATS) private readonly store: HeartbeatStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
