import { QueryConfig, QueryResultRow } from 'pg';
import {
  AppendResult,
  ConcurrencyConflictError,
  ExpectedRevision,
  IdempotencyMismatchError,
  LogPosition,
  NewEvent,
  StaleLeaderError,
  fencingEpoch,
} from './port';

const STORE = 'event store (PostgreSQL)';

export type PostgresEventStoreStats = {
  /** Group-commit transactions run (committed or failed as a whole). */
  readonly flushes: number;
  /** append() calls settled. */
  readonly appends: number;
  /** Events written. */
  readonly events: number;
};

/** [eventId, type, data JSON, metadata JSON], serialized at append() so a bad payload fails alone. */
type EncodedEvent = [string, string, string, string];

type PendingAppend = {
  readonly streamId: string;
  readonly expected: ExpectedRevision;
  /** The lease term its events were written in (`leaderEpoch`), or -1. */
  readonly epoch: number;
  readonly events: readonly EncodedEvent[];
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
};

/** What the batch function reads for an expected revision: -1 no stream, -2 any, -3 never met. */
const expectedCode = (expected: ExpectedRevision): number => {
  if (expected === 'no_stream') return -1;
  if (expected === 'any') return -2;
  // No stream is ever at a negative or fractional revision: such an expectation is a conflict.
  return Number.isSafeInteger(expected) && expected >= 0 ? expected : -3;
};

/** Characters PostgreSQL's text cannot hold: refused at append(), so a batch never fails for them. */
const hasNul = (text: string): boolean => text.includes('\u0000');

const encode = (streamId: string, events: readonly NewEvent[]): EncodedEvent[] => {
  if (hasNul(streamId)) throw new Error('a stream id cannot contain NUL characters');
  const ids = new Set<string>();
  return events.map((e) => {
    if (hasNul(e.eventId) || hasNul(e.type)) {
      throw new Error('event ids and types cannot contain NUL characters');
    }
    if (ids.has(e.eventId)) {
      throw new Error(`append to ${streamId} carries event id ${e.eventId} twice`);
    }
    ids.add(e.eventId);
    return [e.eventId, e.type, JSON.stringify(e.data) ?? 'null', JSON.stringify(e.metadata)];
  });
};

/** The batch function's arguments: one array per column, appends and their events in order. */
const batchValues = (batch: readonly PendingAppend[]): unknown[] => {
  const streams: string[] = [];
  const expected: number[] = [];
  const prev: number[] = [];
  const counts: number[] = [];
  const owner: number[] = [];
  const ids: string[] = [];
  const types: string[] = [];
  const data: string[] = [];
  const metadata: string[] = [];
  const lastOfStream = new Map<string, number>();
  for (let i = 0; i < batch.length; i++) {
    const p = batch[i];
    streams.push(p.streamId);
    expected.push(expectedCode(p.expected));
    prev.push(lastOfStream.get(p.streamId) ?? 0);
    lastOfStream.set(p.streamId, i + 1);
    counts.push(p.events.length);
    for (const e of p.events) {
      owner.push(i + 1);
      ids.push(e[0]);
      types.push(e[1]);
      data.push(e[2]);
      metadata.push(e[3]);
    }
  }
  return [streams, expected, prev, counts, owner, ids, types, data, metadata];
};

/** A batch where an append carries a lease term goes through the fenced function (fencing.ts). */
const batchQuery = (
  batch: readonly PendingAppend[],
): { name: string; text: string; values: unknown[] } => {
  const values = batchValues(batch);
  if (!batch.some((p) => p.epoch >= 0)) {
    return {
      name: 'events_append_batch',
      text: 'SELECT * FROM events_append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      values,
    };
  }
  return {
    name: 'events_append_fenced',
    text: 'SELECT * FROM events_append_fenced($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    values: [batch.map((p) => p.epoch), ...values],
  };
};

type Outcome = [number, number | null, LogPosition | null];

/**
 * Group commit: the appends made in the same event-loop turn share one transaction, one call of
 * the server-side function `events_append_batch` that judges each append on its own (expected
 * revision, replayed ids) and inserts the accepted ones in one statement, so one conflict does
 * not fail its neighbours. One transaction runs at a time; the next takes what queued meanwhile.
 */
