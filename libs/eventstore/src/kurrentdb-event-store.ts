import {
  AppendResult as ClientAppendResult,
  BACKWARDS,
  END,
  JSONType,
  KurrentDBClient,
  NO_STREAM,
  Position,
  ReadPosition,
  RecordedEvent,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
} from '@kurrent/kurrentdb-client';
import { FailureSink, ThrottledLog, consoleFailureSink } from '@fleet/kernel/throttled-log';
import { kurrentDbClient } from './kurrentdb-connection';
import {
  isAt,
  isInvalidPosition,
  isSystemStream,
  positionOf,
  readFrom,
  recordPosition,
  serverFilter,
  serverMetadata,
  storeFailure,
  toStored,
  toStreamState,
} from './kurrentdb-mapping';
import { watchAll } from './kurrentdb-subscription';
import {
  AppendResult,
  ConcurrencyConflictError,
  EventStore,
  ExpectedRevision,
  IdempotencyMismatchError,
  InvalidPositionError,
  LOG_START,
  LogPosition,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
} from './port';

// Where callers have always found it.
export { StreamDeletedInStoreError } from './kurrentdb-mapping';

/** The part of the client this store uses: what its unit tests stand in for. */
export type KurrentDbClientLike = Pick<
  KurrentDBClient,
  'appendToStream' | 'readStream' | 'readAll' | 'subscribeToAll' | 'dispose'
>;

export type KurrentDbEventStoreOptions = {
  /** Where background failures (a dropped subscription) are written, throttled. */
  readonly log?: FailureSink;
  /** The first wait before resubscribing after a drop; doubles up to `resubscribeMaxMs`. */
  readonly resubscribeMs?: number;
  readonly resubscribeMaxMs?: number;
};

/** How far back a conflicting append looks for its own ids before calling it a conflict. */
const IDEMPOTENCY_LOOKBACK = 1000;
/** Events read backwards per page while looking for the newest one of ours. */
const HEAD_PAGE = 100;

/**
 * The production event store on KurrentDB (or EventStoreDB 22.6+) through
 * `@kurrent/kurrentdb-client`. Thin on purpose: only what the port adds (idempotent replays
 * reported as no-ops, system events hidden, exclusive `after`) is written here; filtering
 * happens on the server.
 */
export class KurrentDbEventStore implements EventStore {
  private readonly subscriptions = new Set<{ stop(): void }>();
  private readonly errors: ThrottledLog;
  private readonly resubscribeMs: number;
  private readonly resubscribeMaxMs: number;

  constructor(
    private readonly client: KurrentDbClientLike,
    options: KurrentDbEventStoreOptions = {},
  ) {
    this.errors = new ThrottledLog(options.log ?? consoleFailureSink);
    this.resubscribeMs = options.resubscribeMs ?? 250;
    this.resubscribeMaxMs = options.resubscribeMaxMs ?? 10_000;
  }

  static fromConnectionString(
    url: string,
    options: KurrentDbEventStoreOptions = {},
  ): KurrentDbEventStore {
    return new KurrentDbEventStore(kurrentDbClient(url), options);
  }

  async append(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    // The server acknowledges some replays as successes, so a replay at the tail is caught first.
    const tail = await this.storedIds(streamId, events, events.length);
    if (tail === 'partial') return this.replayOrRefuse(streamId, events);
    if (tail !== 'none') return tail;
    let result: ClientAppendResult;
    try {
      result = await this.client.appendToStream(
        streamId,
        events.map((e) =>
          jsonEvent({
            id: e.eventId,
            type: e.type,
            data: e.data as JSONType,
            metadata: serverMetadata(e.metadata),
          }),
        ),
        { streamState: toStreamState(expected) },
      );
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw storeFailure(error, streamId);
      const actual = error.actualState;
      return this.refused(streamId, events, expected, actual === NO_STREAM ? null : Number(actual));
    }
    if (!result.success) {
      // `throwOnAppendFailure=false` in the URL; the revision the client reports then is not
      // the stream's (a batched append says 1 for any), so it is read.
      return this.refused(streamId, events, expected, await this.streamRevision(streamId));
    }
    if (!result.position) {
      // A replay the server detected itself is acknowledged without a position.
      const stored = await this.storedIds(streamId, events, IDEMPOTENCY_LOOKBACK);
      if (stored === 'none' || stored === 'partial') {
        throw new Error(`KurrentDB acknowledged an append to ${streamId} without a log position`);
      }
      return stored;
    }
    return {
      revision: Number(result.nextExpectedRevision),
      position: positionOf(result.position),
      appended: true,
    };
  }

  /** A refused append is a no-op when its ids are stored already, else a conflict. */
  private async refused(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
    actual: number | null,
  ): Promise<AppendResult> {
    const stored = await this.storedIds(streamId, events, IDEMPOTENCY_LOOKBACK);
    if (stored === 'partial') throw new IdempotencyMismatchError(streamId);
    if (stored !== 'none') return stored;
    throw new ConcurrencyConflictError(streamId, expected, actual);
  }

