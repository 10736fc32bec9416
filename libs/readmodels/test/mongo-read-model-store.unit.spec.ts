import {
  MongoBulkWriteError,
  MongoClient,
  MongoNetworkError,
  MongoServerError,
  MongoServerSelectionError,
} from 'mongodb';
import {
  DELETED,
  MongoReadModelStore,
  ReadModelStoreError,
  WRITTEN_AT,
  indexKeys,
  withoutTombstones,
} from '../src/mongo-read-model-store';
import { Doc, InsertOnlyViolationError, WriteOp } from '../src/port';
import { StubServer, bulkWriteResult, serverSelectionError, writeError } from './mongo-stub';

const upsert = (collection: string, doc: Doc): WriteOp => ({ op: 'upsert', collection, doc });
const insert = (collection: string, doc: Doc): WriteOp => ({ op: 'insert', collection, doc });
const remove = (collection: string, id: string): WriteOp => ({ op: 'delete', collection, id });
const olderThan = (checkpoint: number) => ({
  $or: [{ [WRITTEN_AT]: { $lt: checkpoint } }, { [WRITTEN_AT]: { $exists: false } }],
});
/** Lets background work (index creation) run to its end. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('the MongoDB read-model adapter against the driver (stubbed collections)', () => {
  let server: StubServer;
  let log: jest.Mock;
  const writer = () =>
    new MongoReadModelStore({ url: 'mongodb://stub:27017', dbName: 'fleet', log });

  beforeEach(() => {
    server = new StubServer();
    log = jest.fn();
    jest.spyOn(MongoClient, 'connect').mockImplementation(async () => server.client());
  });

  afterEach(() => jest.restoreAllMocks());

  const nodes = () => server.collection('nodes');
  const checkpoints = () => server.collection('_checkpoints');

  for (const replicaSet of [false, true]) {
    describe(replicaSet ? 'on a replica set (transactions)' : 'on a standalone server', () => {
      beforeEach(() => {
        server.replicaSet = replicaSet;
      });

      describe('when two writers race on one document', () => {
        it('the older, which read before the newer wrote, loses on its write: a skip, not an error', async () => {
          const newer = writer();
          const older = writer();
          // The older writer has read (nothing stored); the newer one writes before it does.
          server.beforeNextBulkWrite = () =>
            newer.commit('nodes', [upsert('nodes', { _id: 'x', v: 'new' })], 20);
          await expect(
            older.commit('nodes', [upsert('nodes', { _id: 'x', v: 'old' })], 10),
          ).resolves.toBeUndefined();

          expect(nodes().docs.get('x')).toEqual({ _id: 'x', v: 'new', [WRITTEN_AT]: 20 });
          expect(await older.get('nodes', 'x')).toEqual({ _id: 'x', v: 'new' });
          expect(await older.checkpoint('nodes')).toBe(20);
          // Its one write was conditional, and lost with the server's duplicate key (11000);
          // going again it read the newer document and sent nothing for it.
          const [lost, won] = nodes().bulkWrite.mock.calls;
          expect(lost[0]).toEqual([
            {
              replaceOne: {
                filter: { _id: 'x', ...olderThan(10) },
                replacement: { _id: 'x', v: 'old', [WRITTEN_AT]: 10 },
                upsert: true,
              },
            },
          ]);
          expect(lost[1]).toMatchObject({ ordered: false });
          await expect(nodes().bulkWrite.mock.results[0].value).rejects.toBeInstanceOf(
            MongoBulkWriteError,
          );
          expect(won[0]).toEqual([
            {
              replaceOne: {
                filter: { _id: 'x', ...olderThan(20) },
                replacement: { _id: 'x', v: 'new', [WRITTEN_AT]: 20 },
                upsert: true,
              },
            },
          ]);
          expect(nodes().bulkWrite).toHaveBeenCalledTimes(2);
        });

        it('the newer overwrites an older one that wrote between its read and its write', async () => {
          const newer = writer();
          const older = writer();
          server.beforeNextBulkWrite = () =>
            older.commit('nodes', [upsert('nodes', { _id: 'x', v: 'old' })], 10);
          await newer.commit('nodes', [upsert('nodes', { _id: 'x', v: 'new' })], 20);
          expect(await newer.get('nodes', 'x')).toEqual({ _id: 'x', v: 'new' });
          expect(await newer.checkpoint('nodes')).toBe(20);
        });

        it('an older writer that reads after the newer wrote sends no write for the document', async () => {
          const newer = writer();
          const older = writer();
          await newer.commit('nodes', [upsert('nodes', { _id: 'x', v: 'new' })], 20);
          nodes().bulkWrite.mockClear();
          await older.commit(
            'nodes',
            [upsert('nodes', { _id: 'x', v: 'old' }), remove('nodes', 'x')],
            10,
          );
          expect(nodes().bulkWrite).not.toHaveBeenCalled();
          expect(await older.get('nodes', 'x')).toEqual({ _id: 'x', v: 'new' });
          // What it read was its checkpoint field only, not the whole documents.
          expect(nodes().find).toHaveBeenLastCalledWith(
            { _id: { $in: ['x'] } },
            expect.objectContaining({ projection: { [WRITTEN_AT]: 1 } }),
          );
        });

        it('a delete is conditional too, and leaves a tombstone an older upsert cannot replace', async () => {
          const newer = writer();
          const older = writer();
          await older.commit('nodes', [upsert('nodes', { _id: 'x', v: 'first' })], 5);
          server.beforeNextBulkWrite = () => newer.commit('nodes', [remove('nodes', 'x')], 20);
          await older.commit('nodes', [upsert('nodes', { _id: 'x', v: 'old' })], 10);
          expect(nodes().bulkWrite.mock.calls[2][0]).toEqual([
            {
              replaceOne: {
                filter: { _id: 'x', ...olderThan(20) },
                replacement: { _id: 'x', [WRITTEN_AT]: 20, [DELETED]: true },
                upsert: true,
              },
            },
          ]);
          expect(nodes().docs.get('x')).toEqual({ _id: 'x', [WRITTEN_AT]: 20, [DELETED]: true });
          expect(await older.get('nodes', 'x')).toBeNull();
          expect(await older.count('nodes', {})).toBe(0);
          expect((await older.find('nodes', {})).items).toEqual([]);
        });

        it('an insert that loses a race to the same record is a no-op; another record under its id is refused', async () => {
          const first = writer();
          const second = writer();
          for (const w of [first, second]) w.defineCollection('billing', { insertOnly: true });
          const record = { _id: 'r1', amount: 120, gpuUuids: ['GPU-1'] };
          server.beforeNextBulkWrite = () =>
            first.commit('billing', [insert('billing', record)], 30);
          await second.commit('billing', [insert('billing', record)], 31);
          expect(server.collection('billing').docs.get('r1')).toEqual(record);
          expect(await second.checkpoint('billing')).toBe(31);
          const forged = second.commit(
            'billing',
            [insert('billing', { ...record, amount: 1 })],
            32,
          );
          await expect(forged).rejects.toBeInstanceOf(InsertOnlyViolationError);
          expect(await second.checkpoint('billing')).toBe(31);
        });
      });

      it('moves a checkpoint with $max, so a writer behind never moves it back', async () => {
        const store = writer();
        await store.commit('reactor:notify', [], 300);
        await store.commit('reactor:notify', [], 299);
        expect(checkpoints().updateOne).toHaveBeenNthCalledWith(
          1,
          { _id: 'reactor:notify' },
          { $max: { position: 300 } },
          expect.objectContaining({ upsert: true }),
        );
        expect(checkpoints().updateOne).toHaveBeenNthCalledWith(
          2,
          { _id: 'reactor:notify' },
          { $max: { position: 299 } },
          expect.objectContaining({ upsert: true }),
        );
        expect(await store.checkpoint('reactor:notify')).toBe(300);
        expect(checkpoints().docs.get('reactor:notify')).toEqual({
          _id: 'reactor:notify',
          position: 300,
        });
      });
    });
  }

  describe('on a replica set', () => {
    beforeEach(() => {
      server.replicaSet = true;
    });

    it('commits documents and checkpoint in one transaction, a checkpoint alone without one', async () => {
      const store = writer();
      await store.commit('nodes', [upsert('nodes', { _id: 'x' })], 7);
      const session = expect.objectContaining({ withTransaction: expect.any(Function) });
      expect(nodes().bulkWrite).toHaveBeenCalledWith(
        expect.any(Array),
        expect.objectContaining({ session }),
      );
      expect(checkpoints().updateOne).toHaveBeenCalledWith(
        expect.anything(),
        expect.anything(),
        expect.objectContaining({ session }),
      );
      await store.commit('reactor:r', [], 8);
      expect(checkpoints().updateOne).toHaveBeenLastCalledWith(
        { _id: 'reactor:r' },
        { $max: { position: 8 } },
        { upsert: true, session: undefined },
      );
    });

    it('undoes the documents written when the transaction lost a race, then writes again', async () => {
      const store = writer();
      const other = writer();
      // The race costs a transaction all of its writes (a duplicate key aborts it on a
      // server): the document that did not race is written again by the second attempt.
      server.beforeNextBulkWrite = () => other.commit('nodes', [upsert('nodes', { _id: 'b' })], 50);
      await store.commit(
        'nodes',
        [upsert('nodes', { _id: 'a', v: 1 }), upsert('nodes', { _id: 'b', v: 1 })],
        40,
      );
      expect(await store.get('nodes', 'a')).toEqual({ _id: 'a', v: 1 });
      expect(await store.get('nodes', 'b')).toEqual({ _id: 'b' });
      expect(nodes().bulkWrite.mock.calls.map(([writes]) => writes.length)).toEqual([2, 1, 1]);
    });
  });

  describe('when the driver fails', () => {
    it('a network error in a write surfaces as a clear error, with no checkpoint written', async () => {
      const store = writer();
      await store.connect();
      const cause = new MongoNetworkError('connection 4 to stub:27017 closed');
      nodes().bulkWrite.mockRejectedValueOnce(cause);
      const commit = store.commit('nodes', [upsert('nodes', { _id: 'x' })], 9);
      await expect(commit).rejects.toBeInstanceOf(ReadModelStoreError);
      await expect(commit).rejects.toThrow(
        'MongoDB read models: committing nodes failed: MongoNetworkError: connection 4 to stub:27017 closed',
      );
      await expect(commit).rejects.toMatchObject({ cause });
      expect(nodes().bulkWrite).toHaveBeenCalledTimes(1);
      expect(checkpoints().updateOne).not.toHaveBeenCalled();
      expect(await store.checkpoint('nodes')).toBe(0);
    });

    it('a network error the driver wraps in a bulk write error is not taken for a lost race', async () => {
      const store = writer();
      await store.connect();
      const result = bulkWriteResult();
      const network = new MongoNetworkError('connection 5 to stub:27017 timed out');
      nodes().bulkWrite.mockRejectedValueOnce(new MongoBulkWriteError(network, result));
      await expect(store.commit('nodes', [upsert('nodes', { _id: 'x' })], 9)).rejects.toThrow(
        /committing nodes failed: MongoBulkWriteError: connection 5 to stub:27017 timed out/,
      );
      expect(nodes().bulkWrite).toHaveBeenCalledTimes(1);
    });

    it('another write error (not a duplicate key) fails the commit at once', async () => {
      const store = writer();
      await store.connect();
      const invalid = writeError({
        index: 0,
        code: 121,
        errmsg: 'Document failed validation',
        errInfo: {},
        op: { _id: 'x' },
      });
      nodes().bulkWrite.mockRejectedValueOnce(
        new MongoBulkWriteError(
          { message: 'Document failed validation', code: 121, writeErrors: [invalid] },
          bulkWriteResult(),
        ),
      );
      await expect(store.commit('nodes', [upsert('nodes', { _id: 'x' })], 9)).rejects.toThrow(
        /committing nodes failed: MongoBulkWriteError: Document failed validation/,
      );
      expect(nodes().bulkWrite).toHaveBeenCalledTimes(1);
    });

    it('a commit that keeps losing races gives up with a clear error after five attempts', async () => {
      const store = writer();
      await store.connect();
      const duplicate = () =>
        new MongoBulkWriteError(
          {
            message: 'E11000 duplicate key error',
            code: 11000,
            writeErrors: [
              writeError({
                index: 0,
                code: 11000,
                errmsg: 'E11000 duplicate key error',
                errInfo: {},
                op: { _id: 'x' },
              }),
            ],
          },
          bulkWriteResult(),
        );
      nodes().bulkWrite.mockImplementation(async () => {
        throw duplicate();
      });
      await expect(store.commit('nodes', [upsert('nodes', { _id: 'x' })], 9)).rejects.toThrow(
        'MongoDB read models: committing nodes (lost 5 races with other writers in a row) failed',
      );
      expect(nodes().bulkWrite).toHaveBeenCalledTimes(5);
      expect(checkpoints().updateOne).not.toHaveBeenCalled();
    });

    it('a duplicate key on the checkpoint (two first commits at once) is a race: it goes again', async () => {
      const store = writer();
      await store.connect();
      checkpoints().updateOne.mockRejectedValueOnce(
        new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 }),
      );
      await store.commit('nodes', [], 12);
      expect(await store.checkpoint('nodes')).toBe(12);
    });

    it('reads that fail say what they were reading', async () => {
      const store = writer();
      await store.connect();
      const cause = new MongoNetworkError('connection 6 to stub:27017 closed');
      nodes().findOne.mockRejectedValueOnce(cause);
      await expect(store.get('nodes', 'x')).rejects.toThrow(
        'MongoDB read models: reading nodes/x failed: MongoNetworkError: connection 6 to stub:27017 closed',
      );
      nodes().countDocuments.mockRejectedValueOnce(cause);
      await expect(store.count('nodes', {})).rejects.toThrow(/counting nodes failed/);
      nodes().find.mockImplementationOnce(() => {
        throw cause;
      });
      await expect(store.find('nodes', {})).rejects.toThrow(/querying nodes failed/);
    });

    it('a server out of reach fails each call clearly, and close still resolves', async () => {
      jest
        .spyOn(MongoClient, 'connect')
        .mockRejectedValue(serverSelectionError('connect ECONNREFUSED 10.0.0.9:27017'));
      const store = writer();
      await expect(store.ping()).rejects.toThrow(
        'MongoDB read models: ping failed: MongoServerSelectionError: connect ECONNREFUSED 10.0.0.9:27017',
      );
      await expect(store.commit('nodes', [], 1)).rejects.toBeInstanceOf(ReadModelStoreError);
      await expect(store.close()).resolves.toBeUndefined();
    });

    it('an index that cannot be created is a log line, never an unhandled rejection', async () => {
      const unhandled = jest.fn();
      process.on('unhandledRejection', unhandled);
      try {
        const conflict = new MongoServerError({
          message: 'An existing index has the same name as the requested index',
          code: 86,
          codeName: 'IndexKeySpecsConflict',
        });
        nodes().createIndex.mockRejectedValueOnce(conflict);
        writer().defineCollection('nodes', { indexes: ['status'] });
        // And with the server out of reach: every index says so.
        jest
          .spyOn(MongoClient, 'connect')
          .mockRejectedValue(serverSelectionError('connect ECONNREFUSED 10.0.0.9:27017'));
        writer().defineCollection('sessions', { indexes: ['owner'] });
        await settle();
        expect(log).toHaveBeenCalledWith(
          'MongoDB read models: creating index {"status":1,"_id":1} on nodes failed',
          conflict,
        );
        expect(log).toHaveBeenCalledWith(
          'MongoDB read models: creating index {"owner":1,"_id":1} on sessions failed',
          expect.any(MongoServerSelectionError),
        );
        expect(unhandled).not.toHaveBeenCalled();
      } finally {
        process.off('unhandledRejection', unhandled);
      }
    });
  });

  describe('reads', () => {
    it('hand out documents without the bookkeeping fields', async () => {
      const store = writer();
      await store.commit('nodes', [upsert('nodes', { _id: 'x', online: true })], 3);
      expect(await store.get('nodes', 'x')).toEqual({ _id: 'x', online: true });
      expect(nodes().findOne).toHaveBeenLastCalledWith(
        { _id: 'x', [DELETED]: { $exists: false } },
        { projection: { [WRITTEN_AT]: 0, [DELETED]: 0 } },
      );
      expect((await store.find('nodes', { online: true })).items).toEqual([
        { _id: 'x', online: true },
      ]);
      const cursor = nodes().cursors[nodes().cursors.length - 1];
      expect(cursor.project).toHaveBeenCalledWith({ [WRITTEN_AT]: 0, [DELETED]: 0 });
      expect(cursor.sort).toHaveBeenCalledWith([['_id', 1]]);
      expect(cursor.limit).toHaveBeenCalledWith(101);
    });

    it('leave tombstones out only where the filter could match one', async () => {
      const store = writer();
      await store.find('nodes', { online: true });
      expect(nodes().find).toHaveBeenLastCalledWith({ online: true });
      await store.count('nodes', { online: true });
      expect(nodes().countDocuments).toHaveBeenLastCalledWith({ online: true });
      await store.find('nodes', {});
      expect(nodes().find).toHaveBeenLastCalledWith({
        $and: [{}, { [DELETED]: { $exists: false } }],
      });
      await store.count('nodes', { poolId: null });
      expect(nodes().countDocuments).toHaveBeenLastCalledWith({
        $and: [{ poolId: null }, { [DELETED]: { $exists: false } }],
      });
    });
  });

  describe('indexes', () => {
    it('index an equality field with _id (pages come in _id order) and a sort as declared', async () => {
      writer().defineCollection('nodes', {
        indexes: ['clusterId', { status: 1, clusterId: 1, hostname: 1, _id: 1 }],
      });
      await settle();
      const created = nodes().createIndex.mock.calls.map(([keys]) => Object.entries(keys));
      expect(created).toEqual([
        [
          ['clusterId', 1],
          ['_id', 1],
        ],
        [
          ['status', 1],
          ['clusterId', 1],
          ['hostname', 1],
          ['_id', 1],
        ],
      ]);
      expect(indexKeys({ requestedAt: -1, _id: 1 })).toEqual({ requestedAt: -1, _id: 1 });
      expect(log).not.toHaveBeenCalled();
    });
  });
});

describe('which filters need tombstones left out', () => {
  const LIVE = { [DELETED]: { $exists: false } };
  const needs = (filter: Record<string, unknown>) =>
    JSON.stringify(withoutTombstones(filter, filter)) !== JSON.stringify(filter);

  it('not those a missing field fails', () => {
    for (const filter of [
      { online: true },
      { status: 'ready', poolId: null },
      { 'capacity.cpu': { $gte: 8 } },
      { gpuCount: { $gt: 0 }, poolId: 'p' },
      { status: { $in: ['pending', 'running'] } },
      { pool: { $exists: true } },
      { at: { $gt: '2026-01-01T00:00:00.000Z' } },
      { capacity: { cpu: 8 } },
      { $or: [{ status: 'ready' }, { gpuCount: { $lt: 3 } }] },
      { $and: [{ poolId: null }, { clusterId: 'c1' }] },
    ]) {
      expect([filter, needs(filter)]).toEqual([filter, false]);
    }
  });

  it('those a document without the field can match', () => {
    for (const filter of [
      {},
      { _id: 'x' },
      { _id: { $in: ['a', 'b'] } },
      { poolId: null },
      { operation: { $ne: null } },
      { status: { $ne: 'deleted' } },
      { status: { $nin: ['a'] } },
      { pool: { $exists: false } },
      { status: { $in: ['ready', null] } },
      { $or: [{ status: 'ready' }, { poolId: null }] },
      { $or: [] },
      { $nor: [{ status: 'ready' }] },
      { name: /^gpu/ },
    ]) {
      expect([filter, needs(filter)]).toEqual([filter, true]);
      expect(withoutTombstones(filter, filter)).toEqual({ $and: [filter, LIVE] });
    }
  });
});
