import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { FailureSink } from '@fleet/kernel/throttled-log';
import { KurrentDbEventStore } from './kurrentdb-event-store';
import { EventStore } from './port';
import { isPostgresUrl } from './postgres-connection';
import { PostgresEventStore } from './postgres-event-store';
import { SqliteEventStore } from './sqlite-event-store';

export * from './port';
export * from './sqlite-event-store';
export * from './kurrentdb-event-store';
export * from './postgres-event-store';

export type EventStoreConfig = {
  /**
   * `postgres://…`/`postgresql://…` for PostgreSQL, else a KurrentDB (or EventStoreDB) connection
   * string; when unset, the embedded SQLite file is used.
   */
  readonly eventstoreUrl?: string;
  readonly dataDir: string;
  /** Where the production store's background failures (a dropped subscription) are logged. */
  readonly log?: FailureSink;
};

/**
 * PostgreSQL or KurrentDB by the URL's scheme when it is set, else `${dataDir}/events.db`, so a
 * fresh machine needs nothing.
 */
export const createEventStore = (config: EventStoreConfig): EventStore => {
  if (config.eventstoreUrl && isPostgresUrl(config.eventstoreUrl)) {
    return new PostgresEventStore({ url: config.eventstoreUrl, log: config.log });
  }
  if (config.eventstoreUrl) {
    return KurrentDbEventStore.fromConnectionString(config.eventstoreUrl, { log: config.log });
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // One control plane per embedded log: a second process on the same DATA_DIR fails at start.
  return new SqliteEventStore({ file: path.join(config.dataDir, 'events.db'), exclusive: true });
};
