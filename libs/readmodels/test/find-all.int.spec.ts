import { EmbeddedReadModelStore, findAll } from '../src';

describe('findAll', () => {
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
});
