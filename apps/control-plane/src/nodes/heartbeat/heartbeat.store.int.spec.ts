import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { HeartbeatStore, MemoryHeartbeatStore, RedisHeartbeatStore } from './heartbeat.store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const contract = (name: string, make: () => { store: HeartbeatStore; cleanup(): Promise<void> }) =>
  describe(`heartbeat store: ${name}`, () => {
    let store: HeartbeatStore;
    let cleanup: () => Promise<void>;
    beforeEach(() => ({ store, cleanup } = make()));
    afterEach(async () => {
      await store.close();
      await cleanup();
    });

    it('returns null for a node never seen', async () => {
      expect(await store.get(['a', 'b'])).toEqual([null, null]);
    });

    it('keeps the latest touch per node, in the order asked', async () => {
      await store.touch([
        { nodeId: 'a', seenAt: 1000, observedAt: 900 },
        { nodeId: 'b', seenAt: 2000, observedAt: null },
      ]);
      await store.touch([{ nodeId: 'a', seenAt: 3000, observedAt: 2900 }]);
      expect(await store.get(['b', 'x', 'a'])).toEqual([
        { seenAt: 2000, observedAt: null },
        null,
        { seenAt: 3000, observedAt: 2900 },
      ]);
    });

    it('leaves what a caller read as it was when a later touch overwrites the node', async () => {
      await store.touch([{ nodeId: 'a', seenAt: 1000, observedAt: 900 }]);
      const [read] = await store.get(['a']);
      await store.touch([{ nodeId: 'a', seenAt: 5000, observedAt: 4900 }]);
      expect(read).toEqual({ seenAt: 1000, observedAt: 900 });
      expect(await store.get(['a'])).toEqual([{ seenAt: 5000, observedAt: 4900 }]);
    });

    it('forgets a removed node', async () => {
      await store.touch([{ nodeId: 'a', seenAt: 1, observedAt: null }]);
      await store.remove('a');
      expect(await store.get(['a'])).toEqual([null]);
    });

    it('takes a large batch', async () => {
      const beats = Array.from({ length: 1000 }, (_, i) => ({
        nodeId: `n${i}`,
        seenAt: i,
        observedAt: null,
      }));
      await store.touch(beats);
      const got = await store.get(beats.map((b) => b.nodeId));
      expect(got[999]).toEqual({ seenAt: 999, observedAt: null });
    });
  });

contract('memory', () => ({ store: new MemoryHeartbeatStore(), cleanup: async () => undefined }));

contract('redis', () => {
  const prefix = `hb-test-${randomUUID().slice(0, 8)}`;
  return {
    store: new RedisHeartbeatStore(REDIS_URL, prefix),
    cleanup: async () => {
      const r = new Redis(REDIS_URL);
      await r.del(`${prefix}:heartbeats`);
      r.disconnect();
    },
  };
});
