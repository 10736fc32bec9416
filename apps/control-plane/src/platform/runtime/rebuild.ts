import { DynamicModule, Global, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CheckpointStore, Projection, projectionSubscriber } from '@fleet/cqrs';
import { EventStore, LOG_START, LogPosition } from '@fleet/eventstore/port';
import { ReadModelStore } from '@fleet/readmodels/port';
import { Runtime, RuntimeMode } from './runtime.service';
import { SubscriptionsRegistry } from './subscriptions.registry';
import { CHECKPOINTS, EVENT_STORE, READ_MODELS, RUNTIME_MODE } from './tokens';

/** What a rebuild needs when it runs outside a Nest context (tests, tools). */
export type RebuildPorts = {
  readonly eventStore: EventStore;
  readonly readModels: ReadModelStore;
  readonly projections: readonly Projection[];
  /**
   * Reactor checkpoints to carry across the reset. With MongoDB they live in the read-model
   * database, which the reset drops; losing them would replay every reactor from 0 (webhooks
   * sent again). Their names are the reactors' names.
   */
  readonly reactorCheckpoints?: {
    readonly store: CheckpointStore;
    readonly names: readonly string[];
  };
};

export type RebuildOptions = {
  /** Events read (and committed, with the checkpoint) per page. */
  readonly pageSize?: number;
};

export type RebuildResult = {
  /** Events replayed through every projection. */
  readonly events: number;
  readonly pages: number;
  /** The global position every projection's checkpoint now stands at. */
  readonly position: LogPosition;
  readonly projections: readonly string[];
  /** Documents per read-model collection after the rebuild. */
  readonly collections: Readonly<Record<string, number>>;
  readonly durationMs: number;
};

const DEFAULT_PAGE_SIZE = 2000;

const isPorts = (source: INestApplicationContext | RebuildPorts): source is RebuildPorts =>
  'eventStore' in source && 'readModels' in source && 'projections' in source;

/** The ports of a Nest context whose runtime is in maintenance mode (nothing else writes). */
const portsOf = (app: INestApplicationContext): RebuildPorts => {
  const runtime = app.get(Runtime, { strict: false });
  if (runtime.mode !== 'maintenance') {
    // Live projections would write into the store while it is reset under them.
    throw new Error('rebuildReadModels needs a context whose runtime is in maintenance mode');
  }
  const registry = app.get(SubscriptionsRegistry, { strict: false });
  return {
    eventStore: app.get<EventStore>(EVENT_STORE, { strict: false }),
    readModels: app.get<ReadModelStore>(READ_MODELS, { strict: false }),
    projections: registry.projections,
    reactorCheckpoints: {
      store: app.get<CheckpointStore>(CHECKPOINTS, { strict: false }),
      names: registry.reactors.map((r) => r.name),
    },
  };
};

/**
 * Drops every read model and replays the whole log through every projection, reading each
 * page once and committing each projection's writes with its checkpoint, so a rebuild that
 * stops half-way resumes from there at the next start. Nothing else may write the read
 * models meanwhile: pass a maintenance-mode context or plain ports.
 */
export const rebuildReadModels = async (
  source: INestApplicationContext | RebuildPorts,
  options: RebuildOptions = {},
): Promise<RebuildResult> => {
  const started = Date.now();
  const { eventStore, readModels, projections, reactorCheckpoints } = isPorts(source)
    ? source
    : portsOf(source);
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;

  const kept = new Map<string, LogPosition>();
  for (const name of reactorCheckpoints?.names ?? []) {
    kept.set(name, (await reactorCheckpoints?.store.load(name)) ?? LOG_START);
  }
  await readModels.reset();
  for (const [name, position] of kept) {
    if (position > LOG_START) await reactorCheckpoints?.store.save(name, position);
  }

  const subscribers = projections.map((p) => projectionSubscriber(p, readModels));
  let position = LOG_START;
  let events = 0;
  let pages = 0;
  for (;;) {
    const page = await eventStore.readAll({ after: position, limit: pageSize });
    if (page.length === 0) break;
    const last = page[page.length - 1].position;
    for (const subscriber of subscribers) {
      await subscriber.handle(page);
      await subscriber.saveCheckpoint(last);
    }
    position = last;
    events += page.length;
    pages += 1;
  }

  const collections: Record<string, number> = {};
  for (const projection of projections) {
    for (const c of projection.collections) {
      collections[c.name] = await readModels.count(c.name, {});
    }
  }
  return {
    events,
    pages,
    position,
    projections: projections.map((p) => p.name),
    collections,
    durationMs: Date.now() - started,
  };
};

@Global()
@Module({})
class RuntimeModeModule {
  static forRoot(mode: RuntimeMode): DynamicModule {
    return {
      module: RuntimeModeModule,
      providers: [{ provide: RUNTIME_MODE, useValue: mode }],
      exports: [RUNTIME_MODE],
    };
  }
}

@Module({})
class MaintenanceRootModule {}

/**
 * The whole application as a Nest context that never listens and whose runtime starts no
 * projections, reactors or jobs: the stores open (and close with the context), features
 * register their projections, and nothing but the caller touches the read models.
 */
export const createMaintenanceContext = (
  appModule: DynamicModule,
  options: Parameters<typeof NestFactory.createApplicationContext>[1] = {},
): Promise<INestApplicationContext> =>
  NestFactory.createApplicationContext(
    {
      module: MaintenanceRootModule,
      imports: [RuntimeModeModule.forRoot('maintenance'), appModule],
    },
    options,
  );
