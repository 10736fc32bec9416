import {
  CommandContext,
  Decider,
  EventCodec,
  EventMetadata,
  Message,
  Turns,
  eventIdFor,
  isoTime,
} from '../../kernel/src';
import {
  ConcurrencyConflictError,
  EventStore,
  ExpectedRevision,
  LOG_START,
  LogPosition,
  NewEvent,
} from '../../eventstore/src/port';
import { AggregateCache, CachedState } from './aggregate-cache';

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

  constructor(
    private readonly store: EventStore,
    private readonly options: { maxAttempts?: number; cacheSize?: number } = {},
  ) {
    this.cache = new AggregateCache(options.cacheSize);
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
   * Decides many commands that usually change nothing (e.g. a report of unchanged nodes)
   * without queueing each one: `commands[i]` is decided on `streamIds[i]`'s state when that
   * state is cached at the store's current revision and no command on the stream is in flight
   * in this process. Where the decider returns no events, the result is the no-op result
   * `handle` would give (reported to the observer as one); everywhere else (not cached, stale,
   * busy, or events to append) the entry is undefined and the caller sends it to `handle`.
   */
  async decideNoops<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamIds: readonly string[],
    commands: readonly C[],
  ): Promise<Array<CommandResult<E, S> | undefined>> {
    const now = this.decideNoopsNow(aggregate, streamIds, commands);
    if (now !== null) return now;
    const started = performance.now();
    const heads = await this.streamRevisions(streamIds);
    return this.noopsAt(aggregate, streamIds, commands, heads, started);
  }

  /**
   * `decideNoops` at once, without a promise, from a store that reads its heads in process
   * (`EventStore.streamRevisionsNow`); null from any other store (the caller awaits
   * `decideNoops`). A report that changes nothing waits no turn of the event loop here.
   */
  decideNoopsNow<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamIds: readonly string[],
    commands: readonly C[],
  ): Array<CommandResult<E, S> | undefined> | null {
    if (!this.store.streamRevisionsNow) return null;
    const started = performance.now();
    const heads = this.store.streamRevisionsNow(streamIds);
    return this.noopsAt(aggregate, streamIds, commands, heads, started);
  }

  /** The no-op pass of `decideNoops` against the streams' current heads. */
  private noopsAt<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamIds: readonly string[],
    commands: readonly C[],
    heads: ReadonlyArray<number | null>,
    started: number,
  ): Array<CommandResult<E, S> | undefined> {
    const out: Array<CommandResult<E, S> | undefined> = new Array(streamIds.length);
    // No-ops by command type: one outcome per type for the whole pass.
    let noops: Map<string, number> | undefined;
    for (let i = 0; i < streamIds.length; i++) {
      const streamId = streamIds[i];
      const head = heads[i];
      if (head === null || this.turns.busy(streamId)) continue;
      const cached = this.cache.get<S>(aggregate.name, streamId);
      if (cached === undefined || cached.revision !== head) continue;
      const events = aggregate.decider.decide(commands[i], cached.state);
      if (events.length > 0) continue;
      const type = commands[i].type;
      (noops ??= new Map()).set(type, (noops.get(type) ?? 0) + 1);
      out[i] = {
        events,
        state: cached.state,
        revision: head,
        appended: false,
        position: LOG_START,
        headPosition: cached.position,
      };
    }
    if (noops && this.observer) {
      const ms = performance.now() - started;
      for (const [command, count] of noops)
        this.observer({ aggregate: aggregate.name, command, ms, result: 'noop', events: 0, count });
    }
    return out;
  }

  private streamRevisions(streamIds: readonly string[]): Promise<Array<number | null>> {
    if (this.store.streamRevisions) return this.store.streamRevisions(streamIds);
    return Promise.all(streamIds.map((id) => this.store.streamRevision(id)));
  }

  /**
   * Commands on one stream run one at a time in this process, so replicas of a hot stream
   * never race each other here; revision conflicts remain for writers in other processes.
   *
   * The common admin command changes nothing (a cordon of a cordoned node): when nothing is in
   * flight on the stream here and its cached state decides no events, the command does not
   * queue; it is a no-op once the store confirms the cached revision is still the head (what
   * `run` would find), and takes its turn otherwise. Commands that append, are refused, or
   * find the stream busy or not cached take their turn at once, in the order they came.
   */
  handle<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamId: string,
    command: C,
    context: CommandContext,
  ): Promise<CommandResult<E, S>> {
    if (!this.turns.busy(streamId)) {
      const started = performance.now();
      const cached = this.cache.get<S>(aggregate.name, streamId);
      if (cached !== undefined && decidesNothing(aggregate.decider, command, cached.state)) {
        return this.confirmNoop(aggregate, streamId, command, context, cached, started);
      }
    }
    return this.turns.run(streamId, () => this.run(aggregate, streamId, command, context));
  }

  private async confirmNoop<C extends Message, E extends Message, S>(
    aggregate: Aggregate<C, E, S>,
    streamId: string,
    command: C,
    context: CommandContext,
    cached: CachedState<S>,
    started: number,
  ): Promise<CommandResult<E, S>> {
    let head: number | null;
    try {
      head = await this.store.streamRevision(streamId);
    } catch (error) {
      // The store out of reach: counted as `run` counts it.
      this.report(aggregate, command, started, 'error', 0);
      throw error;
    }
    if (head !== cached.revision) {
      // Another writer appended since: decided afresh on what it wrote.
      return this.turns.run(streamId, () => this.run(aggregate, streamId, command, context));
    }
    this.report(aggregate, command, started, 'noop', 0);
    return {
      events: [],
      state: cached.state,
      revision: head,
      appended: false,
      position: LOG_START,
      headPosition: cached.position,
    };
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

/** Whether `command` changes nothing in `state`; a refusal is left to the full path to report. */
const decidesNothing = <C extends Message, S>(
  decider: Pick<Decider<C, Message, S>, 'decide'>,
  command: C,
  state: S,
): boolean => {
  try {
    return decider.decide(command, state).length === 0;
  } catch {
    return false;
  }
};
