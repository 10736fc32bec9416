import { Query } from 'mingo';
import {
  AnyBulkWriteOperation,
  BulkWriteOperationError,
  BulkWriteResult,
  Document,
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  MongoServerSelectionError,
  TopologyDescription,
  UpdateResult,
  WriteError,
} from 'mongodb';
import { cloneValue } from '../src/documents';

/**
 * The driver's own BulkWriteResult and WriteError classes: public types whose classes the
 * package does not re-export at run time, taken from the module that defines them.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const driverBulk = require('mongodb/lib/bulk/common') as {
  BulkWriteResult: new (raw: Document, ordered: boolean) => BulkWriteResult;
  WriteError: new (error: BulkWriteOperationError) => WriteError;
};

// eslint-disable-next-line @typescript-eslint/no-require-imports
const driverTopology = require('mongodb/lib/sdam/topology_description') as {
  TopologyDescription: new (type: string) => TopologyDescription;
};

/** What the driver throws when no server answers within its selection timeout. */
export const serverSelectionError = (message: string): MongoServerSelectionError =>
  new MongoServerSelectionError(message, new driverTopology.TopologyDescription('Unknown'));

/** A write error as the server reports one in a bulk write (e.g. code 11000). */
export const writeError = (error: BulkWriteOperationError): WriteError =>
  new driverBulk.WriteError(error);

/** A BulkWriteResult from the raw counts, as the driver makes it. */
export const bulkWriteResult = (raw: Partial<RawBulkResult> = {}): BulkWriteResult =>
  new driverBulk.BulkWriteResult({ ...emptyRawResult(), ...raw }, false);

type RawBulkResult = ReturnType<typeof emptyRawResult>;
const emptyRawResult = () => ({
  ok: 1,
  writeErrors: [] as WriteError[],
  writeConcernErrors: [] as Document[],
  insertedIds: [] as Array<{ index: number; _id: unknown }>,
  nInserted: 0,
  nUpserted: 0,
  nMatched: 0,
  nModified: 0,
  nRemoved: 0,
  upserted: [] as Array<{ index: number; _id: unknown }>,
});

/**
 * A MongoDB server's behaviour for the calls the read-model adapter makes, behind the
 * driver's own shapes: every Collection/Db method is a jest mock that answers with the
 * driver's result types (BulkWriteResult, UpdateResult) and fails with its error classes
 * (MongoBulkWriteError holding a WriteError of code 11000, MongoServerError). Filters are
 * evaluated with MongoDB's semantics (mingo), so conditional writes behave as on a server.
 * Nothing here stands in for the port: the adapter under test is the real one.
 */
export class StubServer {
  readonly collections = new Map<string, StubCollection>();
  /** What `hello` answers: a replica set (transactions) or a standalone server. */
  replicaSet = false;
  /** Runs once before the next bulk write is applied (to let another writer in between). */
  beforeNextBulkWrite: (() => Promise<void>) | null = null;

  collection(name: string): StubCollection {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new StubCollection(this, name)));
    return c;
  }

  readonly db = {
    collection: jest.fn((name: string) => this.collection(name)),
    command: jest.fn(async (command: Document) => {
      if ('hello' in command) return this.replicaSet ? { ok: 1, setName: 'rs0' } : { ok: 1 };
      return { ok: 1 };
    }),
    listCollections: jest.fn(() => ({
      toArray: async () => [...this.collections.keys()].map((name) => ({ name })),
    })),
    dropCollection: jest.fn(async (name: string) => this.collections.delete(name)),
  };

  /** A client of this server, as MongoClient.connect resolves it. */
  client(): MongoClient {
    const client = {
      db: jest.fn(() => this.db),
      close: jest.fn(async () => undefined),
      startSession: jest.fn(() => this.session()),
    };
    return client as unknown as MongoClient;
  }

  /**
   * A session whose transaction, when its callback throws, undoes the writes made with it
   * (and only those: another client's writes meanwhile stay, as on a server).
   */
  private session(): StubSession {
    const session: StubSession = {
      journal: [],
      withTransaction: jest.fn(async (callback: () => Promise<void>) => {
        session.journal = [];
        try {
          await callback();
        } catch (error) {
          for (const undo of session.journal.reverse()) undo();
          throw error;
        } finally {
          session.journal = [];
        }
      }),
      endSession: jest.fn(async () => undefined),
    };
    return session;
  }
}

type StubSession = {
  journal: Array<() => void>;
  withTransaction: jest.Mock;
  endSession: jest.Mock;
};

type Stored = Document & { _id: string };

export class StubCollection {
  docs = new Map<string, Stored>();
  /** Every cursor handed out, to look at how it was sorted, limited and projected. */
  readonly cursors: StubCursor[] = [];

  constructor(
    private readonly server: StubServer,
    readonly name: string,
  ) {}

  readonly findOne = jest.fn(async (filter: Document, options?: { projection?: Document }) => {
    const doc = this.matching(filter)[0];
    return doc ? project(doc, options?.projection) : null;
  });

  readonly find = jest.fn((filter: Document, options?: { projection?: Document }) => {
    const cursor = new StubCursor(this.matching(filter), options?.projection);
    this.cursors.push(cursor);
    return cursor;
  });

  readonly countDocuments = jest.fn(async (filter: Document) => this.matching(filter).length);

  readonly createIndex = jest.fn(async (keys: Document) =>
    Object.entries(keys)
      .map(([k, v]) => `${k}_${String(v)}`)
      .join('_'),
  );

