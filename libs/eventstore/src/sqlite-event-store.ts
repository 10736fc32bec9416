import Database from 'better-sqlite3';
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
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
} from './port';

export type SqliteEventStoreOptions = {
  /** A file path, or ':memory:' for throwaway stores. */
  readonly file: string;
  /** How often `watch` polls the file for appends made by other processes. */
  readonly pollMs?: number;
  /**
   * FULL (default) fsyncs the WAL on every commit: an acknowledged append survives power loss.
   * NORMAL may lose the last commits on power loss (never on a process crash); benchmarks only.
   */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /**
   * This connection is the file's only user (SQLite's EXCLUSIVE locking mode, taken at
   * open): another connection or process opening the file fails until this one closes or its
   * process dies. No other writer can exist, so stream heads need no `data_version` check,
   * and no transaction takes file locks. The embedded control plane is one process by design.
   */
  readonly exclusive?: boolean;
  /** How long opening waits for a lock held elsewhere (a process shutting down), in ms. */
  readonly openWaitMs?: number;
};

/** The file is held by another connection opened with `exclusive` (another control plane). */
export class EventStoreInUseError extends Error {
  constructor(readonly file: string) {
    super(
      `the event log ${file} is in use by another process: the embedded store serves one ` +
        'control plane at a time (stop the other one, or use EVENTSTORE_URL)',
    );
    this.name = 'EventStoreInUseError';
  }
}

export type SqliteEventStoreStats = {
  /** Transactions committed by the group-commit writer. */
  readonly flushes: number;
  /** append() calls settled (appended, no-op or refused). */
  readonly appends: number;
  /** Events written. */
  readonly events: number;
};

/** The events table, its type index and the append-only triggers (exported for the benchmark). */
export const EVENTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT UNIQUE NOT NULL,
  stream_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE INDEX IF NOT EXISTS events_type ON events (type);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE is forbidden'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE is forbidden'); END;
