import path from 'node:path';
import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { Config } from '../../config/config';
import { CONFIG } from '../runtime/tokens';
import { IDEMPOTENCY_STORE } from './idempotency.hooks';
import {
  IdempotencyStore,
  RedisIdempotencyStore,
  SqliteIdempotencyStore,
} from './idempotency.store';

@Module({
  providers: [
    {
      provide: IDEMPOTENCY_STORE,
      inject: [CONFIG],
      useFactory: (config: Config): IdempotencyStore =>
        config.redisUrl
          ? new RedisIdempotencyStore(config.redisUrl, config.redisPrefix)
          : new SqliteIdempotencyStore(path.join(config.dataDir, 'platform.db')),
    },
  ],
  // The hooks that use it are installed on Fastify by createApp (installIdempotency).
  exports: [IDEMPOTENCY_STORE],
})
export class IdempotencyModule implements OnApplicationShutdown {
  constructor(@Inject(IDEMPOTENCY_STORE) private readonly store: IdempotencyStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
