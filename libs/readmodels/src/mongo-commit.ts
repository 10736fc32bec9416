import {
  AnyBulkWriteOperation,
  ClientSession,
  Db,
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
} from 'mongodb';
import { assertNever } from '@fleet/kernel/decider';
import { requireId, sameContent } from './documents';
import { DELETED, WRITTEN_AT } from './mongo-filters';
import { InsertOnlyViolationError, WriteOp } from './port';

// How a commit of read models becomes conditional writes in MongoDB: staged per document,
// planned against what is stored, written (in a transaction where the server has them) with
// the projection's checkpoint.

export type Stored = { _id: string } & Record<string, unknown>;
export type CheckpointDoc = { _id: string; position: number };
export type MongoConnection = { client: MongoClient; db: Db; transactions: boolean };

export const CHECKPOINTS = '_checkpoints';
const DUPLICATE_KEY = 11000;

/** What a commit does to one document. */
type Staged =
  | { readonly kind: 'put'; readonly doc: Stored }
  | { readonly kind: 'delete' }
  | { readonly kind: 'insert'; readonly doc: Stored };

export type StagedCommit = Map<string, Map<string, Staged>>;

/**
 * The commit's writes, one per document: the last upsert or delete of each (they all carry
 * the commit's checkpoint, so an earlier one would only be overwritten), and the inserts.
 * Insert-only rules are checked here, before anything is read or written.
 */
export const stage = (ops: readonly WriteOp[], insertOnly: ReadonlySet<string>): StagedCommit => {
  const staged: StagedCommit = new Map();
  const of = (collection: string): Map<string, Staged> => {
    let docs = staged.get(collection);
    if (!docs) staged.set(collection, (docs = new Map()));
    return docs;
  };
  const refuseChange = (collection: string, id: string): void => {
    if (insertOnly.has(collection)) throw new InsertOnlyViolationError(collection, id);
  };
  for (const op of ops) {
    switch (op.op) {
      case 'upsert':
        refuseChange(op.collection, requireId(op.doc));
        of(op.collection).set(op.doc._id, { kind: 'put', doc: op.doc as Stored });
        break;
      case 'delete':
        refuseChange(op.collection, op.id);
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
};

/** One attempt at a staged commit: its writes, then the projection's checkpoint. */
export const commitOnce = async (
  { client, db, transactions }: MongoConnection,
  projection: string,
  staged: StagedCommit,
  checkpoint: number,
): Promise<void> => {
  const run = async (session?: ClientSession): Promise<void> => {
    // Planned in full before anything is written: a refused insert writes nothing.
    const batches: Array<[string, AnyBulkWriteOperation<Stored>[]]> = [];
    for (const [collection, docs] of staged) {
      const writes = await plan(db, collection, docs, checkpoint, session);
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
};

/** What is stored of the documents a commit touches: the checkpoint of each put or delete, the inserts' documents. */
const readStored = async (
  db: Db,
  collection: string,
  docs: ReadonlyMap<string, Staged>,
  session?: ClientSession,
): Promise<{ writtenAt: Map<string, unknown>; existing: Map<string, Stored> }> => {
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
  return { writtenAt, existing };
};

/**
 * The writes of one collection. Upserts and deletes over a document written at this
 * checkpoint or a later one are left out (a newer write won); the others are sent with that
 * condition in their filter, so one that loses a race after this read changes nothing.
 * An insert over a live document is a no-op when the content is the same, else refused.
 */
const plan = async (
  db: Db,
  collection: string,
  docs: ReadonlyMap<string, Staged>,
  checkpoint: number,
  session?: ClientSession,
): Promise<AnyBulkWriteOperation<Stored>[]> => {
  const { writtenAt, existing } = await readStored(db, collection, docs, session);
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
};

/**
 * A duplicate key: another writer created a document this commit planned on as absent.
 * Anything else (a network error inside a bulk write included) is a failure.
 */
export const lostRace = (error: unknown): boolean => {
  if (error instanceof MongoBulkWriteError) {
    const errors = [error.writeErrors].flat();
    return errors.length > 0 && errors.every((e) => e.code === DUPLICATE_KEY);
  }
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
};
