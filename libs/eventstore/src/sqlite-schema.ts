import Database from 'better-sqlite3';
import { EventMetadata } from '@fleet/kernel';
import { LogPosition, StoredEvent } from './port';

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
export type Row = [LogPosition, string, string, number, string, string, string];

/** Raw rows and a plain loop: replay speed is dominated by this mapping. */
export const toStoredEvents = (rows: readonly Row[]): StoredEvent[] => {
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

/** Every statement the store runs, prepared once per connection. */
export type Statements = {
  readonly begin: Database.Statement;
  readonly commit: Database.Statement;
  readonly rollback: Database.Statement;
  readonly savepoint: Database.Statement;
  readonly rollbackTo: Database.Statement;
  readonly release: Database.Statement;
  readonly insert: Database.Statement<[number, string, string, number, string, string, string]>;
  readonly head: Database.Statement<[string], [number, LogPosition]>;
  readonly heads: Database.Statement<[string], number | null>;
  readonly streamOfId: Database.Statement<[string], string>;
  readonly maxPosition: Database.Statement<[], LogPosition | null>;
  readonly countAfter: Database.Statement<[LogPosition, number], number>;
  readonly dataVersion: Database.Statement<[], number>;
  readonly readAll: Database.Statement<[LogPosition, number], Row>;
  readonly readAllTypes: Database.Statement<[LogPosition, string, number], Row>;
  readonly readStream: Database.Statement<[string, number, number], Row>;
};

const prepare = (db: Database.Database): Statements => ({
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
});

/**
 * EXCLUSIVE locking mode set before the first access (WAL then keeps its index in this
 * process's memory, no shared memory), and the lock taken now by an empty exclusive
 * transaction, so a second control plane on the same file fails at start, not at its first
 * append. The lock is the operating system's: it goes with the process, even on SIGKILL.
 */
const holdExclusively = (db: Database.Database, file: string): void => {
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY'))
      throw new EventStoreInUseError(file);
    throw error;
  }
};

/**
 * Opens the log's file in WAL mode with the schema in place and the statements prepared.
 * `synchronous` FULL fsyncs the WAL at every COMMIT, so an acknowledged append survives power loss.
 */
export const openEventLog = (options: {
  readonly file: string;
  readonly synchronous?: 'FULL' | 'NORMAL';
  readonly exclusive?: boolean;
  readonly openWaitMs?: number;
}): { db: Database.Database; stmt: Statements } => {
  const db = new Database(options.file, { timeout: options.openWaitMs ?? 5000 });
  if (options.exclusive) holdExclusively(db, options.file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  for (const pragma of SQLITE_TUNING) db.pragma(pragma);
  db.exec(EVENTS_SCHEMA);
  return { db, stmt: prepare(db) };
};
