import {
  AnyBulkWriteOperation,
  ClientSession,
  Db,
  Filter as MongoFilter,
  MongoBulkWriteError,
  MongoClient,
  MongoError,
  MongoServerError,
} from 'mongodb';
import { assertNever } from '../../kernel/src/decider';
import { consoleFailureSink, FailureSink } from '../../kernel/src/throttled-log';
import { requireId, sameContent } from './documents';
import { planPage, toPage } from './paging';
import {
  CollectionOptions,
  Doc,
  Filter,
  FindOptions,
  IndexKeys,
  InsertOnlyViolationError,
  Page,
  ReadModelStore,
  WriteOp,
} from './port';

export type MongoReadModelStoreConfig = {
  readonly url: string;
  /** Defaults to the database named in the URL (the driver's `test` when none is). */
  readonly dbName?: string;
  /** Where a failure off any caller's path (creating an index) is written; the console by default. */
  readonly log?: FailureSink;
};

type Stored = { _id: string } & Record<string, unknown>;
type CheckpointDoc = { _id: string; position: number };
type Connection = { client: MongoClient; db: Db; transactions: boolean };

const CHECKPOINTS = '_checkpoints';
const DUPLICATE_KEY = 11000;
/**
 * Bookkeeping fields of stored documents, never handed out: the checkpoint of the commit that
 * last wrote the document, and the mark of a tombstone (what a delete leaves, so that an older
 * upsert from a writer behind cannot bring the document back).
 */
