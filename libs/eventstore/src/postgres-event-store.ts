import { Pool, PoolConfig, QueryConfig, QueryResultRow, TypeOverrides } from 'pg';
import { EventMetadata, UnavailableError } from '@fleet/kernel';
import { FailureSink, ThrottledLog, consoleFailureSink } from '@fleet/kernel/throttled-log';
import {
  describePostgresUrl,
  isPostgresUnavailable,
  postgresConnectionProblem,
  redactPostgresSecrets,
} from './postgres-connection';
import { PostgresEventStoreStats, PostgresGroupCommit } from './postgres-group-commit';
import { migrate } from './postgres-schema';
import { PostgresWatch } from './postgres-watch';
import {
  AppendResult,
  EventStore,
  ExpectedRevision,
  InvalidPositionError,
  LOG_START,
  LogPosition,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
} from './port';

// Where callers have always found them.
export { isPostgresUnavailable } from './postgres-connection';
export type { PostgresEventStoreStats } from './postgres-group-commit';

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

const STORE = 'event store (PostgreSQL)';
const INT8_OID = 20;

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

/**
 * The event store on PostgreSQL through node-postgres, for replicas that share one log where no
 * KurrentDB runs.
 *
 * Global order: every transaction that writes events holds one advisory lock from reading the
 * stream heads until it commits (a statement trigger takes it for any INSERT, by hand too), and
 * positions come from an identity drawn under it. Positions therefore grow in commit order, and a
 * commit becomes visible before the lock passes on: a reader never sees a later position while an
 * earlier one can still commit, so catching up with `readAll({ after })` skips nothing. The price
 * is that appends are serialised; group commit (postgres-group-commit.ts) makes each transaction
 * carry every append of an event-loop turn, so the lock is taken once per batch, not per event.
 */
export class PostgresEventStore implements EventStore {
  private readonly pool: Pool;
  private readonly url: string;
  private readonly errors: ThrottledLog;
  private readonly connectTimeoutMs: number;
  private readonly commits: PostgresGroupCommit;
  private readonly watcher: PostgresWatch;
  private ready: Promise<void> | undefined;
  private closing = false;
  private closed = false;

  constructor(options: PostgresEventStoreOptions) {
    const problem = postgresConnectionProblem(options.url);
    if (problem !== undefined) throw new Error(`${STORE}: ${problem}`);
    this.url = options.url;
    this.errors = new ThrottledLog(options.log ?? consoleFailureSink);
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.watcher = new PostgresWatch({
      clientConfig: () => this.clientConfig(),
      headPosition: () => this.headPosition(),
      logFailure: (what, error, after) => this.logFailure(what, error, after),
      errors: this.errors,
      pollMs: options.pollMs ?? 1000,
      relistenMs: options.relistenMs ?? 250,
      relistenMaxMs: options.relistenMaxMs ?? 10_000,
    });
    this.commits = new PostgresGroupCommit(
      (config) => this.query(config),
      {
        maxBatchEvents: options.maxBatchEvents ?? 10_000,
        maxBatchBytes: options.maxBatchBytes ?? 16 * 1024 * 1024,
      },
      (head) => this.watcher.committed(head),
    );
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
    return this.commits.stats;
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
    return this.commits.append(streamId, events, expected);
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
   * Wakes `listener` on every NOTIFY of a commit that added events, after this store's own
   * appends, and when a poll of the head finds it moved (postgres-watch.ts). Coalesced.
   */
  watch(listener: () => void): () => void {
    return this.watcher.watch(listener);
  }

  async ping(): Promise<void> {
    await this.query({ name: 'events_ping', text: 'SELECT 1' });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    // Appends already made were promised a transaction: write them before closing.
    await this.commits.drain();
    this.closed = true;
    this.watcher.close();
    await this.ready?.catch(() => undefined);
    await this.pool.end();
  }
}
