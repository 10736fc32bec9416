import { EmbeddedReadModelStore, findAll, pagesOf } from '../src';

describe('findAll and pagesOf', () => {
  it('reads every matching document across pages, in the order asked', async () => {
    const store = new EmbeddedReadModelStore();
    const docs = Array.from({ length: 2500 }, (_, i) => ({
      _id: `d${String(i).padStart(4, '0')}`,
      rank: 2500 - i,
      kind: i % 2 === 0 ? 'even' : 'odd',
    }));
    await store.commit(
      'p',
      docs.map((doc) => ({ op: 'upsert', collection: 'c', doc })),
      1,
    );
    const even = await findAll<(typeof docs)[number]>(store, 'c', { kind: 'even' }, { rank: 1 });
    expect(even).toHaveLength(1250);
    expect(even.map((d) => d.rank)).toEqual(
      docs
        .filter((d) => d.kind === 'even')
        .map((d) => d.rank)
        .sort((a, b) => a - b),
    );
    expect(await findAll(store, 'c', { kind: 'none' })).toEqual([]);
  });

  it('hands the pages over one at a time, each at most 1,000 documents, none empty', async () => {
    const store = new EmbeddedReadModelStore();
    await store.commit(
      'p',
      Array.from({ length: 2001 }, (_, i) => ({
        op: 'upsert' as const,
        collection: 'c',
        doc: { _id: `d${String(i).padStart(4, '0')}` },
      })),
      1,
    );
    const sizes: number[] = [];
    const seen = new Set<string>();
    for await (const page of pagesOf(store, 'c', {})) {
      sizes.push(page.length);
      for (const d of page) seen.add(d._id);
    }
    expect(sizes).toEqual([1000, 1000, 1]);
    expect(seen.size).toBe(2001);
    const none: number[] = [];
    for await (const page of pagesOf(store, 'c', { _id: 'missing' })) none.push(page.length);
    expect(none).toEqual([]);
  });
});
