import {
  AnyBulkWriteOperation,
  ClientSession,
  Collection,
  Db,
  Filter as MongoFilter,
  MongoClient,
  MongoServerError,
} from 'mongodb';
import { assertNever } from '../../kernel/src/decider';
import { requireId, sameContent } from './documents';
import { planPage, toPage } from './paging';
import {
  CollectionOptions,
  Doc,
  Filter,
  FindOptions,
  InsertOnlyViolationError,
  Page,
  ReadModelStore,
  WriteOp,
} from './port';

export type MongoReadModelStoreConfig = {
  readonly url: string;
  /** Defaults to the database named in the URL (the driver's `test` when none is). */
  readonly dbName?: string;
};

type Stored = { _id: string } & Record<string, unknown>;
type CheckpointDoc = { _id: string; position: number };
type Batch = { readonly collection: string; readonly writes: AnyBulkWriteOperation<Stored>[] };

const CHECKPOINTS = '_checkpoints';
const DUPLICATE_KEY = 11000;

/**
 * Read models in MongoDB: one collection per read-model collection, checkpoints in
 * `_checkpoints`. Kept thin on purpose: paging comes from the shared `paging.ts` and
 * insert-only rules are enforced here in code, the same way as in the embedded store.
 */
export class MongoReadModelStore implements ReadModelStore {
  private readonly insertOnly = new Set<string>();
  private connection: Promise<{ client: MongoClient; db: Db; transactions: boolean }> | null = null;

  constructor(private readonly config: MongoReadModelStoreConfig) {}

  /** Connects once; every other method also connects on first use. */
  async connect(): Promise<void> {
    await this.connected();
  }

  defineCollection(name: string, options: CollectionOptions = {}): void {
    if (name === CHECKPOINTS) throw new Error(`${CHECKPOINTS} is reserved for checkpoints`);
    if (options.insertOnly) this.insertOnly.add(name);
    else this.insertOnly.delete(name);
    for (const field of options.indexes ?? []) {
      // Created in the background of the first use; createIndex is idempotent.
      void this.connected()
        .then(({ db }) => db.collection<Stored>(name).createIndex({ [field]: 1 }))
        .catch(() => undefined);
    }
  }

  async get<T extends Doc>(collection: string, id: string): Promise<T | null> {
    const { db } = await this.connected();
    return (await db.collection<Stored>(collection).findOne({ _id: id })) as T | null;
  }

  async find<T extends Doc>(
    collection: string,
    filter: Filter,
    options?: FindOptions,
  ): Promise<Page<T>> {
    const plan = planPage(filter, options);
    const { db } = await this.connected();
    const docs = await db
      .collection<Stored>(collection)
      .find(plan.filter as MongoFilter<Stored>)
      // Pairs, not an object: keeps the key order even for integer-like field names.
      .sort(plan.sort.map(([field, direction]): [string, 1 | -1] => [field, direction]))
      .limit(plan.fetch)
      .toArray();
    return toPage(plan, docs as T[]);
  }

  async count(collection: string, filter: Filter): Promise<number> {
    const { db } = await this.connected();
    return db.collection<Stored>(collection).countDocuments(filter as MongoFilter<Stored>);
  }

  async commit(projection: string, ops: readonly WriteOp[], checkpoint: number): Promise<void> {
    try {
      await this.commitOnce(projection, ops, checkpoint);
    } catch (error) {
      // Another writer inserted one of our ids between our read and our write. Going again
      // re-reads it: the same content is then a no-op, other content a violation.
      if (!(error instanceof MongoServerError) || error.code !== DUPLICATE_KEY) throw error;
      await this.commitOnce(projection, ops, checkpoint);
    }
  }

  async checkpoint(projection: string): Promise<number> {
    const { db } = await this.connected();
    const doc = await db.collection<CheckpointDoc>(CHECKPOINTS).findOne({ _id: projection });
    return doc?.position ?? 0;
  }

  async reset(): Promise<void> {
    const { db } = await this.connected();
    const collections = await db.listCollections({}, { nameOnly: true }).toArray();
    for (const { name } of collections) {
      if (!name.startsWith('system.')) await db.dropCollection(name);
    }
  }