export class PostgresGroupCommit {
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private inFlight: Promise<void> | undefined;
  private counters = { flushes: 0, appends: 0, events: 0 };

  constructor(
    private readonly query: <R extends QueryResultRow>(
      config: QueryConfig & { rowMode?: 'array' },
    ) => Promise<R[]>,
    private readonly limits: { readonly maxBatchEvents: number; readonly maxBatchBytes: number },
    /** After a transaction that wrote events, with the last one's position. */
    private readonly committed: (head: LogPosition) => void,
  ) {}

  get stats(): PostgresEventStoreStats {
    return { ...this.counters };
  }

  append(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    let encoded: EncodedEvent[];
    try {
      encoded = encode(streamId, events);
    } catch (error) {
      return Promise.reject(error);
    }
    const epoch = fencingEpoch(events) ?? -1;
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ streamId, expected, epoch, events: encoded, resolve, reject });
      this.scheduleFlush();
    });
  }

  /** Resolves once every append made so far has its transaction (they were promised one). */
  async drain(): Promise<void> {
    while (this.inFlight || this.queue.length > 0 || this.flushScheduled) {
      if (this.inFlight) await this.inFlight;
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.inFlight || this.queue.length === 0) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: callers resumed by the previous flush append again within
    // this turn, and all of them share the next transaction.
    setImmediate(() => {
      this.flushScheduled = false;
      if (this.inFlight || this.queue.length === 0) return;
      const batch = this.takeBatch();
      this.inFlight = this.flush(batch)
        // flush() settles every append itself; this only guards against a bug in it.
        .catch((error: unknown) => batch.forEach((p) => p.reject(error)))
        .finally(() => {
          this.inFlight = undefined;
          this.scheduleFlush();
        });
    });
  }

  /**
   * The appends at the head of the queue that go into one transaction: up to `maxBatchEvents`
   * events and `maxBatchBytes` of JSON (at least one append), stopping before an append that
   * repeats an event id of an earlier one in the batch (it is judged in the next transaction,
   * against what this one wrote).
   */
  private takeBatch(): PendingAppend[] {
    const ids = new Set<string>();
    let events = 0;
    let bytes = 0;
    let n = 0;
    for (; n < this.queue.length; n++) {
      const p = this.queue[n];
      let size = 0;
      for (const e of p.events) size += e[2].length + e[3].length;
      if (n > 0 && events + p.events.length > this.limits.maxBatchEvents) break;
      if (n > 0 && bytes + size > this.limits.maxBatchBytes) break;
      if (p.events.some((e) => ids.has(e[0]))) break;
      for (const e of p.events) ids.add(e[0]);
      events += p.events.length;
      bytes += size;
    }
    return this.queue.splice(0, n);
  }

  private async flush(batch: readonly PendingAppend[]): Promise<void> {
    let rows: Outcome[];
    try {
      rows = await this.query<Outcome>({ ...batchQuery(batch), rowMode: 'array' });
    } catch (error) {
      // Nothing of the batch committed (or, when the connection died at COMMIT, perhaps all of
      // it): every append fails, and a retry with the same ids is a no-op if it did commit.
      this.counters.flushes++;
      this.counters.appends += batch.length;
      for (const p of batch) p.reject(error);
      return;
    }
    this.counters.flushes++;
    this.counters.appends += batch.length;
    let head: LogPosition | undefined;
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i];
      const row = rows[i];
      if (!row) {
        p.reject(new Error(`${STORE}: the batch append returned no outcome for ${p.streamId}`));
        continue;
      }
      const [status, revision, position] = row;
      if (status === 0 && revision !== null && position !== null) {
        this.counters.events += p.events.length;
        head = position;
        p.resolve({ revision, position, appended: true });
      } else if (status === 1 && revision !== null && position !== null) {
        p.resolve({ revision, position, appended: false });
      } else if (status === 2) {
        p.reject(new ConcurrencyConflictError(p.streamId, p.expected, revision));
      } else if (status === 3) {
        p.reject(new IdempotencyMismatchError(p.streamId));
      } else if (status === 4) {
        p.reject(new StaleLeaderError(p.streamId, p.epoch, revision));
      } else {
        p.reject(new Error(`${STORE}: unexpected batch outcome ${JSON.stringify(row)}`));
      }
    }
    if (head !== undefined) this.committed(head);
  }
}