`;

/** Connection settings shared with the benchmark's raw ceiling, so both sides run alike. */
/** Stream heads remembered in memory (~100 bytes each). */
const HEADS_CAPACITY = 250_000;

export const SQLITE_TUNING: readonly string[] = [
  // Several processes may share the file: wait for the writer lock instead of failing.
  'busy_timeout = 5000',
  // Random event ids dirty many index pages per commit: keep them cached (64 MiB)...
  'cache_size = -65536',
  // ...and checkpoint every ~40 MiB of WAL rather than 4, so a page rewritten by many commits
  // is copied back to the database once. Durability is unchanged: the WAL is fsynced per commit.
  'wal_autocheckpoint = 10000',
];

const COLUMNS = 'position, event_id, stream_id, revision, type, data, metadata';
type Row = [LogPosition, string, string, number, string, string, string];
/** [eventId, type, data JSON, metadata JSON], serialized before the flush so a bad payload fails alone. */
type EncodedEvent = [string, string, string, string];

type PendingAppend = {
  readonly streamId: string;
  readonly expected: ExpectedRevision;
  readonly events: readonly EncodedEvent[];
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
};

type Outcome = { ok: true; result: AppendResult } | { ok: false; error: unknown };

const matches = (expected: ExpectedRevision, current: number | null): boolean =>
  expected === 'any' || (expected === 'no_stream' ? current === null : current === expected);

// By code, not instanceof: the native addon keeps the SqliteError class of the first module
// instance that loaded it, so under jest's per-file registries instanceof fails at random.
const isUniqueViolation = (error: unknown): boolean =>
  (error as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_UNIQUE';

/**
 * How far the next event's position lies past the one before: the event's size, as on KurrentDB
 * where a position is a byte offset. Positions are sparse so that no code can come to count with
 * them (1, 2, 3 would let `position - 1` pass every test here and fail on a real server).
 */
const positionStep = (event: EncodedEvent): number => event[2].length + event[3].length + 64;

/** Raw rows and a plain loop: replay speed is dominated by this mapping. */
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
      data: JSON.parse(r[5]),
      metadata: JSON.parse(r[6]) as EventMetadata,
    };
  }
  return out;
};

/**
 * The embedded event store: one SQLite file in WAL mode. Appends made in the same event-loop
 * turn are group-committed in one IMMEDIATE transaction (one fsync), each validated on its own.
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly pollMs: number;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private closed = false;
  private readonly listeners = new Set<() => void>();
  private pollTimer: NodeJS.Timeout | undefined;
  private notifyScheduled = false;
  private lastSeenHead: LogPosition = LOG_START;
  private counters = { flushes: 0, appends: 0, events: 0 };
  /**
   * Stream heads this connection knows exactly (-1: no such stream): every head it read, and
   * every head its own commits moved. Another connection's commit changes `data_version`
   * (own commits do not), and the whole map is dropped, so an answer is never stale.
   */
  private readonly heads = new Map<string, number>();
  private headsVersion = -1;
  private readonly exclusive: boolean;

  private readonly stmt: {
    begin: Database.Statement;
    commit: Database.Statement;
    rollback: Database.Statement;
    savepoint: Database.Statement;
    rollbackTo: Database.Statement;
    release: Database.Statement;
    insert: Database.Statement<[number, string, string, number, string, string, string]>;
    head: Database.Statement<[string], [number, LogPosition]>;
    heads: Database.Statement<[string], number | null>;
    streamOfId: Database.Statement<[string], string>;
    maxPosition: Database.Statement<[], LogPosition | null>;
    countAfter: Database.Statement<[LogPosition, number], number>;
    dataVersion: Database.Statement<[], number>;
    readAll: Database.Statement<[LogPosition, number], Row>;
    readAllTypes: Database.Statement<[LogPosition, string, number], Row>;
    readStream: Database.Statement<[string, number, number], Row>;
  };

  constructor(options: SqliteEventStoreOptions) {
    this.pollMs = options.pollMs ?? 250;
    this.exclusive = options.exclusive ?? false;
    this.db = new Database(options.file, { timeout: options.openWaitMs ?? 5000 });
    if (this.exclusive) this.holdExclusively(options.file);
    this.db.pragma('journal_mode = WAL');
    // FULL: the WAL is fsynced at every COMMIT, so an acknowledged append survives power loss.
    this.db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    for (const pragma of SQLITE_TUNING) this.db.pragma(pragma);
    this.db.exec(EVENTS_SCHEMA);
    const db = this.db;
    this.stmt = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT append'),
      rollbackTo: db.prepare('ROLLBACK TO append'),
      release: db.prepare('RELEASE append'),
      insert: db.prepare(
        'INSERT INTO events (position, event_id, stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      head: db
        .prepare<[string], [number, LogPosition]>(
          'SELECT revision, position FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
        )
        .raw(),
      heads: db
        .prepare<[string], number | null>(
          `SELECT (SELECT revision FROM events WHERE stream_id = j.value ORDER BY revision DESC LIMIT 1)
           FROM json_each(?) AS j ORDER BY j.key`,
        )
        .pluck(),
      streamOfId: db
        .prepare<[string], string>('SELECT stream_id FROM events WHERE event_id = ?')
        .pluck(),
      maxPosition: db.prepare<[], LogPosition | null>('SELECT max(position) FROM events').pluck(),
      countAfter: db
        .prepare<[LogPosition, number], number>(
          'SELECT count(*) FROM (SELECT 1 FROM events WHERE position > ? LIMIT ?)',
        )
        .pluck(),
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      readAll: db
        .prepare<[LogPosition, number], Row>(
          `SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`,
        )
        .raw(),
      readAllTypes: db
        .prepare<[LogPosition, string, number], Row>(
          `SELECT ${COLUMNS} FROM events WHERE position > ? AND type IN (SELECT value FROM json_each(?))
           ORDER BY position LIMIT ?`,
        )
        .raw(),
      readStream: db
        .prepare<[string, number, number], Row>(
          `SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ?`,
        )
        .raw(),
    };
    this.lastSeenHead = this.stmt.maxPosition.get() ?? LOG_START;
  }

  /** Group-commit counters, read-only, for tests and metrics. */
  get stats(): SqliteEventStoreStats {
    return { ...this.counters };
  }

  append(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    let encoded: EncodedEvent[];
    try {
      encoded = events.map((e) => [
        e.eventId,
        e.type,
        JSON.stringify(e.data) ?? 'null',
        JSON.stringify(e.metadata),
      ]);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ streamId, expected, events: encoded, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // setImmediate, not a microtask: callers resumed by the previous flush append again
        // within this turn, and all of them share the next transaction.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    const outcomes: Outcome[] = new Array(batch.length);
    let written = 0;
    try {
      this.stmt.begin.run();
      // Read under the write lock: another connection's appends are counted in.
      const tail = { position: this.stmt.maxPosition.get() ?? LOG_START };
      for (let i = 0; i < batch.length; i++) {
        try {
          const result = this.applyOne(batch[i], tail);
          if (result.appended) written += batch[i].events.length;
          outcomes[i] = { ok: true, result };
        } catch (error) {
          if (!(
            error instanceof ConcurrencyConflictError || error instanceof IdempotencyMismatchError
          ))
            throw error;
          outcomes[i] = { ok: false, error };
        }
      }
      this.stmt.commit.run();
      // Committed by this connection: data_version does not move, so record the new heads.
      // (Before the commit they could still roll back; a failed append changed no head.)
      for (let i = 0; i < batch.length; i++) {
        const o = outcomes[i];
        if (o.ok && o.result.appended) this.rememberHead(batch[i].streamId, o.result.revision);
      }
    } catch (error) {
      // Anything but a per-append refusal (I/O, busy, bug) fails the whole batch: nothing committed.
      if (this.db.inTransaction) this.stmt.rollback.run();
      this.counters.appends += batch.length;
      for (const p of batch) p.reject(error);
      return;
    }
    this.counters.flushes++;
    this.counters.appends += batch.length;
    this.counters.events += written;
    for (let i = 0; i < batch.length; i++) {
      const o = outcomes[i];
      if (o.ok) batch[i].resolve(o.result);
      else batch[i].reject(o.error);
    }
    if (written > 0) this.notify();
  }

  /** Validates and writes one append inside the flush transaction; sees earlier appends of the batch. */
  private applyOne(p: PendingAppend, tail: { position: LogPosition }): AppendResult {
    const head = this.stmt.head.get(p.streamId);
    const current = head ? head[0] : null;
    if (!matches(p.expected, current)) {
      // A replay of stored ids is a no-op whatever `expected` says; only then a conflict.
      if (this.storedIds(p) === 'all' && head)
        return { revision: head[0], position: head[1], appended: false };
      throw new ConcurrencyConflictError(p.streamId, p.expected, current);
    }
    const many = p.events.length > 1;
    if (many) this.stmt.savepoint.run();
    let revision = current ?? -1;
    let position = tail.position;
    try {
      for (const event of p.events) {
        revision++;
        // The one place a position is made: the next one past the log's tail, never counted with.
        position = (position + positionStep(event)) as LogPosition;
        this.stmt.insert.run(
          position,
          event[0],
          p.streamId,
          revision,
          event[1],
          event[2],
          event[3],
        );
      }
    } catch (error) {
      if (many) {
        this.stmt.rollbackTo.run();
        this.stmt.release.run();
      }
      // Optimistic: ids are only looked up when an insert collides, keeping the hot path lean.
      if (isUniqueViolation(error) && this.storedIds(p) === 'all' && head)
        return { revision: head[0], position: head[1], appended: false };
      throw error;
    }
    if (many) this.stmt.release.run();
    tail.position = position;
    return { revision, position, appended: true };
  }

  /** 'all' when every id is stored in this stream; throws when only part of them are stored. */
  private storedIds(p: PendingAppend): 'all' | 'none' {
    let here = 0;
    let anywhere = 0;
    for (const [eventId] of p.events) {
      const stream = this.stmt.streamOfId.get(eventId);
      if (stream === undefined) continue;
      anywhere++;
      if (stream === p.streamId) here++;
    }
    if (anywhere === 0) return 'none';
    if (here === p.events.length) return 'all';
    // Part stored, or stored under another stream: a caller bug that a retry cannot fix.
    throw new IdempotencyMismatchError(p.streamId);
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    return toStoredEvents(
      this.stmt.readStream.all(streamId, options.fromRevision ?? 0, options.limit ?? -1),
    );
  }

  async streamRevision(streamId: string): Promise<number | null> {
    const known = this.knownHeads().get(streamId);
    if (known !== undefined) return known < 0 ? null : known;
    const revision = this.stmt.head.get(streamId)?.[0] ?? null;
    this.rememberHead(streamId, revision ?? -1);
    return revision;
  }

  /** At once: the heads are read in process. */
  streamRevisions(streamIds: readonly string[]): Array<number | null> {
    return this.headsOf(streamIds);
  }

  /** Known heads from memory; the rest in one statement (a report of 100 nodes checks 100). */
  private headsOf(streamIds: readonly string[]): Array<number | null> {
    if (streamIds.length === 0) return [];
    const known = this.knownHeads();
    const out: Array<number | null> = new Array(streamIds.length);
    let missing: number[] | undefined;
    for (let i = 0; i < streamIds.length; i++) {
      const head = known.get(streamIds[i]);
      if (head === undefined) (missing ??= []).push(i);
      else out[i] = head < 0 ? null : head;
    }
    if (missing) {
      const read = this.stmt.heads.all(JSON.stringify(missing.map((i) => streamIds[i])));
      for (let j = 0; j < missing.length; j++) {
        out[missing[j]] = read[j];
        this.rememberHead(streamIds[missing[j]], read[j] ?? -1);
      }
    }
    return out;
  }

  /** The heads map, emptied first if another connection committed since the last look. */
  /**
   * EXCLUSIVE locking mode set before the first access (WAL then keeps its index in this
   * process's memory, no shared memory), and the lock taken now by an empty exclusive
   * transaction, so a second control plane on the same file fails at start, not at its first
   * append. The lock is the operating system's: it goes with the process, even on SIGKILL.
   */
  private holdExclusively(file: string): void {
    try {
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.db.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (error) {
      this.db.close();
      if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY'))
        throw new EventStoreInUseError(file);
      throw error;
    }
  }

  private knownHeads(): Map<string, number> {
    // The only connection to the file: every head it knows is exact.
    if (this.exclusive) return this.heads;
    const version = this.stmt.dataVersion.get() as number;
    if (version !== this.headsVersion) {
      this.heads.clear();
      this.headsVersion = version;
    }
    return this.heads;
  }

  private rememberHead(streamId: string, revision: number): void {
    // Bounded: past the limit start over (a miss is one indexed read, never a wrong answer).
    if (this.heads.size >= HEADS_CAPACITY && !this.heads.has(streamId)) this.heads.clear();
    this.heads.set(streamId, revision);
  }

  async readAll(options: ReadAllOptions): Promise<StoredEvent[]> {
    const after = options.after ?? LOG_START;
    const rows =
      options.types === undefined
        ? this.stmt.readAll.all(after, options.limit)
        : this.stmt.readAllTypes.all(after, JSON.stringify(options.types), options.limit);
    return toStoredEvents(rows);
  }

  async headPosition(): Promise<LogPosition> {
    return this.stmt.maxPosition.get() ?? LOG_START;
  }

  async countAfter(after: LogPosition, cap: number): Promise<number> {
    return this.stmt.countAfter.get(after, cap) ?? 0;
  }

  watch(listener: () => void): () => void {
    this.listeners.add(listener);
    if (!this.pollTimer && !this.closed) {
      // Polling notices appends made by other processes on the same file.
      this.pollTimer = setInterval(() => this.poll(), this.pollMs);
      this.pollTimer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopPolling();
    };
  }

  private poll(): void {
    if (this.closed) return;
    try {
      const head = this.stmt.maxPosition.get() ?? LOG_START;
      if (head > this.lastSeenHead) this.notify();
    } catch {
      // A busy or failing read only delays the notification to the next tick.
    }
  }

  private notify(): void {
    if (this.notifyScheduled) return;
    this.notifyScheduled = true;
    // Coalesced: one call per listener for every burst of flushes.
    setImmediate(() => {
      this.notifyScheduled = false;
      if (this.closed) return;
      this.lastSeenHead = this.stmt.maxPosition.get() ?? this.lastSeenHead;
      for (const listener of [...this.listeners]) {
        try {
          listener();
        } catch {
          // A failing listener must not starve the others; readers catch up from checkpoints.
        }
      }
    });
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('event store is closed');
    this.stmt.maxPosition.get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Pending appends were promised a transaction: write them before closing.
    this.flush();
    this.closed = true;
    this.stopPolling();
    this.listeners.clear();
    this.db.close();
  }
}
