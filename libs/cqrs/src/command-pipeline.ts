import {
  CommandContext,
  Decider,
  EventCodec,
  EventMetadata,
  Made,
  Message,
  Turns,
  eventIdFor,
  isLater,
  isoTime,
} from '@fleet/kernel';
import {
  ConcurrencyConflictError,
  EventStore,
  ExpectedRevision,
  LOG_START,
  LogPosition,
  NewEvent,
} from '@fleet/eventstore/port';
import { AggregateCache, CachedState } from './aggregate-cache';
import { NoopFastPath } from './noop-fast-path';

/** An aggregate (or workflow) as the pipeline sees it: its decider and how its events are stored. */
export type Aggregate<C extends Message, E extends Message, S> = {
  readonly name: string;
  readonly decider: Decider<C, E, S>;
  readonly codec: EventCodec<E>;
};

export type CommandResult<E, S> = {
  readonly events: readonly E[];
  readonly state: S;
  /** The stream's revision after the command, null when the stream still does not exist. */
  readonly revision: number | null;
  /** False when nothing was appended: the decider saw nothing to change, or an idempotent replay. */
  readonly appended: boolean;
  /** Global position of the last event appended (LOG_START when nothing was), for read-your-writes waits. */
  readonly position: LogPosition;
  /**
   * Global position of the stream's last event that `state` includes (LOG_START when none):
   * for a command that changed nothing, what a read-your-writes wait waits for, since the
   * state it was decided on may be newer than a read model (another request's append).
   */
  readonly headPosition: LogPosition;
};

export type PipelineObserver = (outcome: {
  aggregate: string;
  command: string;
  ms: number;
  result: 'ok' | 'noop' | 'refused' | 'error';
  events: number;
  /**
   * How many commands this outcome stands for (absent: one). `decideNoops` reports the
   * no-ops of one pass per command type at once, each taking the pass's `ms`.
   */
  count?: number;
}) => void;

export const SCHEMA_VERSION = 1;

/** What folding a stream takes: an aggregate's name (its cache key), evolve and codec. */
type Folding<E extends Message, S> = {
  readonly name: string;
  readonly decider: Pick<Decider<never, E, S>, 'evolve' | 'initialState'>;
  readonly codec: EventCodec<E>;
};

/** Events read per page when folding a stream. */
const FOLD_PAGE = 1000;

/**
 * The one generic command path: load (cached fold of `evolve`) → `decide` → append with
 * the revision read. A revision conflict reloads and decides again (bounded); nothing
 * else is retried, and nothing ever overwrites.
 */
