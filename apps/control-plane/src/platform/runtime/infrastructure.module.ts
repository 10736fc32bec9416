import path from 'node:path';
import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import {
  CheckpointStore,
  CommandPipeline,
  ReadModelCheckpointStore,
  SqliteCheckpointStore,
  SubscriptionRunner,
} from '../../../../../libs/cqrs/src';
import { EventStore } from '../../../../../libs/eventstore/src/port';
import { createEventStore } from '../../../../../libs/eventstore/src';
import { SharedReadsEventStore } from '../../../../../libs/eventstore/src/shared-reads';
import { createDelayedJobs } from '../../../../../libs/jobs/src';
import { InProcessLeaderLease } from '../../../../../libs/jobs/src/in-process-leader-lease';
import { RedisLeaderLease } from '../../../../../libs/jobs/src/redis-leader-lease';
import { systemClock } from '../../../../../libs/kernel/src';
import { createReadModelStore } from '../../../../../libs/readmodels/src';
import { ReadModelStore } from '../../../../../libs/readmodels/src/port';
import { Config } from '../../config/config';
import { failureLog } from '../observability/logger';
import { EventTypes } from './event-types';
import { subscriberFailures } from './failures';
import { LEADER_LEASE, Leadership } from './leadership.service';
import { Runtime } from './runtime.service';
import { SubscriptionsRegistry } from './subscriptions.registry';
import { CHECKPOINTS, CLOCK, CONFIG, DELAYED_JOBS, EVENT_STORE, READ_MODELS } from './tokens';

/** Each store's adapter, chosen by configuration: its URL set, or the embedded one. */
const storeProviders = (config: Config): Provider[] => [
  {
    provide: EVENT_STORE,
    useFactory: () =>
      createEventStore({
        eventstoreUrl: config.eventstoreUrl,
        dataDir: config.dataDir,
        log: failureLog('eventstore'),
      }),
  },
  {
    provide: READ_MODELS,
    useFactory: () =>
      createReadModelStore({ mongoUrl: config.mongoUrl, log: failureLog('readmodels') }),
  },
  {
    provide: DELAYED_JOBS,
    useFactory: () =>
      createDelayedJobs({
        redisUrl: config.redisUrl,
        prefix: config.redisPrefix,
        log: failureLog('jobs'),
      }),
  },
  {
    provide: LEADER_LEASE,
    useFactory: () =>
      config.redisUrl
        ? new RedisLeaderLease({
            redisUrl: config.redisUrl,
            prefix: config.redisPrefix,
            lease: config.leaderLeaseSec * 1000,
            log: failureLog('leadership'),
          })
        : new InProcessLeaderLease(),
  },
  {
    provide: CHECKPOINTS,
    inject: [READ_MODELS],
    useFactory: (readModels: ReadModelStore): CheckpointStore =>
      config.mongoUrl
        ? new ReadModelCheckpointStore(readModels)
        : new SqliteCheckpointStore(path.join(config.dataDir, 'checkpoints.db')),
  },
];

/**
 * The stores every feature shares, each chosen by configuration: production adapters when
 * their URL is set, embedded ones otherwise.
 */
@Global()
@Module({})
export class InfrastructureModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: InfrastructureModule,
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: CLOCK, useValue: systemClock },
        ...storeProviders(config),
        Leadership,
        {
          provide: CommandPipeline,
          inject: [EVENT_STORE],
          useFactory: (store: EventStore) => new CommandPipeline(store),
        },
        {
          provide: SubscriptionRunner,
          inject: [EVENT_STORE],
          // Every subscriber reads the same new events after an append: fetched and parsed once.
          useFactory: (store: EventStore) =>
            new SubscriptionRunner(new SharedReadsEventStore(store), {
              onError: subscriberFailures(failureLog('subscriptions')),
            }),
        },
        SubscriptionsRegistry,
        EventTypes,
        Runtime,
      ],
      exports: [
        CONFIG,
        CLOCK,
        EVENT_STORE,
        READ_MODELS,
        DELAYED_JOBS,
        CHECKPOINTS,
        CommandPipeline,
        SubscriptionRunner,
        SubscriptionsRegistry,
        EventTypes,
        Leadership,
        Runtime,
      ],
    };
  }
}
