import {
  Doc,
  Filter,
  InsertOnlyViolationError,
  InvalidCursorError,
  ReadModelStore,
  Sort,
  WriteOp,
} from '../src/port';

/**
 * The behaviour every ReadModelStore adapter must share. Each test gets a fresh store
 * (for MongoDB a fresh database), so tests never see each other's documents.
 */
export type ReadModelStoreFixture = {
  store: ReadModelStore;
  /**
   * A second writer on the same data, as another replica would be (for MongoDB another
   * client on the same database). Without one the store itself is the second writer: the
   * embedded store is one process by design.
   */
  peer?(): Promise<ReadModelStore>;
  cleanup(): Promise<void>;
};

type Node = Doc & {
  cluster: string;
  status: string;
  capacity: { cpu: number; memoryGb: number };
  gpuCount: number;
  pool?: string;
};

type Ranked = Doc & { rank?: number | string | boolean | null; group: number };

const upsert = (collection: string, doc: Doc): WriteOp => ({ op: 'upsert', collection, doc });
const insert = (collection: string, doc: Doc): WriteOp => ({ op: 'insert', collection, doc });
const remove = (collection: string, id: string): WriteOp => ({ op: 'delete', collection, id });
const id = (i: number): string => `d${String(i).padStart(4, '0')}`;
const ids = (docs: readonly Doc[]): string[] => docs.map((d) => d._id);

/** MongoDB's order for the values these tests sort on: null/missing < numbers < strings < booleans. */
function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown): number =>
    v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : typeof v === 'string' ? 2 : 3;
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (a === null || a === undefined || a === b) return 0;
  return (a as number | string | boolean) < (b as number | string | boolean) ? -1 : 1;
}

function expectedOrder<T extends Doc>(docs: readonly T[], sort: Sort): string[] {
  const keys = Object.entries(sort);
  const at = (doc: T, path: string): unknown =>
    path.split('.').reduce<unknown>((v, p) => (v as Record<string, unknown> | undefined)?.[p], doc);
  return [...docs]
    .sort((a, b) => {
      for (const [field, direction] of keys) {
        const c = compareValues(at(a, field), at(b, field)) * direction;
        if (c !== 0) return c;
      }
      return a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
    })
    .map((d) => d._id);
}

async function pageThrough(
  store: ReadModelStore,
  collection: string,
  filter: Filter,
  sort: Sort,
  limit: number,
): Promise<{ ids: string[]; pages: number }> {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: { items: Doc[]; nextCursor: string | null } = await store.find(collection, filter, {
      sort,
      limit,
      cursor,
    });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    seen.push(...ids(page.items));
    cursor = page.nextCursor;
    pages++;
    if (pages > 1000) throw new Error('paging does not terminate');
  } while (cursor);
  return { ids: seen, pages };
}

function nodes(): Node[] {
  return [
    { _id: 'n1', cluster: 'eu', status: 'ready', capacity: { cpu: 8, memoryGb: 64 }, gpuCount: 4 },
    {
      _id: 'n2',
      cluster: 'eu',
      status: 'busy',
      capacity: { cpu: 32, memoryGb: 256 },
      gpuCount: 8,
      pool: 'a100',
    },
    {
      _id: 'n3',
      cluster: 'us',
      status: 'offline',
      capacity: { cpu: 4, memoryGb: 16 },
      gpuCount: 0,
    },
    {
      _id: 'n4',
      cluster: 'us',
      status: 'ready',
      capacity: { cpu: 16, memoryGb: 128 },
      gpuCount: 8,
      pool: 'h100',
    },
    {
      _id: 'n5',
      cluster: 'ap',
      status: 'cordoned',
      capacity: { cpu: 16, memoryGb: 64 },
      gpuCount: 2,
      pool: 'a100',
    },
  ];
}

