import {
  ANY,
  AllStreamRecordedEvent,
  AllStreamSubscription,
  BACKWARDS,
  END,
  EventStoreDBClient,
  ExpectedRevision as EsdbExpectedRevision,
  JSONType,
  NO_STREAM,
  Position,
  RecordedEvent,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
} from '@eventstore/db-client';
import { EventMetadata } from '../../kernel/src';
import {
  AppendResult,
  ConcurrencyConflictError,
  EventStore,
  ExpectedRevision,
  IdempotencyMismatchError,
  LOG_START,
  LogPosition,
  NewEvent,
  asLogPosition,
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
} from './port';

/** How far back a conflicting append looks for its own ids before calling it a conflict. */
const IDEMPOTENCY_LOOKBACK = 1000;
const READ_ALL_PAGE = 500;

const toEsdbRevision = (expected: ExpectedRevision): EsdbExpectedRevision =>
  expected === 'no_stream' ? NO_STREAM : expected === 'any' ? ANY : BigInt(expected);

const isSystem = (e: RecordedEvent): boolean =>
  e.type.startsWith('$') || e.streamId.startsWith('$');

/** ESDB positions are (commit, prepare); our single number is the commit position. */
const afterPosition = (a: Position, b: Position): boolean =>
  a.commit > b.commit || (a.commit === b.commit && a.prepare > b.prepare);

const toStored = (e: RecordedEvent): StoredEvent => ({
  eventId: e.id,
  type: e.type,
  data: e.data,
  metadata: e.metadata as unknown as EventMetadata,
  streamId: e.streamId,
  revision: Number(e.revision),
  // Recorded positions come with servers newer than 22.6, which we require.
  position: asLogPosition(Number(e.position?.commit ?? -1n)),
});

const isNotFound = (error: unknown): boolean => error instanceof StreamNotFoundError;

/**
 * The production event store on EventStoreDB. Thin on purpose: only what the port adds
 * (idempotent replays reported as no-ops, system events hidden) is written here.
 */
export class EsdbEventStore implements EventStore {
  private readonly subscriptions = new Set<{ stop(): void }>();

  constructor(private readonly client: EventStoreDBClient) {}

  static fromConnectionString(url: string): EsdbEventStore {
    return new EsdbEventStore(EventStoreDBClient.connectionString(url));
  }