  readonly updateOne = jest.fn(
    async (
      filter: Document,
      update: Document,
      options?: { upsert?: boolean; session?: StubSession },
    ) => {
      const found = this.matching(filter)[0];
      const result: UpdateResult = {
        acknowledged: true,
        matchedCount: found ? 1 : 0,
        modifiedCount: 0,
        upsertedCount: 0,
        upsertedId: null,
      };
      if (!found && !options?.upsert) return result;
      const doc: Stored = found ? { ...found } : { _id: filter._id as string };
      for (const [op, fields] of Object.entries(update)) {
        for (const [field, value] of Object.entries(fields as Document)) {
          if (op === '$set') doc[field] = value;
          else if (op === '$max') {
            if (doc[field] === undefined || (value as number) > (doc[field] as number)) {
              doc[field] = value;
            }
          } else throw new Error(`stub: update operator ${op} not supported`);
        }
      }
      if (found && JSON.stringify(found) !== JSON.stringify(doc)) result.modifiedCount = 1;
      if (!found) {
        if (this.docs.has(doc._id)) throw duplicateKey(this.name, doc._id);
        result.upsertedCount = 1;
        result.upsertedId = doc._id as never;
      }
      this.put(doc, options?.session);
      return result;
    },
  );

  /** Unordered or ordered, with the server's duplicate-key rule for upserts and inserts. */
  readonly bulkWrite = jest.fn(
    async (
      operations: AnyBulkWriteOperation<Stored>[],
      options?: { ordered?: boolean; session?: StubSession },
    ) => {
      const hook = this.server.beforeNextBulkWrite;
      this.server.beforeNextBulkWrite = null;
      if (hook) await hook();
      const raw = emptyRawResult();
      operations.forEach((operation, index) => {
        if (raw.writeErrors.length > 0 && options?.ordered !== false) return;
        const fail = (op: Document) =>
          raw.writeErrors.push(
            writeError({
              index,
              code: 11000,
              errmsg: `E11000 duplicate key error collection: test.${this.name} index: _id_ dup key: { _id: "${String(op._id)}" }`,
              errInfo: {},
              op,
            }),
          );
        if ('replaceOne' in operation) {
          const { filter, replacement, upsert } = operation.replaceOne;
          const found = this.matching(filter as Document)[0];
          const id = (filter as Document)._id as string;
          if (found) {
            raw.nMatched++;
            raw.nModified++;
            this.put({ ...cloneValue(replacement), _id: found._id }, options?.session);
          } else if (upsert) {
            if (this.docs.has(id)) return fail({ _id: id });
            raw.nUpserted++;
            raw.upserted.push({ index, _id: id });
            this.put({ ...cloneValue(replacement), _id: id }, options?.session);
          }
        } else if ('insertOne' in operation) {
          const doc = operation.insertOne.document;
          if (this.docs.has(doc._id)) return fail(doc);
          raw.nInserted++;
          raw.insertedIds.push({ index, _id: doc._id });
          this.put(cloneValue(doc), options?.session);
        } else throw new Error('stub: bulk operation not supported');
      });
      const result = bulkWriteResult(raw);
      if (raw.writeErrors.length > 0) {
        throw new MongoBulkWriteError(
          {
            message: raw.writeErrors[0].errmsg ?? 'write operation failed',
            code: raw.writeErrors[0].code,
            writeErrors: raw.writeErrors,
          },
          result,
        );
      }
      return result;
    },
  );

  /** Stores `doc`, remembering in the session's journal how to undo it. */
  private put(doc: Stored, session?: StubSession): void {
    const before = this.docs.get(doc._id);
    session?.journal.push(() => {
      if (before) this.docs.set(doc._id, before);
      else this.docs.delete(doc._id);
    });
    this.docs.set(doc._id, doc);
  }

  private matching(filter: Document): Stored[] {
    const query = new Query(filter);
    return [...this.docs.values()].filter((doc) => query.test(doc)).map((d) => cloneValue(d));
  }
}

export class StubCursor {
  private sortSpec: Document | null = null;
  private limitTo: number | null = null;

  constructor(
    private readonly docs: Stored[],
    private projection?: Document,
  ) {}

  readonly sort = jest.fn((pairs: Array<[string, 1 | -1]>) => {
    this.sortSpec = Object.fromEntries(pairs);
    return this;
  });

  readonly limit = jest.fn((n: number) => {
    this.limitTo = n;
    return this;
  });

  readonly project = jest.fn((projection: Document) => {
    this.projection = projection;
    return this;
  });

  readonly toArray = jest.fn(async () => this.results());

  async *[Symbol.asyncIterator](): AsyncGenerator<Document> {
    yield* this.results();
  }

  private results(): Document[] {
    let cursor = new Query({}).find<Stored>(this.docs);
    if (this.sortSpec) cursor = cursor.sort(this.sortSpec);
    if (this.limitTo !== null) cursor = cursor.limit(this.limitTo);
    return cursor.all().map((d) => project(d, this.projection));
  }
}

/** Inclusion (`{f: 1}`: `_id` and f) or exclusion (`{f: 0}`) of top-level fields. */
function project(doc: Stored, projection?: Document): Document {
  if (!projection) return doc;
  const entries = Object.entries(projection);
  if (entries.every(([, v]) => v === 0)) {
    return Object.fromEntries(Object.entries(doc).filter(([k]) => projection[k] !== 0));
  }
  return Object.fromEntries(Object.entries(doc).filter(([k]) => k === '_id' || projection[k]));
}

function duplicateKey(collection: string, id: unknown): MongoServerError {
  return new MongoServerError({
    message: `E11000 duplicate key error collection: test.${collection} index: _id_ dup key: { _id: "${String(id)}" }`,
    code: 11000,
    codeName: 'DuplicateKey',
  });
}