export function readModelStoreContract(
  name: string,
  make: () => Promise<ReadModelStoreFixture>,
): void {
  describe(`${name} read-model store`, () => {
    let fixture: ReadModelStoreFixture;
    let store: ReadModelStore;

    beforeEach(async () => {
      fixture = await make();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    const seedNodes = () =>
      store.commit(
        'nodes',
        nodes().map((n) => upsert('nodes', n)),
        1,
      );

    describe('equality indexes', () => {
      const ids = async (filter: Record<string, unknown>) =>
        (await store.find('indexed', filter, { limit: 1000 })).items.map((d) => d._id).sort();

      it('answer exactly what a scan answers, through updates, deletes and array values', async () => {
        store.defineCollection('indexed', { indexes: ['cluster', 'status'] });
        await store.commit(
          'p',
          [
            upsert('indexed', { _id: 'a', cluster: 'eu', status: 'ready' }),
            upsert('indexed', { _id: 'b', cluster: 'eu', status: 'busy' }),
            upsert('indexed', { _id: 'c', cluster: 'us', status: 'ready' }),
            upsert('indexed', { _id: 'd', cluster: ['eu', 'us'], status: 'ready' }),
            upsert('indexed', { _id: 'e', status: 'ready' }),
          ],
          1,
        );
        expect(await ids({ cluster: 'eu' })).toEqual(['a', 'b', 'd']);
        expect(await ids({ cluster: 'eu', status: 'ready' })).toEqual(['a', 'd']);
        expect(await ids({ cluster: null })).toEqual(['e']);
        expect(await ids({ cluster: { $in: ['us'] } })).toEqual(['c', 'd']);
        await store.commit(
          'p',
          [upsert('indexed', { _id: 'a', cluster: 'us', status: 'ready' }), remove('indexed', 'b')],
          2,
        );
        expect(await ids({ cluster: 'eu' })).toEqual(['d']);
        expect(await ids({ cluster: 'us' })).toEqual(['a', 'c', 'd']);
        expect(await store.count('indexed', { status: 'busy' })).toBe(0);
      });

      it('index documents stored before the index was declared', async () => {
        await store.commit('p', [upsert('late', { _id: 'x', cluster: 'eu' })], 1);
        store.defineCollection('late', { indexes: ['cluster'] });
        expect((await store.find('late', { cluster: 'eu' })).items.map((d) => d._id)).toEqual([
          'x',
        ]);
      });
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    describe('writes through commit', () => {
      it('stores an upserted document and reads it back by id', async () => {
        await seedNodes();
        expect(await store.get('nodes', 'n2')).toEqual(nodes()[1]);
        expect(await store.get('nodes', 'missing')).toBeNull();
        expect(await store.get('no-such-collection', 'n2')).toBeNull();
      });

      it('replaces the whole document on upsert', async () => {
        await seedNodes();
        await store.commit('nodes', [upsert('nodes', { _id: 'n2', status: 'ready' })], 2);
        expect(await store.get('nodes', 'n2')).toEqual({ _id: 'n2', status: 'ready' });
      });

      it('deletes a document, and deleting a missing one is harmless', async () => {
        await seedNodes();
        await store.commit('nodes', [remove('nodes', 'n1'), remove('nodes', 'nope')], 2);
        expect(await store.get('nodes', 'n1')).toBeNull();
        expect(await store.count('nodes', {})).toBe(4);
      });

      it('applies the ops of one commit in order', async () => {
        await store.commit(
          'p',
          [
            upsert('a', { _id: 'x', v: 1 }),
            upsert('b', { _id: 'x', v: 2 }),
            upsert('a', { _id: 'x', v: 3 }),
            upsert('a', { _id: 'y', v: 1 }),
            remove('a', 'y'),
          ],
          1,
        );
        expect(await store.get('a', 'x')).toEqual({ _id: 'x', v: 3 });
        expect(await store.get('b', 'x')).toEqual({ _id: 'x', v: 2 });
        expect(await store.get('a', 'y')).toBeNull();
      });
    });

    describe('find with a filter', () => {
      beforeEach(seedNodes);

      const found = async (filter: Filter) =>
        ids((await store.find('nodes', filter, { sort: { _id: 1 } })).items);

      it('matches equality, nested fields and comparison operators', async () => {
        expect(await found({ status: 'ready' })).toEqual(['n1', 'n4']);
        expect(await found({ 'capacity.cpu': { $gte: 16 } })).toEqual(['n2', 'n4', 'n5']);
        expect(await found({ 'capacity.cpu': { $gte: 16 }, cluster: 'us' })).toEqual(['n4']);
        expect(await found({ 'capacity.memoryGb': { $lt: 64 } })).toEqual(['n3']);
      });

      it('matches $in, $exists and $or', async () => {
        expect(await found({ cluster: { $in: ['eu', 'ap'] } })).toEqual(['n1', 'n2', 'n5']);
        expect(await found({ pool: { $exists: true } })).toEqual(['n2', 'n4', 'n5']);
        expect(await found({ pool: { $exists: false } })).toEqual(['n1', 'n3']);
        expect(await found({ $or: [{ gpuCount: 0 }, { pool: 'h100' }] })).toEqual(['n3', 'n4']);
      });

      it('looks documents up by _id', async () => {
        expect(await found({ _id: 'n3' })).toEqual(['n3']);
        expect(await found({ _id: 'n3', status: 'ready' })).toEqual([]);
        expect(await found({ _id: { $in: ['n4', 'n1', 'zz', 'n1'] } })).toEqual(['n1', 'n4']);
        expect(await found({ _id: { $eq: 'n5' } })).toEqual(['n5']);
        expect(await found({ _id: 'missing' })).toEqual([]);
      });

      it('returns an empty last page for no matches and for unknown collections', async () => {
        expect(await store.find('nodes', { status: 'gone' })).toEqual({
          items: [],
          nextCursor: null,
        });
        expect(await store.find('nowhere', {})).toEqual({ items: [], nextCursor: null });
      });

      it('counts matching documents', async () => {
        expect(await store.count('nodes', {})).toBe(5);
        expect(await store.count('nodes', { gpuCount: { $gte: 4 } })).toBe(3);
        expect(await store.count('nodes', { _id: 'n2' })).toBe(1);
        expect(await store.count('nowhere', {})).toBe(0);
      });
    });

    describe('sort and limit', () => {
      beforeEach(seedNodes);

      it('sorts ascending and descending on several keys, _id breaking ties', async () => {
        const sorted = async (sort: Sort) => ids((await store.find('nodes', {}, { sort })).items);
        expect(await sorted({ cluster: 1, 'capacity.cpu': -1 })).toEqual([
          'n5',
          'n2',
          'n1',
          'n4',
          'n3',
        ]);
        expect(await sorted({ 'capacity.cpu': -1 })).toEqual(['n2', 'n4', 'n5', 'n1', 'n3']);
        expect(await sorted({ gpuCount: 1, 'capacity.memoryGb': -1 })).toEqual([
          'n3',
          'n5',
          'n1',
          'n2',
          'n4',
        ]);
        // Missing fields sort first ascending, last descending, as in MongoDB.
        expect(await sorted({ pool: 1 })).toEqual(['n1', 'n3', 'n2', 'n5', 'n4']);
        expect(await sorted({ pool: -1 })).toEqual(['n4', 'n2', 'n5', 'n1', 'n3']);
        expect(await sorted({ _id: -1 })).toEqual(['n5', 'n4', 'n3', 'n2', 'n1']);
      });

      it('returns at most limit items with a cursor when more exist', async () => {
        const first = await store.find('nodes', {}, { sort: { _id: 1 }, limit: 2 });
        expect(ids(first.items)).toEqual(['n1', 'n2']);
        expect(first.nextCursor).toEqual(expect.any(String));
        const all = await store.find('nodes', {}, { sort: { _id: 1 }, limit: 5 });
        expect(all.items).toHaveLength(5);
        expect(all.nextCursor).toBeNull();
      });

      it('defaults to 100 items and caps the limit at 1000', async () => {
        const many = Array.from({ length: 1005 }, (_, i) => upsert('many', { _id: id(i), i }));
        await store.commit('many', many, 1);
        const byDefault = await store.find('many', {});
        expect(byDefault.items).toHaveLength(100);
        expect(byDefault.nextCursor).not.toBeNull();
        const capped = await store.find('many', {}, { limit: 5000 });
        expect(capped.items).toHaveLength(1000);
        expect(capped.nextCursor).not.toBeNull();
        const rest = await store.find('many', {}, { limit: 5000, cursor: capped.nextCursor });
        expect(ids(rest.items)).toEqual([id(1000), id(1001), id(1002), id(1003), id(1004)]);
        expect(rest.nextCursor).toBeNull();
      });

      it('refuses a limit that is not a positive integer', async () => {
        await expect(store.find('nodes', {}, { limit: 0 })).rejects.toBeInstanceOf(RangeError);
        await expect(store.find('nodes', {}, { limit: 2.5 })).rejects.toBeInstanceOf(RangeError);
      });
    });

    describe('cursor paging', () => {
      // 250 documents: ranks with many ties, every 10th rank missing and every other 5th null.
      const ranked = (): Ranked[] =>
        Array.from({ length: 250 }, (_, i) => {
          const doc: Ranked = { _id: id((i * 37) % 250), group: i % 3 };
          if (i % 10 === 0) return doc;
          return { ...doc, rank: i % 5 === 0 ? null : i % 17 };
        });

      beforeEach(() =>
        store.commit(
          'ranked',
          ranked().map((d) => upsert('ranked', d)),
          1,
        ),
      );

      const sorts: Sort[] = [
        { rank: 1 },
        { rank: -1 },
        { group: 1, rank: -1 },
        { group: -1, rank: 1 },
        { rank: -1, _id: -1 },
        {},
      ];
      for (const sort of sorts) {
        it(`pages through 250 documents in pages of 7 sorted by ${JSON.stringify(sort)}`, async () => {
          const { ids: seen, pages } = await pageThrough(store, 'ranked', {}, sort, 7);
          expect(pages).toBe(36);
          expect(new Set(seen).size).toBe(250);
          expect(seen).toEqual(expectedOrder(ranked(), sort));
          // The unpaged query agrees with the paged one.
          const whole = await store.find('ranked', {}, { sort, limit: 1000 });
          expect(ids(whole.items)).toEqual(seen);
        });
      }

      it('pages through a filtered query', async () => {
        const filter = { group: { $in: [0, 2] }, rank: { $ne: 3 } };
        const { ids: seen } = await pageThrough(store, 'ranked', filter, { rank: -1 }, 7);
        const expected = ranked().filter((d) => d.group !== 1 && d.rank !== 3);
        expect(seen).toEqual(expectedOrder(expected, { rank: -1 }));
      });

      it('pages through a field mixing numbers, strings, booleans and nulls', async () => {
        const values = [3, 'b', true, null, -1, 'a', false, 10, '', undefined];
        const mixed = Array.from({ length: 60 }, (_, i) => {
          const rank = values[i % values.length];
          return rank === undefined ? { _id: id(i), group: 0 } : { _id: id(i), group: 0, rank };
        });
        await store.commit(
          'mixed',
          mixed.map((d) => upsert('mixed', d)),
          1,
        );
        for (const sort of [{ rank: 1 }, { rank: -1 }] as Sort[]) {
          const { ids: seen } = await pageThrough(store, 'mixed', {}, sort, 4);
          expect(seen).toEqual(expectedOrder(mixed, sort));
        }
      });

      it('stays stable when documents are inserted between pages', async () => {
        const seq = (i: number) => ({ _id: `s${String(i).padStart(4, '0')}`, seq: i });
        await store.commit(
          'seq',
          Array.from({ length: 20 }, (_, i) => upsert('seq', seq(i * 10))),
          1,
        );
        const first = await store.find('seq', {}, { sort: { seq: 1 }, limit: 7 });
        expect(first.items.map((d) => d.seq)).toEqual([0, 10, 20, 30, 40, 50, 60]);
        // Before the cursor (never seen), a tie with the last item (sorts after it by _id),
        // and after the cursor (seen).
        await store.commit(
          'seq',
          [
            upsert('seq', seq(5)),
            upsert('seq', seq(55)),
            upsert('seq', { _id: 's0060b', seq: 60 }),
            upsert('seq', seq(65)),
            upsert('seq', seq(500)),
          ],
          2,
        );
        const rest: number[] = [];
        let cursor = first.nextCursor;
        while (cursor) {
          const page = await store.find('seq', {}, { sort: { seq: 1 }, limit: 7, cursor });
          rest.push(...page.items.map((d) => d.seq as number));
          cursor = page.nextCursor;
        }
        expect(rest).toEqual([
          60, 65, 70, 80, 90, 100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 500,
        ]);
      });

      it('continues after the cursor even when its last item was deleted', async () => {
        const first = await store.find('ranked', {}, { sort: { rank: 1 }, limit: 7 });
        await store.commit(
          'ranked',
          first.items.map((d) => remove('ranked', d._id)),
          2,
        );
        const second = await store.find(
          'ranked',
          {},
          { sort: { rank: 1 }, cursor: first.nextCursor },
        );
        expect(ids(second.items)).toEqual(expectedOrder(ranked(), { rank: 1 }).slice(7, 107));
      });

      it('refuses a garbled cursor or one made for another sort', async () => {
        const { nextCursor } = await store.find('ranked', {}, { sort: { rank: 1 }, limit: 7 });
        const json = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
        const bad = [
          'not a cursor!',
          'abc',
          json({ hello: 'world' }),
          json({ s: [['rank', 1]], v: [1] }),
          json({
            s: [
              ['rank', 1],
              ['_id', 1],
            ],
            v: [{ $gt: 1 }, 'd0001'],
          }),
          json({
            s: [
              ['rank', 1],
              ['_id', 1],
            ],
            v: [1, 7],
          }),
          (nextCursor ?? '').slice(0, 10),
        ];
        for (const cursor of bad) {
          await expect(
            store.find('ranked', {}, { sort: { rank: 1 }, cursor }),
          ).rejects.toBeInstanceOf(InvalidCursorError);
        }
        await expect(
          store.find('ranked', {}, { sort: { rank: -1 }, cursor: nextCursor }),
        ).rejects.toBeInstanceOf(InvalidCursorError);
        await expect(
          store.find('ranked', {}, { sort: { group: 1 }, cursor: nextCursor }),
        ).rejects.toBeInstanceOf(InvalidCursorError);
      });

      it('refuses a cursor made for another filter, and takes it for the same one', async () => {
        const odd = { rank: { $in: [1, 3, 5, 7, 9] } };
        const first = await store.find('ranked', odd, { sort: { rank: 1 }, limit: 3 });
        expect(first.nextCursor).not.toBeNull();
        const cursor = first.nextCursor;
        for (const other of [{}, { rank: { $in: [0, 2, 4, 6, 8] } }, { ...odd, group: 1 }]) {
          await expect(
            store.find('ranked', other, { sort: { rank: 1 }, cursor }),
          ).rejects.toBeInstanceOf(InvalidCursorError);
        }
        const next = await store.find(
          'ranked',
          { rank: { $in: [1, 3, 5, 7, 9] } },
          {
            sort: { rank: 1 },
            limit: 1000,
            cursor,
          },
        );
        const all = await store.find('ranked', odd, { sort: { rank: 1 }, limit: 1000 });
        expect(ids([...first.items, ...next.items])).toEqual(ids(all.items));
      });
    });

    describe('an insert-only collection', () => {
      const line = (i: number, amount = 100) => ({
        _id: `line-${i}`,
        session: 's1',
        amount,
        gpuUuids: ['GPU-1', 'GPU-2'],
        period: { from: '2026-01-01T00:00:00Z', to: '2026-01-01T01:00:00Z' },
      });

      beforeEach(async () => {
        store.defineCollection('billing', { insertOnly: true });
        await store.commit('billing', [insert('billing', line(1))], 1);
      });

      it('stores inserted documents', async () => {
        expect(await store.get('billing', 'line-1')).toEqual(line(1));
      });

      it('treats re-inserting the identical document as a no-op', async () => {
        const reordered = {
          period: { to: '2026-01-01T01:00:00Z', from: '2026-01-01T00:00:00Z' },
          gpuUuids: ['GPU-1', 'GPU-2'],
          amount: 100,
          session: 's1',
          _id: 'line-1',
        };
        await store.commit(
          'billing',
          [insert('billing', reordered), insert('billing', line(2))],
          2,
        );
        expect(await store.get('billing', 'line-1')).toEqual(line(1));
        expect(await store.count('billing', {})).toBe(2);
        expect(await store.checkpoint('billing')).toBe(2);
      });

      it('refuses a different document under an existing id and applies nothing of the commit', async () => {
        const commit = store.commit(
          'billing',
          [
            upsert('other', { _id: 'o1' }),
            insert('billing', line(2)),
            insert('billing', line(1, 999)),
            insert('billing', line(3)),
          ],
          2,
        );
        await expect(commit).rejects.toBeInstanceOf(InsertOnlyViolationError);
        await expect(commit).rejects.toMatchObject({ collection: 'billing', id: 'line-1' });
        expect(await store.get('billing', 'line-1')).toEqual(line(1));
        expect(await store.get('billing', 'line-2')).toBeNull();
        expect(await store.get('other', 'o1')).toBeNull();
        expect(await store.checkpoint('billing')).toBe(1);
      });

      it('refuses two different inserts of one id within a commit', async () => {
        await expect(
          store.commit('billing', [insert('billing', line(2)), insert('billing', line(2, 5))], 2),
        ).rejects.toBeInstanceOf(InsertOnlyViolationError);
        expect(await store.get('billing', 'line-2')).toBeNull();
      });

      it('refuses upsert and delete, applying nothing of the commit', async () => {
        for (const op of [upsert('billing', line(1, 5)), remove('billing', 'line-1')]) {
          await expect(
            store.commit(
              'billing',
              [insert('billing', line(2)), op, upsert('other', { _id: 'o' })],
              2,
            ),
          ).rejects.toBeInstanceOf(InsertOnlyViolationError);
        }
        expect(await store.get('billing', 'line-1')).toEqual(line(1));
        expect(await store.get('billing', 'line-2')).toBeNull();
        expect(await store.get('other', 'o')).toBeNull();
        expect(await store.checkpoint('billing')).toBe(1);
      });

      it('leaves other collections free to change', async () => {
        await store.commit('n', [upsert('nodes', { _id: 'a' }), remove('nodes', 'a')], 1);
        expect(await store.get('nodes', 'a')).toBeNull();
      });
    });

    describe('checkpoints', () => {
      it('are 0 before any commit', async () => {
        expect(await store.checkpoint('nodes')).toBe(0);
      });

      it('are stored per projection with the commit, even an empty one', async () => {
        await store.commit('nodes', [upsert('nodes', { _id: 'a' })], 42);
        await store.commit('billing', [], 7);
        expect(await store.checkpoint('nodes')).toBe(42);
        expect(await store.checkpoint('billing')).toBe(7);
        await store.commit('nodes', [], 43);
        expect(await store.checkpoint('nodes')).toBe(43);
      });
    });

    describe('with several writers (replicas projecting the same log into one store)', () => {
      let peer: ReadModelStore;
      beforeEach(async () => {
        peer = fixture.peer ? await fixture.peer() : store;
      });

      const doc = (v: string, extra: Record<string, unknown> = {}) => ({ _id: 'x', v, ...extra });
      type Race = (newer: () => Promise<void>, older: () => Promise<void>) => Promise<unknown>;
      const races: Array<[string, Race]> = [
        ['newer first', async (newer, older) => (await newer(), older())],
        ['older first', async (newer, older) => (await older(), newer())],
        ['at once', (newer, older) => Promise.all([older(), newer()])],
        ['at once, newer sent first', (newer, older) => Promise.all([newer(), older()])],
      ];

      for (const [name, race] of races) {
        it(`keep the newer of two upserts of one document, ${name}`, async () => {
          await race(
            () => store.commit('nodes', [upsert('nodes', doc('new', { gpus: 8 }))], 20),
            () => peer.commit('nodes', [upsert('nodes', doc('old'))], 10),
          );
          expect(await store.get('nodes', 'x')).toEqual(doc('new', { gpus: 8 }));
          expect(await peer.get('nodes', 'x')).toEqual(doc('new', { gpus: 8 }));
          expect(await store.checkpoint('nodes')).toBe(20);
        });

        it(`keep a delete over an older upsert, ${name}`, async () => {
          await store.commit('nodes', [upsert('nodes', doc('first'))], 5);
          await race(
            () => peer.commit('nodes', [remove('nodes', 'x')], 20),
            () => store.commit('nodes', [upsert('nodes', doc('old'))], 10),
          );
          expect(await store.get('nodes', 'x')).toBeNull();
          expect(await store.count('nodes', {})).toBe(0);
          expect((await store.find('nodes', {})).items).toEqual([]);
        });

        it(`never move a checkpoint back, ${name}`, async () => {
          await race(
            () => store.commit('reactor:r', [], 300),
            () => peer.commit('reactor:r', [], 299),
          );
          expect(await store.checkpoint('reactor:r')).toBe(300);
          expect(await peer.checkpoint('reactor:r')).toBe(300);
        });
      }

      it('change nothing with a write older than what is stored', async () => {
        await store.commit(
          'nodes',
          [upsert('nodes', doc('new')), upsert('nodes', { _id: 'gone' }), remove('nodes', 'gone')],
          20,
        );
        await peer.commit(
          'nodes',
          [upsert('nodes', doc('old')), upsert('nodes', { _id: 'gone', back: true })],
          10,
        );
        await peer.commit('nodes', [remove('nodes', 'x')], 19);
        expect(await store.get('nodes', 'x')).toEqual(doc('new'));
        expect(await store.get('nodes', 'gone')).toBeNull();
        expect(await store.count('nodes', {})).toBe(1);
        expect(await store.checkpoint('nodes')).toBe(20);
      });

      it('take a write at the same checkpoint as no newer (the same page replayed)', async () => {
        await store.commit('nodes', [upsert('nodes', doc('first'))], 20);
        await peer.commit('nodes', [upsert('nodes', doc('again')), remove('nodes', 'x')], 20);
        expect(await store.get('nodes', 'x')).toEqual(doc('first'));
      });

      it('apply an older writer to the documents the newer one did not write', async () => {
        await store.commit('nodes', [upsert('nodes', { _id: 'a', v: 1 })], 20);
        await peer.commit(
          'nodes',
          [upsert('nodes', { _id: 'a', v: 0 }), upsert('nodes', { _id: 'b', v: 0 })],
          10,
        );
        expect(ids((await store.find('nodes', {}, { sort: { _id: 1 } })).items)).toEqual([
          'a',
          'b',
        ]);
        expect(await store.get('nodes', 'a')).toEqual({ _id: 'a', v: 1 });
      });

      it('write a deleted document again from a newer commit, or an insert', async () => {
        await store.commit(
          'nodes',
          [upsert('nodes', doc('first')), upsert('nodes', { _id: 'y' })],
          5,
        );
        await store.commit('nodes', [remove('nodes', 'x'), remove('nodes', 'y')], 10);
        await peer.commit('nodes', [upsert('nodes', doc('again'))], 11);
        await peer.commit('nodes', [insert('nodes', { _id: 'y', v: 'inserted' })], 12);
        expect(await store.get('nodes', 'x')).toEqual(doc('again'));
        expect(await store.get('nodes', 'y')).toEqual({ _id: 'y', v: 'inserted' });
      });

      it('keep deleted documents out of every read, whatever the filter', async () => {
        store.defineCollection('kept', { indexes: ['status'] });
        const docs = Array.from({ length: 30 }, (_, i) => ({
          _id: id(i),
          status: i % 2 ? 'ready' : 'busy',
          rank: i % 7,
        }));
        await store.commit(
          'kept',
          docs.map((d) => upsert('kept', d)),
          1,
        );
        const deleted = docs.filter((_, i) => i % 3 === 0);
        await peer.commit(
          'kept',
          deleted.map((d) => remove('kept', d._id)),
          2,
        );
        const left = docs.filter((_, i) => i % 3 !== 0);
        const filters: Filter[] = [
          {},
          { status: 'ready' },
          { status: { $ne: 'gone' } },
          { status: { $in: ['ready', 'busy'] } },
          { missing: { $exists: false } },
          { missing: null },
          { $or: [{ status: 'ready' }, { rank: { $lt: 100 } }] },
          { $or: [{ status: 'ready' }, { missing: null }] },
          { _id: { $in: ids(docs) } },
        ];
        for (const filter of filters) {
          const expected = left.filter((d) => filter.status !== 'ready' || d.status === 'ready');
          const { ids: seen } = await pageThrough(store, 'kept', filter, { rank: 1 }, 4);
          expect(seen).toEqual(expectedOrder(expected, { rank: 1 }));
          expect(await store.count('kept', filter)).toBe(expected.length);
        }
        for (const d of deleted) expect(await store.get('kept', d._id)).toBeNull();
      });
    });

    it('resets every document and checkpoint, and keeps working afterwards', async () => {
      await seedNodes();
      await store.commit('other', [upsert('other', { _id: 'o' })], 9);
      await store.reset();
      expect(await store.count('nodes', {})).toBe(0);
      expect(await store.get('other', 'o')).toBeNull();
      expect(await store.checkpoint('nodes')).toBe(0);
      expect(await store.checkpoint('other')).toBe(0);
      await seedNodes();
      expect(await store.count('nodes', {})).toBe(5);
      expect(await store.checkpoint('nodes')).toBe(1);
    });

    it('never lets callers change stored documents through objects they hold', async () => {
      const input = { _id: 'n1', capacity: { cpu: 8 }, tags: ['a'] };
      await store.commit('nodes', [upsert('nodes', input)], 1);
      input.capacity.cpu = 1;
      input.tags.push('b');
      const mutate = (doc: Doc | undefined | null) => {
        try {
          const d = doc as unknown as typeof input;
          d.capacity.cpu = 99;
          d.tags.push('c');
        } catch {
          // a frozen result is fine too
        }
      };
      mutate(await store.get('nodes', 'n1'));
      mutate((await store.find('nodes', {})).items[0]);
      mutate((await store.find('nodes', { _id: 'n1' })).items[0]);
      expect(await store.get('nodes', 'n1')).toEqual({
        _id: 'n1',
        capacity: { cpu: 8 },
        tags: ['a'],
      });
    });
  });
}
