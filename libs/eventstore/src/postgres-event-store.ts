import { Client, Pool, PoolConfig, QueryConfig, QueryResultRow, TypeOverrides } from 'pg';
import { EventMetadata, UnavailableError } from '../../kernel/src';
import { FailureSink, ThrottledLog, consoleFailureSink } from '../../kernel/src/throttled-log';
import {
  describePostgresUrl,
  postgresConnectionProblem,
  redactPostgresSecrets,
} from './postgres-connection';
import { EVENTS_CHANNEL, migrate } from './postgres-schema';
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

export type PostgresEventStoreOptions = {
  /** `postgres://user:password@host:5432/database` (or `postgresql://`). */
  readonly url: string;
  /** Where background failures (a lost LISTEN connection, a failing poll) are logged, throttled. */
  readonly log?: FailureSink;
  /** Connections for appends and reads (the LISTEN connection comes on top). */
  readonly poolSize?: number;
  /** How often `watch` polls the head as well, for notifications lost with a connection. */
  readonly pollMs?: number;
  /** The first wait before re-establishing a lost LISTEN connection; doubles up to `relistenMaxMs`. */
  readonly relistenMs?: number;
  readonly relistenMaxMs?: number;
  /** How long getting a connection may take before the call fails as unavailable. */
  readonly connectTimeoutMs?: number;
  /** The most events one group-commit transaction carries (a larger single append goes alone). */
  readonly maxBatchEvents?: number;
  /** The most bytes of JSON (data and metadata) one transaction carries, likewise. */
  readonly maxBatchBytes?: number;
};

export type PostgresEventStoreStats = {
  /** Group-commit transactions run (committed or failed as a whole). */
  readonly flushes: number;
  /** append() calls settled. */
  readonly appends: number;
  /** Events written. */
  readonly events: number;
};

const STORE = 'event store (PostgreSQL)';
const INT8_OID = 20;

/** [eventId, type, data JSON, metadata JSON], serialized at append() so a bad payload fails alone. */
type EncodedEvent = [string, string, string, string];

