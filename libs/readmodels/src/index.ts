import { FailureSink } from '@fleet/kernel/throttled-log';
import { EmbeddedReadModelStore } from './embedded-read-model-store';
import { MongoReadModelStore } from './mongo-read-model-store';
import { ReadModelStore } from './port';

export * from './port';
export { DEFAULT_LIMIT, MAX_LIMIT } from './paging';
export { EmbeddedReadModelStore } from './embedded-read-model-store';
export { MongoReadModelStore, ReadModelStoreError } from './mongo-read-model-store';
export type { MongoReadModelStoreConfig } from './mongo-read-model-store';

/**
 * MongoDB when `mongoUrl` is set (it connects on first use, or call `connect()`), else the
 * embedded store, which the caller fills by replaying the event log. `log` takes MongoDB's
 * failures off any caller's path (creating an index); the console when not given.
 */
export function createReadModelStore(config: {
  mongoUrl?: string;
  mongoDbName?: string;
  log?: FailureSink;
}): ReadModelStore {
  return config.mongoUrl
    ? new MongoReadModelStore({ url: config.mongoUrl, dbName: config.mongoDbName, log: config.log })
    : new EmbeddedReadModelStore();
}