export class CommandPipeline {
  private readonly cache: AggregateCache;
  /** Commands on one stream, one at a time in this process. */
  private readonly turns = new Turns();
  private observer: PipelineObserver | undefined;
  private readonly fastPath: NoopFastPath | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly options: {
      maxAttempts?: number;
      cacheSize?: number;
      /** False: every command takes the plain path (for the fast path's parity spec). */
      noopFastPath?: boolean;
    } = {},
  ) {
    this.cache = new AggregateCache(options.cacheSize);
    if (options.noopFastPath !== false) {
      this.fastPath = new NoopFastPath(store, this.cache, this.turns, (o) => this.observer?.(o));
    }
  }

  onOutcome(observer: PipelineObserver): void {
    this.observer = observer;
  }

  async load<E extends Message, S>(
    aggregate: Folding<E, S>,
    streamId: string,
  ): Promise<{ state: S; revision: number | null; position: LogPosition }> {
    const head = await this.store.streamRevision(streamId);
    if (head === null) {
      return { state: aggregate.decider.initialState(), revision: null, position: LOG_START };
    }
    const cached = this.cache.get<S>(aggregate.name, streamId);
    if (cached && cached.revision === head) return cached;
    // Fold only what the cache has not seen yet (another replica may have appended).
    const fromCache = cached !== undefined && cached.revision < head;
    const entry = await this.fold(aggregate, streamId, {
      state: fromCache ? cached.state : aggregate.decider.initialState(),
      from: fromCache ? cached.revision + 1 : 0,
      position: cached?.position ?? LOG_START,
    });
    this.cache.set(aggregate.name, streamId, entry);
    return entry;
  }

  /**
   * The state as of `revision` of the stream, which may be behind its head: for a reaction to
   * an event handled late, which decides on the stream as it was at that event. The cached
   * state when it is at that revision, else folded from the start (and not cached).
   */
  async loadAt<E extends Message, S>(
    aggregate: Folding<E, S>,
    streamId: string,
    revision: number,
  ): Promise<{ state: S; revision: number; position: LogPosition }> {
    const cached = this.cache.get<S>(aggregate.name, streamId);
    if (cached && cached.revision === revision) return cached;
    const initial = { state: aggregate.decider.initialState(), from: 0, position: LOG_START };
    return this.fold(aggregate, streamId, initial, revision);
  }

  /** Folds the stream's events from `start.from` onto `start.state`, up to `until` or its end. */
  private async fold<E extends Message, S>(
    aggregate: Folding<E, S>,
    streamId: string,
    start: { state: S; from: number; position: LogPosition },
    until?: number,
  ): Promise<CachedState<S>> {
    let { state, from, position } = start;
    let revision = from - 1;
    for (;;) {
      const limit = until === undefined ? FOLD_PAGE : Math.min(FOLD_PAGE, until - from + 1);
      if (limit <= 0) break;
      const page = await this.store.readStream(streamId, { fromRevision: from, limit });
      for (const stored of page) {
        const event = aggregate.codec.decode(stored.type, stored.data);
        if (event) state = aggregate.decider.evolve(state, event);
        revision = stored.revision;
        position = stored.position;
      }
      if (page.length < limit) break;
      from = revision + 1;
    }
    return { state, revision, position };
  }

  /**
   * Many commands that usually change nothing (`commands[i]` on `streamIds[i]`: a report of
   * unchanged nodes), decided in one pass without queueing each: the result `handle` would give
   * where the no-op fast path answers (noop-fast-path.ts), undefined where the caller must send
   * the command to `handle`. At once (no promise) from a store that reads its heads in process.
   */
  decideNoops<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamIds: readonly string[],
    commands: readonly C[],
  ): Made<Array<CommandResult<E, S> | undefined>> {
    if (this.fastPath) return this.fastPath.many(aggregate, streamIds, commands);
    return new Array<CommandResult<E, S> | undefined>(streamIds.length);
  }

  /**
   * Commands on one stream run one at a time in this process, so replicas of a hot stream
   * never race each other here; revision conflicts remain for writers in other processes.
   * A command that changes nothing on an idle stream is answered from its cached state once
   * the store confirms the head (noop-fast-path.ts), at once where the store reads it in process.
   */
  handle<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamId: string,
    command: C,
    context: CommandContext,
  ): Promise<CommandResult<E, S>> {
    const run = () => this.run(aggregate, streamId, command, context);
    const noop = this.fastPath?.one(aggregate, streamId, command);
    if (noop === undefined) return this.turns.run(streamId, run);
    // Another writer appended since the cache was filled: decided afresh on what it wrote.
    if (!isLater(noop)) return noop ? Promise.resolve(noop) : this.turns.run(streamId, run);
    return this.turns.run(streamId, async () => (await noop) ?? run());
  }

  private async run<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamId: string,
    command: C,
    context: CommandContext,
  ): Promise<CommandResult<E, S>> {
    const started = performance.now();
    const maxAttempts = this.options.maxAttempts ?? 5;
    try {
      for (let attempt = 1; ; attempt++) {
        const { state, revision, position } = await this.load(aggregate, streamId);
        const events = aggregate.decider.decide(command, state);
        if (events.length === 0) {
          this.report(aggregate, command, started, 'noop', 0);
          return {
            events,
            state,
            revision,
            appended: false,
            position: LOG_START,
            headPosition: position,
          };
        }
        const expected: ExpectedRevision = revision ?? 'no_stream';
        try {
          const result = await this.store.append(
            streamId,
            this.toStored(aggregate.codec, events, context),
            expected,
          );
          if (!result.appended) {
            // An idempotent replay of a command already applied: report the stored state.
            this.cache.invalidate(aggregate.name, streamId);
            const now = await this.load(aggregate, streamId);
            this.report(aggregate, command, started, 'noop', 0);
            return {
              events: [],
              state: now.state,
              revision: now.revision,
              appended: false,
              position: result.position,
              headPosition: now.position,
            };
          }
          const next = events.reduce(aggregate.decider.evolve, state);
          this.cache.set(aggregate.name, streamId, {
            state: next,
            revision: result.revision,
            position: result.position,
          });
          this.report(aggregate, command, started, 'ok', events.length);
          return {
            events,
            state: next,
            revision: result.revision,
            appended: true,
            position: result.position,
            headPosition: result.position,
          };
        } catch (error) {
          if (!(error instanceof ConcurrencyConflictError) || attempt >= maxAttempts) throw error;
          this.cache.invalidate(aggregate.name, streamId);
        }
      }
    } catch (error) {
      const refused = error instanceof Error && 'code' in error && 'kind' in error;
      this.report(aggregate, command, started, refused ? 'refused' : 'error', 0);
      throw error;
    }
  }

  private toStored<E extends Message>(
    codec: EventCodec<E>,
    events: readonly E[],
    context: CommandContext,
  ): NewEvent[] {
    let metadata: EventMetadata = {
      correlationId: context.correlationId,
      causationId: context.causationId,
      actor: context.actor,
      occurredAt: isoTime(context.now.getTime()),
      schemaVersion: SCHEMA_VERSION,
      commandId: context.commandId,
    };
    if (context.leaderEpoch !== undefined) {
      metadata = { ...metadata, leaderEpoch: context.leaderEpoch };
    }
    return events.map((event, index) => ({
      eventId: eventIdFor(context.commandId, index),
      type: codec.storedType(event),
      data: event.data,
      metadata,
    }));
  }

  private report(
    aggregate: { name: string },
    command: Message,
    started: number,
    result: 'ok' | 'noop' | 'refused' | 'error',
    events: number,
  ): void {
    this.observer?.({
      aggregate: aggregate.name,
      command: command.type,
      ms: performance.now() - started,
      result,
      events,
    });
  }
}
