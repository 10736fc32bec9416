import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { EsdbEventStore } from './esdb-event-store';
import { EventStore } from './port';
import { SqliteEventStore } from './sqlite-event-store';

export * from './port';
export * from './sqlite-event-store';
export * from './esdb-event-store';

export type EventStoreConfig = {
  /** EventStoreDB connection string; when unset, the embedded SQLite file is used. */
  readonly eventstoreUrl?: string;
  readonly dataDir: string;
};

/** EventStoreDB when its URL is set, else `${dataDir}/events.db`, so a fresh machine needs nothing. */
export const createEventStore = (config: EventStoreConfig): EventStore => {
  if (config.eventstoreUrl) return EsdbEventStore.fromConnectionString(config.eventstoreUrl);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // One control plane per embedded log: a second process on the same DATA_DIR fails at start.
  return new SqliteEventStore({ file: path.join(config.dataDir, 'events.db'), exclusive: true });
};
