import path from 'node:path';
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
          : new MemoryHeartbeatStore({
              file: path.join(config.dataDir, 'heartbeats'),
              // A crash loses at most a quarter of a stale window of sightings (5 s at most).
              everyMs: Math.max(250, Math.min(5_000, (config.nodeStaleSec * 1000) / 4)),
            }),
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