  async append(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    // ESDB acknowledges some replays as successes, so a replay at the tail is caught before writing.
    const tail = await this.storedIds(streamId, events, events.length);
    if (tail === 'partial') return this.replayOrRefuse(streamId, events);
    if (tail !== 'none') return tail;
    try {
      const result = await this.client.appendToStream(
        streamId,
        events.map((e) =>
          jsonEvent({
            id: e.eventId,
            type: e.type,
            data: e.data as JSONType,
            metadata: e.metadata as unknown as JSONType,
          }),
        ),
        { expectedRevision: toEsdbRevision(expected) },
      );
      return {
        revision: Number(result.nextExpectedRevision),
        position: asLogPosition(Number(result.position?.commit ?? -1n)),
        // Old servers answer a replay they detected themselves without a position.
        appended: result.position !== undefined,
      };
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      const stored = await this.storedIds(streamId, events, IDEMPOTENCY_LOOKBACK);
      if (stored === 'partial') throw new IdempotencyMismatchError(streamId);
      if (stored !== 'none') return stored;
      const actual = error.actualVersion;
      throw new ConcurrencyConflictError(
        streamId,
        expected,
        typeof actual === 'bigint' ? Number(actual) : null,
      );
    }
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
    let found = 0;
    let head: RecordedEvent | undefined;
    try {
      for await (const resolved of this.client.readStream(streamId, {
        direction: BACKWARDS,
        fromRevision: END,
        maxCount: lookback,
      })) {
        const e = resolved.event;
        if (!e) continue;
        head ??= e;
        if (ids.has(e.id)) found++;
      }
    } catch (error) {
      if (isNotFound(error)) return 'none';
      throw error;
    }
    if (found === 0 || !head) return 'none';
    if (found < ids.size) return 'partial';
    return {
      revision: Number(head.revision),
      position: asLogPosition(Number(head.position?.commit ?? -1n)),
      appended: false,
    };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    if (options.limit === 0) return out;
    try {
      for await (const resolved of this.client.readStream(streamId, {
        fromRevision: BigInt(options.fromRevision ?? 0),
        maxCount: options.limit ?? Number.MAX_SAFE_INTEGER,
      })) {
        if (resolved.event) out.push(toStored(resolved.event));
      }
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
    return out;
  }

  async streamRevision(streamId: string): Promise<number | null> {
    try {
      for await (const resolved of this.client.readStream(streamId, {
        direction: BACKWARDS,
        fromRevision: END,
        maxCount: 1,
      })) {
        if (resolved.event) return Number(resolved.event.revision);
      }
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    return null;
  }

  /**
   * v6's readAll has no server-side filter, so system events and `types` are filtered here,
   * reading further pages until `limit` events matched or the log ends.
   */
  async readAll(options: ReadAllOptions): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    const types = options.types ? new Set(options.types) : undefined;
    const after = options.after ?? 0;
    let from: Position | typeof START =
      options.after === undefined ? START : { commit: BigInt(after), prepare: BigInt(after) };
    let last: Position | undefined;
    while (out.length < options.limit) {
      let read = 0;
      for await (const resolved of this.client.readAll({
        fromPosition: from,
        maxCount: READ_ALL_PAGE,
      })) {
        read++;
        const e: AllStreamRecordedEvent | undefined = resolved.event;
        if (!e) continue;
        // The start position is inclusive; a page boundary repeats its last event.
        if (last && !afterPosition(e.position, last)) continue;
        last = e.position;
        if (Number(e.position.commit) <= after || isSystem(e)) continue;
        if (types && !types.has(e.type)) continue;
        out.push(toStored(e));
        if (out.length === options.limit) break;
      }
      if (read < READ_ALL_PAGE || !last) break;
      from = last;
    }
    return out;
  }

  async headPosition(): Promise<LogPosition> {
    for await (const resolved of this.client.readAll({
      direction: BACKWARDS,
      fromPosition: END,
      maxCount: READ_ALL_PAGE,
    })) {
      if (resolved.event && !isSystem(resolved.event))
        return asLogPosition(Number(resolved.event.position.commit));
    }
    // Only system events near the end (or none at all): an approximation a fresh log never hits.
    return LOG_START;
  }

  /** Counted by reading (positions are byte offsets here): at most `cap` events are read. */
  async countAfter(after: LogPosition, cap: number): Promise<number> {
    return (await this.readAll({ after, limit: cap })).length;
  }

  /** One live subscription per listener, re-established with a backoff whenever it drops. */
  watch(listener: () => void): () => void {
    let stopped = false;
    let subscription: AllStreamSubscription | undefined;
    let timer: NodeJS.Timeout | undefined;
    let backoffMs = 250;
    const subscribe = (): void => {
      if (stopped) return;
      const sub = this.client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() });
      subscription = sub;
      let retried = false;
      const retry = (): void => {
        if (retried || stopped) return;
        retried = true;
        sub.unsubscribe().catch(() => undefined);
        timer = setTimeout(subscribe, backoffMs);
        timer.unref();
        backoffMs = Math.min(backoffMs * 2, 10_000);
        // A reconnect may have missed events: let readers catch up.
        listener();
      };
      sub.on('confirmation', () => (backoffMs = 250));
      sub.on('data', () => {
        backoffMs = 250;
        listener();
      });
      sub.on('error', retry);
      sub.on('end', retry);
      sub.on('close', retry);
    };
    subscribe();
    const handle = {
      stop: (): void => {
        stopped = true;
        if (timer) clearTimeout(timer);
        subscription?.unsubscribe().catch(() => undefined);
        this.subscriptions.delete(handle);
      },
    };
    this.subscriptions.add(handle);
    return handle.stop;
  }

  async ping(): Promise<void> {
    for await (const _ of this.client.readAll({ maxCount: 1 })) break;
  }

  async close(): Promise<void> {
    for (const s of [...this.subscriptions]) s.stop();
    await this.client.dispose();
  }
}
