import { EmbeddedReadModelStore } from '../src/embedded-read-model-store';
import { Doc, WriteOp } from '../src/port';
import { readModelStoreContract } from './read-model-store.contract';

readModelStoreContract('embedded', async () => {
  const store = new EmbeddedReadModelStore();
  return { store, cleanup: () => store.close() };
});

type Node = Doc & { hostname: string };

describe('embedded read-model store with 100,000 documents', () => {
  const store = new EmbeddedReadModelStore();
  const statuses = ['ready', 'busy', 'offline', 'cordoned'];

  beforeAll(async () => {
    const ops: WriteOp[] = Array.from({ length: 100_000 }, (_, i) => ({
      op: 'upsert',
      collection: 'nodes',
      doc: {
        _id: `node-${String(i).padStart(6, '0')}`,
        cluster: `c${i % 10}`,
        status: statuses[i % 4],
        hostname: `host-${(i * 7919) % 100_000}`,
        capacity: { cpu: i % 64, memoryGb: (i % 16) * 32 },
        gpuCount: i % 9,
      },
    }));
    await store.commit('nodes', ops, 1);
  });

  // Generous bounds: a page takes a few hundred ms under jest on a busy 2-core machine.
  it('serves a filtered, sorted page of 100 well under a second, and the next one too', async () => {
    const filter = { cluster: { $in: ['c1', 'c2', 'c3'] }, 'capacity.cpu': { $gte: 8 } };
    const sort = { hostname: -1 } as const;
    let started = performance.now();
    const page = await store.find<Node>('nodes', filter, { sort, limit: 100 });
    expect(performance.now() - started).toBeLessThan(1500);
    started = performance.now();
    const next = await store.find<Node>('nodes', filter, {
      sort,
      limit: 100,
      cursor: page.nextCursor,
    });
    expect(performance.now() - started).toBeLessThan(1500);
    expect(page.items).toHaveLength(100);
    expect(next.items).toHaveLength(100);
    expect(next.items[0].hostname < page.items[99].hostname).toBe(true);
  });

  it('reads by id in constant time', async () => {
    const started = performance.now();
    for (let i = 0; i < 10_000; i++) {
      await store.get('nodes', `node-${String((i * 31) % 100_000).padStart(6, '0')}`);
    }
    const lookup = await store.find('nodes', { _id: 'node-054321' });
    expect(lookup.items).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
