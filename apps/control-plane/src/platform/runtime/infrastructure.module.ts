import path from 'node:path';
import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import {
  CheckpointStore,
  CommandPipeline,
  ReadModelCheckpointStore,
  SqliteCheckpointStore,
  SubscriptionRunner,
} from '@fleet/cqrs';
import { EventStore } from '@fleet/eventstore/port';
import { createEventStore } from '@fleet/eventstore';
import { SharedReadsEventStore } from '@fleet/eventstore/shared-reads';
import { createDelayedJobs } from '@fleet/jobs';
import { InProcessLeaderLease } from '@fleet/jobs/in-process-leader-lease';
import type { LeaderLease } from '@fleet/jobs/leader-lease';
import { RedisLeaderLease } from '@fleet/jobs/redis-leader-lease';
import { systemClock } from '@fleet/kernel';
import { createReadModelStore } from '@fleet/readmodels';
import { ReadModelStore } from '@fleet/readmodels/port';
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
        {
          provide: Leadership,
          inject: [LEADER_LEASE, CommandPipeline],
          useFactory: (lease: LeaderLease, pipeline: CommandPipeline) =>
            new Leadership(lease, pipeline, config.eventstoreUrl !== undefined),
        },
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
