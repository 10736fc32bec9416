import { Filter as MongoFilter, MongoClient, MongoError } from 'mongodb';
import { consoleFailureSink, FailureSink } from '@fleet/kernel/throttled-log';
import {
  CHECKPOINTS,
  CheckpointDoc,
  MongoConnection,
  Stored,
  commitOnce,
  lostRace,
  stage,
} from './mongo-commit';
import { HIDDEN, LIVE, indexKeys, withoutTombstones } from './mongo-filters';
import { planPage, toPage } from './paging';
import { CollectionOptions, Doc, Filter, FindOptions, Page, ReadModelStore, WriteOp } from './port';

// Where callers (and the specs) have always found them.
export { DELETED, WRITTEN_AT, indexKeys, withoutTombstones } from './mongo-filters';

export type MongoReadModelStoreConfig = {
  readonly url: string;
  /** Defaults to the database named in the URL (the driver's `test` when none is). */
  readonly dbName?: string;
  /** Where a failure off any caller's path (creating an index) is written; the console by default. */
  readonly log?: FailureSink;
};

/**
 * Attempts of one commit that lost a race (another writer created a document between the
 * read that planned the write and the write): each re-plans from what is stored then.
 */
const MAX_ATTEMPTS = 5;

/** A MongoDB failure, saying what the store was doing; the driver's error is its cause. */
export class ReadModelStoreError extends Error {
  constructor(action: string, cause: unknown) {
    super(`MongoDB read models: ${action} failed: ${messageOf(cause)}`, { cause });
    this.name = 'ReadModelStoreError';
  }
}

/**
 * Read models in MongoDB: one collection per read-model collection, checkpoints in
 * `_checkpoints`. Kept thin on purpose: paging comes from the shared `paging.ts` and
 * insert-only rules are enforced here in code, the same way as in the embedded store.
 *
 * Several writers (replicas projecting the same log into one database) are safe: each
 * upsert or delete is one conditional write that applies only over a document written at a
 * lower checkpoint (or none), checkpoints move with `$max`, and a delete leaves a tombstone.
 * What is read beforehand only saves sending writes bound to lose; the condition in the write
 * decides.
 */
export class MongoReadModelStore implements ReadModelStore {
  private readonly insertOnly = new Set<string>();
  private readonly log: FailureSink;
  private connection: Promise<MongoConnection> | null = null;

  constructor(private readonly config: MongoReadModelStoreConfig) {
    this.log = config.log ?? consoleFailureSink;
  }

  /** Connects once; every other method also connects on first use. */
  async connect(): Promise<void> {
    await this.attempt('connecting', () => this.connected());
  }

  defineCollection(name: string, options: CollectionOptions = {}): void {
    if (name === CHECKPOINTS) throw new Error(`${CHECKPOINTS} is reserved for checkpoints`);
    if (options.insertOnly) this.insertOnly.add(name);
    else this.insertOnly.delete(name);
    for (const index of options.indexes ?? []) {
      const keys = indexKeys(index);
      // Created in the background of the first use; createIndex is idempotent. A failure
      // (server out of reach, a conflicting index) leaves queries working, only slower.
      void this.connected()
        .then(({ db }) => db.collection<Stored>(name).createIndex({ ...keys }))
        .catch((error: unknown) =>
          this.log(
            `MongoDB read models: creating index ${JSON.stringify(keys)} on ${name} failed`,
            error,
          ),
        );
    }
  }

  async get<T extends Doc>(collection: string, id: string): Promise<T | null> {
    return this.attempt(`reading ${collection}/${id}`, async () => {
      const { db } = await this.connected();
      return (await db
        .collection<Stored>(collection)
        .findOne({ _id: id, ...LIVE }, { projection: HIDDEN })) as T | null;
    });
  }

