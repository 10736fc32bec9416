import Database from 'better-sqlite3';
import {
  AppendResult,
  ConcurrencyConflictError,
  EventStore,
  ExpectedRevision,
  IdempotencyMismatchError,
  LEADERSHIP_STREAM,
  LOG_START,
  LogPosition,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  StaleLeaderError,
  StoredEvent,
  fencingEpoch,
} from './port';
import { Statements, openEventLog, toStoredEvents } from './sqlite-schema';
import { StreamHeads } from './sqlite-stream-heads';

// The file's layout and opening live in sqlite-schema; callers (and the benchmark) find them here.
export { EVENTS_SCHEMA, EventStoreInUseError, SQLITE_TUNING } from './sqlite-schema';

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

export type SqliteEventStoreStats = {
  /** Transactions committed by the group-commit writer. */
  readonly flushes: number;
  /** append() calls settled (appended, no-op or refused). */
  readonly appends: number;
  /** Events written. */
  readonly events: number;
};

/** [eventId, type, data JSON, metadata JSON], serialized before the flush so a bad payload fails alone. */
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

/**
 * The embedded event store: one SQLite file in WAL mode. Appends made in the same event-loop
 * turn are group-committed in one IMMEDIATE transaction (one fsync), each validated on its own.
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database.Database;
  private readonly stmt: Statements;
  private readonly pollMs: number;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private closed = false;
  private readonly listeners = new Set<() => void>();
  private pollTimer: NodeJS.Timeout | undefined;
  private notifyScheduled = false;
  private lastSeenHead: LogPosition = LOG_START;
  private counters = { flushes: 0, appends: 0, events: 0 };
  private readonly heads: StreamHeads;

  constructor(options: SqliteEventStoreOptions) {
    this.pollMs = options.pollMs ?? 250;
    const log = openEventLog(options);
    this.db = log.db;
    this.stmt = log.stmt;
    this.heads = new StreamHeads(this.stmt, options.exclusive ?? false);
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
    const epoch = fencingEpoch(events) ?? -1;
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ streamId, expected, epoch, events: encoded, resolve, reject });
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
      const fence = { newest: batch.some((p) => p.epoch >= 0) ? this.newestTerm() : 0 };
      for (let i = 0; i < batch.length; i++) {
        try {
          this.refuseStaleLeader(batch[i], fence);
          const result = this.applyOne(batch[i], tail);
          if (result.appended) written += batch[i].events.length;
          outcomes[i] = { ok: true, result };
        } catch (error) {
          if (!(
            error instanceof ConcurrencyConflictError ||
            error instanceof IdempotencyMismatchError ||
            error instanceof StaleLeaderError
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
        if (o.ok && o.result.appended) this.heads.remember(batch[i].streamId, o.result.revision);
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

  /** The newest lease term recorded in the leadership stream (0: none), read in the flush. */
  private newestTerm(): number {
    const head = this.stmt.head.get(LEADERSHIP_STREAM);
    if (!head) return 0;
    const [last] = toStoredEvents(this.stmt.readStream.all(LEADERSHIP_STREAM, head[0], 1));
    return Number((last?.data as { epoch?: unknown } | undefined)?.epoch ?? 0);
  }

  /**
   * Fencing (port.ts, LEADERSHIP_STREAM): an append of a term older than the newest recorded is
   * refused; a term recorded earlier in the batch fences the appends after it.
   */
  private refuseStaleLeader(p: PendingAppend, fence: { newest: number }): void {
    if (p.epoch < 0) return;
    if (p.epoch < fence.newest) {
      // A replay of stored ids stays a no-op, as on PostgreSQL.
      const head = this.stmt.head.get(p.streamId);
      if (head && this.storedIds(p) === 'all') return;
      throw new StaleLeaderError(p.streamId, p.epoch, fence.newest);
    }
    if (p.streamId === LEADERSHIP_STREAM) fence.newest = p.epoch;
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
    return this.heads.revision(streamId);
  }

  /** At once: the heads are read in process. */
  streamRevisions(streamIds: readonly string[]): Array<number | null> {
    return this.heads.revisions(streamIds);
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
