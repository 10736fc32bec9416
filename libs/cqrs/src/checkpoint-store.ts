import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { LOG_START, LogPosition, asLogPosition } from '@fleet/eventstore/port';
import { ReadModelStore } from '@fleet/readmodels/port';

/** Where reactors keep their checkpoints; they must outlive the process. */
export interface CheckpointStore {
  load(name: string): Promise<LogPosition>;
  save(name: string, position: LogPosition): Promise<void>;
  close(): Promise<void>;
}

/** Embedded mode: a small SQLite file beside the event log (never the events table itself). */
export class SqliteCheckpointStore implements CheckpointStore {
  private readonly db: Database.Database;
  private readonly select: Database.Statement<[string], { position: LogPosition }>;
  private readonly upsert: Database.Statement<[string, number]>;

  constructor(file: string) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // NORMAL, not FULL: a checkpoint lost to power loss only replays idempotent reactions,
    // and an fsync per page would block the event loop on every reactor step.
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL)',
    );
    this.select = this.db.prepare('SELECT position FROM checkpoints WHERE name = ?');
    this.upsert = this.db.prepare(
      'INSERT INTO checkpoints (name, position) VALUES (?, ?) ' +
        'ON CONFLICT(name) DO UPDATE SET position = excluded.position',
    );
  }

  async load(name: string): Promise<LogPosition> {
    return this.select.get(name)?.position ?? LOG_START;
  }

  async save(name: string, position: LogPosition): Promise<void> {
    this.upsert.run(name, position);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/** Production mode: checkpoints live in the (durable) read-model database. */
export class ReadModelCheckpointStore implements CheckpointStore {
  constructor(private readonly store: ReadModelStore) {}

  async load(name: string): Promise<LogPosition> {
    return asLogPosition(await this.store.checkpoint(`reactor:${name}`));
  }

  save(name: string, position: LogPosition): Promise<void> {
    return this.store.commit(`reactor:${name}`, [], position);
  }

  async close(): Promise<void> {}
}