  async ping(): Promise<void> {
    const { db } = await this.connected();
    await db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    if (connection) await (await connection).client.close();
  }

  private connected(): Promise<{ client: MongoClient; db: Db; transactions: boolean }> {
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

  private async commitOnce(
    projection: string,
    ops: readonly WriteOp[],
    checkpoint: number,
  ): Promise<void> {
    const { client, db, transactions } = await this.connected();
    const run = async (session?: ClientSession): Promise<void> => {
      for (const { collection, writes } of await this.plan(db, ops, session)) {
        await db.collection<Stored>(collection).bulkWrite(writes, { ordered: true, session });
      }
      await db
        .collection<CheckpointDoc>(CHECKPOINTS)
        .updateOne(
          { _id: projection },
          { $set: { position: checkpoint } },
          { upsert: true, session },
        );
    };
    // Without transactions (standalone server) writes go first and the checkpoint last:
    // a crash in between replays the page, which idempotent projections absorb.
    if (!transactions) return run();
    const session = client.startSession();
    try {
      await session.withTransaction(() => run(session));
    } finally {
      await session.endSession();
    }
  }

  /**
   * Validates the whole batch before anything is written (insert-only rules, re-inserts
   * compared with what is stored) and groups consecutive ops on one collection into a batch.
   */
  private async plan(db: Db, ops: readonly WriteOp[], session?: ClientSession): Promise<Batch[]> {
    const existing = await this.existingInserted(db, ops, session);
    const staged = new Map<string, Stored | null>();
    const key = (collection: string, id: string) => `${collection}\u0000${id}`;
    const batches: { collection: string; writes: AnyBulkWriteOperation<Stored>[] }[] = [];
    const push = (collection: string, write: AnyBulkWriteOperation<Stored>): void => {
      const last = batches[batches.length - 1];
      if (last?.collection === collection) last.writes.push(write);
      else batches.push({ collection, writes: [write] });
    };
    for (const op of ops) {
      switch (op.op) {
        case 'upsert': {
          this.refuseChangeToInsertOnly(op.collection, requireId(op.doc));
          const doc = op.doc as Stored;
          staged.set(key(op.collection, doc._id), doc);
          push(op.collection, {
            replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true },
          });
          break;
        }
        case 'delete':
          this.refuseChangeToInsertOnly(op.collection, op.id);
          staged.set(key(op.collection, op.id), null);
          push(op.collection, { deleteOne: { filter: { _id: op.id } } });
          break;
        case 'insert': {
          const k = key(op.collection, requireId(op.doc));
          const current = staged.has(k) ? staged.get(k) : existing.get(k);
          if (!current) {
            staged.set(k, op.doc as Stored);
            push(op.collection, { insertOne: { document: op.doc as Stored } });
          } else if (!sameContent(current, op.doc)) {
            throw new InsertOnlyViolationError(op.collection, op.doc._id);
          }
          break;
        }
        default:
          assertNever(op, 'write op');
      }
    }
    return batches;
  }

  /** The stored documents of every id the batch inserts, keyed `collection\0id`. */
  private async existingInserted(
    db: Db,
    ops: readonly WriteOp[],
    session?: ClientSession,
  ): Promise<Map<string, Stored>> {
    const ids = new Map<string, Set<string>>();
    for (const op of ops) {
      if (op.op !== 'insert') continue;
      let set = ids.get(op.collection);
      if (!set) ids.set(op.collection, (set = new Set()));
      set.add(op.doc._id);
    }
    const found = new Map<string, Stored>();
    for (const [collection, set] of ids) {
      const coll: Collection<Stored> = db.collection<Stored>(collection);
      for await (const doc of coll.find({ _id: { $in: [...set] } }, { session })) {
        found.set(`${collection}\u0000${doc._id}`, doc);
      }
    }
    return found;
  }

  private refuseChangeToInsertOnly(collection: string, id: string): void {
    if (this.insertOnly.has(collection)) throw new InsertOnlyViolationError(collection, id);
  }
}