  /** A replay whose ids are only partly in the tail: look deeper before refusing it. */
  private async replayOrRefuse(
    streamId: string,
    events: readonly NewEvent[],
  ): Promise<AppendResult> {
    const stored = await this.storedIds(streamId, events, IDEMPOTENCY_LOOKBACK);
    if (stored === 'partial' || stored === 'none') throw new IdempotencyMismatchError(streamId);
    return stored;
  }

  /** Looks for the append's ids among the stream's last `lookback` events; all found is a no-op. */
  private async storedIds(
    streamId: string,
    events: readonly NewEvent[],
    lookback: number,
  ): Promise<AppendResult | 'none' | 'partial'> {
    const ids = new Set(events.map((e) => e.eventId));
    const recent = await this.recorded(streamId, {
      direction: BACKWARDS,
      fromRevision: END,
      maxCount: lookback,
    });
    const found = recent.filter((e) => ids.has(e.id)).length;
    const head = recent[0];
    if (found === 0 || !head) return 'none';
    if (found < ids.size) return 'partial';
    return { revision: Number(head.revision), position: recordPosition(head), appended: false };
  }

  /** The events a read of one stream returns; none for a stream that does not exist. */
  private async recorded(
    streamId: string,
    options: Parameters<KurrentDBClient['readStream']>[1],
  ): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(streamId, options)) {
        if (resolved.event) out.push(resolved.event);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw storeFailure(error, streamId);
    }
    return out;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    if (options.limit === 0) return [];
    const events = await this.recorded(streamId, {
      fromRevision: BigInt(options.fromRevision ?? 0),
      maxCount: options.limit ?? Number.MAX_SAFE_INTEGER,
    });
    return events.map(toStored);
  }

  async streamRevision(streamId: string): Promise<number | null> {
    const [head] = await this.recorded(streamId, {
      direction: BACKWARDS,
      fromRevision: END,
      maxCount: 1,
    });
    return head ? Number(head.revision) : null;
  }

  /** Filtered on the server; pages further only past events of system streams it let through. */
  async readAll(options: ReadAllOptions): Promise<StoredEvent[]> {
    const { after, limit, types } = options;
    if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0)) {
      throw new InvalidPositionError(after);
    }
    const out: StoredEvent[] = [];
    if (limit <= 0 || types?.length === 0) return out;
    const filter = serverFilter(types);
    let from = readFrom(after);
    for (;;) {
      // One more than still wanted: the event at the start is read too, and dropped.
      const want = Math.min(limit - out.length + 1, Number.MAX_SAFE_INTEGER);
      let read = 0;
      let last: Position | undefined;
      try {
        for await (const resolved of this.client.readAll({
          fromPosition: from,
          maxCount: want,
          filter,
        })) {
          read++;
          const e = resolved.event;
          if (!e) continue;
          last = e.position;
          if (isAt(e.position, from) || isSystemStream(e)) continue;
          out.push(toStored(e));
          if (out.length === limit) return out;
        }
      } catch (error) {
        if (after && isInvalidPosition(error)) throw new InvalidPositionError(after, error);
        throw storeFailure(error);
      }
      if (read < want || !last) return out;
      from = last;
    }
  }

  async headPosition(): Promise<LogPosition> {
    let from: ReadPosition = END;
    for (;;) {
      let read = 0;
      let last: Position | undefined;
      try {
        for await (const resolved of this.client.readAll({
          direction: BACKWARDS,
          fromPosition: from,
          maxCount: HEAD_PAGE,
          filter: excludeSystemEvents(),
        })) {
          read++;
          const e = resolved.event;
          if (!e) continue;
          last = e.position;
          if (!isAt(e.position, from) && !isSystemStream(e)) return positionOf(e.position);
        }
      } catch (error) {
        throw storeFailure(error);
      }
      if (read < HEAD_PAGE || !last) return LOG_START;
      from = last;
    }
  }

  /** Counted by reading (positions are byte offsets here): at most `cap` events are read. */
  async countAfter(after: LogPosition, cap: number): Promise<number> {
    return (await this.readAll({ after, limit: cap })).length;
  }

  /** One live subscription per listener (kurrentdb-subscription.ts), stopped at close. */
  watch(listener: () => void): () => void {
    const watching = watchAll(this.client, listener, {
      errors: this.errors,
      resubscribeMs: this.resubscribeMs,
      resubscribeMaxMs: this.resubscribeMaxMs,
    });
    const handle = {
      stop: (): void => {
        watching.stop();
        this.subscriptions.delete(handle);
      },
    };
    this.subscriptions.add(handle);
    return handle.stop;
  }

  async ping(): Promise<void> {
    try {
      for await (const _ of this.client.readAll({ maxCount: 1 })) break;
    } catch (error) {
      throw storeFailure(error);
    }
  }

  async close(): Promise<void> {
    for (const s of [...this.subscriptions]) s.stop();
    await this.client.dispose();
  }
}