export const WRITTEN_AT = '_checkpoint';
export const DELETED = '_deleted';
const HIDDEN = { [WRITTEN_AT]: 0, [DELETED]: 0 } as const;
const LIVE = { [DELETED]: { $exists: false } } as const;
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
  private connection: Promise<Connection> | null = null;

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
    const writes = this.stage(ops);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.commitOnce(projection, writes, checkpoint);
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

  private connected(): Promise<Connection> {
    if (this.connection) return this.connection;
    const connection = (async () => {
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

  /**
   * The commit's writes, one per document: the last upsert or delete of each (they all carry
   * the commit's checkpoint, so an earlier one would only be overwritten), and the inserts.
   * Insert-only rules are checked here, before anything is read or written.
   */
  private stage(ops: readonly WriteOp[]): Map<string, Map<string, Staged>> {
    const staged = new Map<string, Map<string, Staged>>();
    const of = (collection: string): Map<string, Staged> => {
      let docs = staged.get(collection);
      if (!docs) staged.set(collection, (docs = new Map()));
      return docs;
    };
    for (const op of ops) {
      switch (op.op) {
        case 'upsert':
          this.refuseChangeToInsertOnly(op.collection, requireId(op.doc));
          of(op.collection).set(op.doc._id, { kind: 'put', doc: op.doc as Stored });
          break;
        case 'delete':
          this.refuseChangeToInsertOnly(op.collection, op.id);
          of(op.collection).set(op.id, { kind: 'delete' });
          break;
        case 'insert': {
          const docs = of(op.collection);
          const before = docs.get(requireId(op.doc));
          const doc = op.doc as Stored;
          // After an upsert or insert of the id in this commit: the same document is a no-op.
          // After a delete: the document again, written as the upsert it now amounts to.
          if (!before) docs.set(doc._id, { kind: 'insert', doc });
          else if (before.kind === 'delete') docs.set(doc._id, { kind: 'put', doc });
          else if (!sameContent(before.doc, doc)) {
            throw new InsertOnlyViolationError(op.collection, doc._id);
          }
          break;
        }
        default:
          assertNever(op, 'write op');
      }
    }
    return staged;
  }

  private async commitOnce(
    projection: string,
    staged: Map<string, Map<string, Staged>>,
    checkpoint: number,
  ): Promise<void> {
    const { client, db, transactions } = await this.connected();
    const run = async (session?: ClientSession): Promise<void> => {
      // Planned in full before anything is written: a refused insert writes nothing.
      const batches: Array<[string, AnyBulkWriteOperation<Stored>[]]> = [];
      for (const [collection, docs] of staged) {
        const writes = await this.plan(db, collection, docs, checkpoint, session);
        if (writes.length > 0) batches.push([collection, writes]);
      }
      for (const [collection, writes] of batches) {
        // One write per document: their order does not matter, and one losing a race does
        // not stop the others.
        await db.collection<Stored>(collection).bulkWrite(writes, { ordered: false, session });
      }
      // $max: a writer behind another never moves the checkpoint back.
      await db
        .collection<CheckpointDoc>(CHECKPOINTS)
        .updateOne(
          { _id: projection },
          { $max: { position: checkpoint } },
          { upsert: true, session },
        );
    };
    // Without transactions (standalone server) writes go first and the checkpoint last:
    // a crash in between replays the page, which idempotent projections absorb. A checkpoint
    // alone (a page that changed nothing, a reactor's) is one write: no transaction either.
    if (!transactions || staged.size === 0) return run();
    const session = client.startSession();
    try {
      await session.withTransaction(() => run(session));
    } finally {
      await session.endSession();
    }
  }

  /**
   * The writes of one collection. Upserts and deletes over a document written at this
   * checkpoint or a later one are left out (a newer write won); the others are sent with that
   * condition in their filter, so one that loses a race after this read changes nothing.
   * An insert over a live document is a no-op when the content is the same, else refused.
   */
  private async plan(
    db: Db,
    collection: string,
    docs: ReadonlyMap<string, Staged>,
    checkpoint: number,
    session?: ClientSession,
  ): Promise<AnyBulkWriteOperation<Stored>[]> {
    const coll = db.collection<Stored>(collection);
    const positioned: string[] = [];
    const inserted: string[] = [];
    for (const [id, write] of docs) (write.kind === 'insert' ? inserted : positioned).push(id);
    const writtenAt = new Map<string, unknown>();
    if (positioned.length > 0) {
      const cursor = coll.find(
        { _id: { $in: positioned } },
        { projection: { [WRITTEN_AT]: 1 }, session },
      );
      for await (const doc of cursor) writtenAt.set(doc._id, doc[WRITTEN_AT]);
    }
    const existing = new Map<string, Stored>();
    if (inserted.length > 0) {
      for await (const doc of coll.find({ _id: { $in: inserted } }, { session })) {
        existing.set(doc._id, doc);
      }
    }
    const older = {
      $or: [{ [WRITTEN_AT]: { $lt: checkpoint } }, { [WRITTEN_AT]: { $exists: false } }],
    };
    const writes: AnyBulkWriteOperation<Stored>[] = [];
    for (const [id, write] of docs) {
      switch (write.kind) {
        case 'put':
        case 'delete': {
          const at = writtenAt.get(id);
          if (typeof at === 'number' && at >= checkpoint) break;
          const replacement: Stored =
            write.kind === 'put'
              ? { ...write.doc, [WRITTEN_AT]: checkpoint }
              : { _id: id, [WRITTEN_AT]: checkpoint, [DELETED]: true };
          writes.push({
            replaceOne: { filter: { _id: id, ...older }, replacement, upsert: true },
          });
          break;
        }
        case 'insert': {
          const stored = existing.get(id);
          if (stored && stored[DELETED] !== true) {
            const { [WRITTEN_AT]: _at, ...content } = stored;
            if (!sameContent(content, write.doc)) {
              throw new InsertOnlyViolationError(collection, id);
            }
          } else if (stored) {
            // Over a tombstone (a collection that also has deletes): only while it is one.
            writes.push({
              replaceOne: {
                filter: { _id: id, [DELETED]: true },
                replacement: write.doc,
                upsert: true,
              },
            });
          } else {
            writes.push({ insertOne: { document: write.doc } });
          }
          break;
        }
        default:
          assertNever(write, 'staged write');
      }
    }
    return writes;
  }

  private refuseChangeToInsertOnly(collection: string, id: string): void {
    if (this.insertOnly.has(collection)) throw new InsertOnlyViolationError(collection, id);
  }
}

/** What a commit does to one document. */
type Staged =
  | { readonly kind: 'put'; readonly doc: Stored }
  | { readonly kind: 'delete' }
  | { readonly kind: 'insert'; readonly doc: Stored };

/** The keys MongoDB indexes for a declaration: an equality field is paged in `_id` order. */
export function indexKeys(index: string | IndexKeys): IndexKeys {
  return typeof index === 'string' ? { [index]: 1, _id: 1 } : index;
}

/**
 * `effective` (the caller's `filter`, narrowed to a page) with tombstones left out, unless
 * the caller's filter can never match one: a tombstone has no field but `_id` and the
 * bookkeeping, so a condition that a missing field fails (an equality with a value, a range)
 * excludes it already. Those filters stay as they were, and with them the plans that answer
 * from an index alone (the count of online nodes).
 */
export function withoutTombstones(filter: Filter, effective: Filter): Filter {
  return excludesMissing(filter) ? effective : { $and: [effective, LIVE] };
}

/** Whether no document lacking every field but `_id` can match `filter`. */
function excludesMissing(filter: Filter): boolean {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) {
      if (condition.some((f) => isFilter(f) && excludesMissing(f))) return true;
    } else if (key === '$or' && Array.isArray(condition)) {
      if (condition.length > 0 && condition.every((f) => isFilter(f) && excludesMissing(f))) {
        return true;
      }
    } else if (!key.startsWith('$') && key !== '_id' && failsOnMissing(condition)) {
      return true;
    }
  }
  return false;
}

/** Whether a field's condition fails when the field is missing (conservative: false when unsure). */
function failsOnMissing(condition: unknown): boolean {
  if (condition === null || condition === undefined) return false;
  if (typeof condition !== 'object' || Array.isArray(condition) || condition instanceof Date) {
    return true;
  }
  const entries = Object.entries(condition as Record<string, unknown>);
  // An embedded document to equal (no operator): a missing field is not it.
  if (entries.length > 0 && entries.every(([op]) => !op.startsWith('$'))) return true;
  return entries.some(([op, operand]) => {
    switch (op) {
      case '$eq':
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        return operand !== null && operand !== undefined;
      case '$in':
        return Array.isArray(operand) && operand.every((v) => v !== null && v !== undefined);
      case '$exists':
        return operand === true;
      default:
        return false;
    }
  });
}

function isFilter(value: unknown): value is Filter {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A duplicate key: another writer created a document this commit planned on as absent.
 * Anything else (a network error inside a bulk write included) is a failure.
 */
function lostRace(error: unknown): boolean {
  if (error instanceof MongoBulkWriteError) {
    const errors = [error.writeErrors].flat();
    return errors.length > 0 && errors.every((e) => e.code === DUPLICATE_KEY);
  }
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