type PendingAppend = {
  readonly streamId: string;
  readonly expected: ExpectedRevision;
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

type Row = [LogPosition, string, string, number, string, unknown, EventMetadata];
const COLUMNS = 'position, event_id, stream_id, revision, type, data, metadata';

const toStoredEvents = (rows: readonly Row[]): StoredEvent[] => {
  const out: StoredEvent[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    out[i] = {
      position: r[0],
      eventId: r[1],
      streamId: r[2],
      revision: r[3],
      type: r[4],
      data: r[5],
      metadata: r[6],
    };
  }
  return out;
};

/** Failures of the connection rather than of the statement: nothing was done, a retry may work. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|connection timeout|Client has encountered a connection error|Connection closed/i;

export const isPostgresUnavailable = (error: unknown): boolean => {
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return true;
  return typeof e?.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message);
};

/** Characters PostgreSQL's text cannot hold: refused at append(), so a batch never fails for them. */
const hasNul = (text: string): boolean => text.includes('\u0000');

/**
 * The event store on PostgreSQL through node-postgres, for replicas that share one log where no
 * KurrentDB runs.
 *
 * Global order: every transaction that writes events holds one advisory lock from reading the
 * stream heads until it commits (a statement trigger takes it for any INSERT, by hand too), and
 * positions come from an identity drawn under it. Positions therefore grow in commit order, and a
 * commit becomes visible before the lock passes on: a reader never sees a later position while an
 * earlier one can still commit, so catching up with `readAll({ after })` skips nothing. The price
 * is that appends are serialised; group commit makes each transaction carry every append of an
 * event-loop turn, so the lock is taken once per batch, not per event.
 *
 * Appends made in the same turn share one transaction: one call of a server-side function that
 * judges each append on its own (expected revision, replayed ids) and inserts the accepted ones in
 * one statement, so one conflict does not fail its neighbours.
 */
export class PostgresEventStore implements EventStore {
  private readonly pool: Pool;
  private readonly url: string;
  private readonly errors: ThrottledLog;
  private readonly pollMs: number;
  private readonly relistenMs: number;
  private readonly relistenMaxMs: number;
  private readonly connectTimeoutMs: number;
  private readonly maxBatchEvents: number;
  private readonly maxBatchBytes: number;
  private ready: Promise<void> | undefined;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private inFlight: Promise<void> | undefined;
  private closing = false;
  private closed = false;
  private counters = { flushes: 0, appends: 0, events: 0 };

  private readonly listeners = new Set<() => void>();
  private wakeScheduled = false;
  private lastSeenHead: LogPosition = LOG_START;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private listen: Client | undefined;
  private listenTimer: NodeJS.Timeout | undefined;
  private listenBackoffMs: number;
  private listenDropped = false;

  constructor(options: PostgresEventStoreOptions) {
    const problem = postgresConnectionProblem(options.url);
    if (problem !== undefined) throw new Error(`${STORE}: ${problem}`);
    this.url = options.url;
    this.errors = new ThrottledLog(options.log ?? consoleFailureSink);
    this.pollMs = options.pollMs ?? 1000;
    this.relistenMs = options.relistenMs ?? 250;
    this.relistenMaxMs = options.relistenMaxMs ?? 10_000;
    this.listenBackoffMs = this.relistenMs;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.maxBatchEvents = options.maxBatchEvents ?? 10_000;
    this.maxBatchBytes = options.maxBatchBytes ?? 16 * 1024 * 1024;
    this.pool = new Pool(this.clientConfig({ max: options.poolSize ?? 10 }));
    // An idle connection that fails is dropped by the pool; without a listener it would crash us.
    this.pool.on('error', (error) => {
      // A connection still closing when the store closed may fail after it: nobody needs to know.
      if (!this.closed) this.logFailure('an idle connection failed', error);
    });
    // Migrate early; a failure here is logged and tried again by the first call that needs it.
    this.ensureReady().catch((error: unknown) =>
      this.logFailure('preparing the schema failed', error),
    );
  }

  private clientConfig(extra: PoolConfig = {}): PoolConfig {
    // Positions, revisions and counts are BIGINT: numbers, not the client's default strings.
    const types = new TypeOverrides();
    types.setTypeParser(INT8_OID, (text: string) => Number(text));
    return {
      connectionString: this.url,
      connectionTimeoutMillis: this.connectTimeoutMs,
      keepAlive: true,
      application_name: 'fleet-control-plane',
      types,
      ...extra,
    };
  }

  /** Group-commit counters, for tests and the benchmark. */
  get stats(): PostgresEventStoreStats {
    return { ...this.counters };
  }

  /** Where this store connects, without credentials. */
  get target(): string {
    return describePostgresUrl(this.url);
  }

  private ensureReady(): Promise<void> {
    if (!this.ready) {
      const attempt = (async () => {
        const client = await this.pool.connect();
        try {
          await migrate(client);
        } finally {
          client.release();
        }
      })().catch((error: unknown) => {
        this.ready = undefined;
        throw this.failure(error);
      });
      this.ready = attempt;
    }
    return this.ready;
  }

  /**
   * A background failure, throttled, as one line and the error's own fields: a client's error
   * carries the whole client (its connection parameters, its queues), which the log needs not.
   */
  private logFailure(what: string, error: unknown, after = ''): void {
    const cause = error instanceof UnavailableError ? error.cause : error;
    const e = cause as { code?: unknown; severity?: unknown } | null;
    const fields = Object.assign(new Error(this.reason(cause)), {
      code: e?.code,
      severity: e?.severity,
    });
    this.errors.failure(`${STORE}: ${what} (${this.reason(cause)})${after}`, fields);
  }

  private reason(error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    return redactPostgresSecrets(this.url, message);
  }

  /** A client error as the port's callers know it: unavailable (retry) or what it was, no secret in it. */
  private failure(error: unknown): unknown {
    if (error instanceof UnavailableError) return error;
    if (isPostgresUnavailable(error)) return new UnavailableError(STORE, error);
    if (
      error instanceof Error &&
      redactPostgresSecrets(this.url, error.message) !== error.message
    ) {
      return new Error(`${STORE}: ${this.reason(error)}`);
    }
    return error;
  }

  private async query<R extends QueryResultRow = QueryResultRow>(
    config: QueryConfig & { rowMode?: 'array' },
  ): Promise<R[]> {
    if (this.closed) throw new Error('event store is closed');
    await this.ensureReady();
    try {
      return (await this.pool.query<R>(config as QueryConfig)).rows;
    } catch (error) {
      throw this.failure(error);
    }
  }

  append(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    if (this.closing) return Promise.reject(new Error('event store is closed'));
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    let encoded: EncodedEvent[];
    try {
      encoded = this.encode(streamId, events);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ streamId, expected, events: encoded, resolve, reject });
      this.scheduleFlush();
    });
  }

  private encode(streamId: string, events: readonly NewEvent[]): EncodedEvent[] {
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
      if (n > 0 && events + p.events.length > this.maxBatchEvents) break;
      if (n > 0 && bytes + size > this.maxBatchBytes) break;
      if (p.events.some((e) => ids.has(e[0]))) break;
      for (const e of p.events) ids.add(e[0]);
      events += p.events.length;
      bytes += size;
    }
    return this.queue.splice(0, n);
  }

  private async flush(batch: readonly PendingAppend[]): Promise<void> {
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
    let rows: Array<[number, number | null, LogPosition | null]>;
    try {
      rows = await this.query<[number, number | null, LogPosition | null]>({
        name: 'events_append_batch',
        text: 'SELECT * FROM events_append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        values: [streams, expected, prev, counts, owner, ids, types, data, metadata],
        rowMode: 'array',
      });
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
      } else {
        p.reject(new Error(`${STORE}: unexpected batch outcome ${JSON.stringify(row)}`));
      }
    }
    if (head !== undefined) {
      if (head > this.lastSeenHead) this.lastSeenHead = head;
      this.wake();
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    const rows = await this.query<Row>({
      name: 'events_read_stream',
      text: `SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
      // LIMIT NULL reads to the end (as does a negative limit on SQLite).
      values: [
        streamId,
        options.fromRevision ?? 0,
        options.limit === undefined || options.limit < 0 ? null : options.limit,
      ],
      rowMode: 'array',
    });
    return toStoredEvents(rows);
  }

  async streamRevision(streamId: string): Promise<number | null> {
    const [row] = await this.query<[number | null]>({
      name: 'events_stream_revision',
      text: 'SELECT max(revision) FROM events WHERE stream_id = $1',
      values: [streamId],
      rowMode: 'array',
    });
    return row?.[0] ?? null;
  }

  async streamRevisions(streamIds: readonly string[]): Promise<Array<number | null>> {
    if (streamIds.length === 0) return [];
    const rows = await this.query<[number | null]>({
      name: 'events_stream_revisions',
      text: `SELECT (SELECT max(e.revision) FROM events e WHERE e.stream_id = u.s)
             FROM unnest($1::text[]) WITH ORDINALITY AS u(s, i) ORDER BY u.i`,
      values: [streamIds],
      rowMode: 'array',
    });
    return rows.map((r) => r[0]);
  }

  async readAll(options: ReadAllOptions): Promise<StoredEvent[]> {
    const { after = LOG_START, limit, types } = options;
    if (!(Number.isSafeInteger(after) && after >= 0)) throw new InvalidPositionError(after);
    if (limit <= 0 || types?.length === 0) return [];
    const rows =
      types === undefined
        ? await this.query<Row>({
            name: 'events_read_all',
            text: `SELECT ${COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2`,
            values: [after, limit],
            rowMode: 'array',
          })
        : await this.query<Row>({
            name: 'events_read_all_types',
            text: `SELECT ${COLUMNS} FROM events WHERE position > $1 AND type = ANY($2::text[])
                   ORDER BY position LIMIT $3`,
            values: [after, types, limit],
            rowMode: 'array',
          });
    return toStoredEvents(rows);
  }

  async headPosition(): Promise<LogPosition> {
    const [row] = await this.query<[LogPosition | null]>({
      name: 'events_head',
      text: 'SELECT max(position) FROM events',
      rowMode: 'array',
    });
    return row?.[0] ?? LOG_START;
  }

  async countAfter(after: LogPosition, cap: number): Promise<number> {
    if (cap <= 0) return 0;
    const [row] = await this.query<[number]>({
      name: 'events_count_after',
      text: 'SELECT count(*) FROM (SELECT 1 FROM events WHERE position > $1 LIMIT $2) AS t',
      values: [after, cap],
      rowMode: 'array',
    });
    return row?.[0] ?? 0;
  }

  /**
   * Wakes `listener` on every NOTIFY of a commit that added events (one LISTEN connection per
   * store, re-established with a backoff when lost), after this store's own appends, and when a
   * poll of the head finds it moved (notifications lost with a connection). Coalesced.
   */
  watch(listener: () => void): () => void {
    this.listeners.add(listener);
    if (!this.closed) this.startWatching();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopWatching();
    };
  }

  private startWatching(): void {
    if (!this.pollTimer) {
      this.pollTimer = setInterval(() => void this.poll(), this.pollMs);
      this.pollTimer.unref();
      void this.headPosition()
        .then((head) => {
          if (head > this.lastSeenHead) this.lastSeenHead = head;
        })
        .catch(() => undefined);
    }
    if (!this.listen && !this.listenTimer) this.connectListener();
  }

  private stopWatching(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    if (this.listenTimer) clearTimeout(this.listenTimer);
    this.listenTimer = undefined;
    const client = this.listen;
    this.listen = undefined;
    void client?.end().catch(() => undefined);
  }

  private connectListener(): void {
    const client = new Client(this.clientConfig());
    this.listen = client;
    let lost = false;
    const onLost = (error: unknown): void => {
      if (lost) return;
      lost = true;
      void client.end().catch(() => undefined);
      if (this.listen !== client) return; // stopped on purpose
      this.listen = undefined;
      this.listenDropped = true;
      this.logFailure(
        'the LISTEN connection failed',
        error,
        `; listening again in ${this.listenBackoffMs} ms, polling meanwhile`,
      );
      this.listenTimer = setTimeout(() => {
        this.listenTimer = undefined;
        if (this.listeners.size > 0 && !this.closed) this.connectListener();
      }, this.listenBackoffMs);
      this.listenTimer.unref();
      this.listenBackoffMs = Math.min(this.listenBackoffMs * 2, this.relistenMaxMs);
      this.wake();
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('the connection ended')));
    client.on('notification', () => this.wake());
    client
      .connect()
      .then(() => client.query(`LISTEN ${EVENTS_CHANNEL}`))
      .then(() => {
        if (lost || this.listen !== client) return;
        this.listenBackoffMs = this.relistenMs;
        if (this.listenDropped) {
          this.listenDropped = false;
          this.errors.clear();
          this.wake(); // commits made while nobody listened
        }
      })
      .catch(onLost);
  }

  private async poll(): Promise<void> {
    if (this.polling || this.closed) return;
    this.polling = true;
    try {
      const head = await this.headPosition();
      if (head > this.lastSeenHead) {
        this.lastSeenHead = head;
        this.wake();
      }
    } catch (error) {
      this.logFailure("polling the log's head failed", error);
    } finally {
      this.polling = false;
    }
  }

  private wake(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      if (this.closed) return;
      for (const listener of [...this.listeners]) {
        try {
          listener();
        } catch (error) {
          // One failing listener must not starve the others; readers catch up from checkpoints.
          this.errors.failure(`${STORE}: a listener of new events threw`, error);
        }
      }
    });
  }

  async ping(): Promise<void> {
    await this.query({ name: 'events_ping', text: 'SELECT 1' });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // Appends already made were promised a transaction: write them before closing.
    while (this.inFlight || this.queue.length > 0 || this.flushScheduled) {
      if (this.inFlight) await this.inFlight;
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.closed = true;
    this.listeners.clear();
    this.stopWatching();
    await this.ready?.catch(() => undefined);
    await this.pool.end();
  }
}