  async find<T extends Doc>(
    collection: string,
    filter: Filter,
    options?: FindOptions,
  ): Promise<Page<T>> {
    const plan = planPage(filter, options);
    return this.attempt(`querying ${collection}`, async () => {
      const { db } = await this.connected();
      const docs = await db
        .collection<Stored>(collection)
        .find(withoutTombstones(filter, plan.filter) as MongoFilter<Stored>)
        // Pairs, not an object: keeps the key order even for integer-like field names.
        .sort(plan.sort.map(([field, direction]): [string, 1 | -1] => [field, direction]))
        .limit(plan.fetch)
        .project<T>(HIDDEN)
        .toArray();
      return toPage(plan, docs);
    });
  }

  async count(collection: string, filter: Filter): Promise<number> {
    return this.attempt(`counting ${collection}`, async () => {
      const { db } = await this.connected();
      return db
        .collection<Stored>(collection)
        .countDocuments(withoutTombstones(filter, filter) as MongoFilter<Stored>);
    });
  }

  async commit(projection: string, ops: readonly WriteOp[], checkpoint: number): Promise<void> {
    const writes = stage(ops, this.insertOnly);
    for (let attempt = 1; ; attempt++) {
      try {
        return await commitOnce(await this.connected(), projection, writes, checkpoint);
      } catch (error) {
        if (!lostRace(error)) {
          throw error instanceof MongoError
            ? new ReadModelStoreError(`committing ${projection}`, error)
            : error;
        }
        // Another writer got to one of our documents between our read and our write: the
        // condition missed (a newer document) or two first inserts met, and the server said
        // duplicate key (in a transaction, aborting all of it). Planned again from what is
        // stored now, what is newer is skipped and the rest written: a skip, not a failure.
        if (attempt === MAX_ATTEMPTS) {
          throw new ReadModelStoreError(
            `committing ${projection} (lost ${MAX_ATTEMPTS} races with other writers in a row)`,
            error,
          );
        }
      }
    }
  }

  async checkpoint(projection: string): Promise<number> {
    return this.attempt(`reading the checkpoint of ${projection}`, async () => {
      const { db } = await this.connected();
      const doc = await db.collection<CheckpointDoc>(CHECKPOINTS).findOne({ _id: projection });
      return doc?.position ?? 0;
    });
  }

  async reset(): Promise<void> {
    await this.attempt('dropping the read models', async () => {
      const { db } = await this.connected();
      const collections = await db.listCollections({}, { nameOnly: true }).toArray();
      for (const { name } of collections) {
        if (!name.startsWith('system.')) await db.dropCollection(name);
      }
    });
  }

  async ping(): Promise<void> {
    await this.attempt('ping', async () => {
      const { db } = await this.connected();
      await db.command({ ping: 1 });
    });
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    if (!connection) return;
    // A connect that failed left nothing open; its error was the caller's already.
    const open = await connection.catch(() => null);
    if (open) await open.client.close();
  }

  private connected(): Promise<MongoConnection> {
    if (this.connection) return this.connection;
    const connection = (async (): Promise<MongoConnection> => {
      // ignoreUndefined: an `undefined` field is absent, as in the embedded store.
      const client = await MongoClient.connect(this.config.url, { ignoreUndefined: true });
      try {
        const db = client.db(this.config.dbName);
        const hello = await db.command({ hello: 1 });
        // Transactions need a replica set or a sharded cluster (mongos answers `isdbgrid`).
        const transactions = typeof hello.setName === 'string' || hello.msg === 'isdbgrid';
        return { client, db, transactions };
      } catch (error) {
        await client.close();
        throw error;
      }
    })();
    // A failed connect is not cached, so the next call tries again.
    connection.catch(() => {
      if (this.connection === connection) this.connection = null;
    });
    return (this.connection = connection);
  }

  /** Runs `work`, turning a driver error into one that says what was being done. */
  private async attempt<T>(action: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw error instanceof MongoError ? new ReadModelStoreError(action, error) : error;
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
