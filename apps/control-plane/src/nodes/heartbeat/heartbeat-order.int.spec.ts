import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { RedisHeartbeatStore } from './heartbeat.store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Two replicas' heartbeat stores on one Redis hash (heartbeat-order.ts). */
describe('the report order claimed in Redis by replicas', () => {
  const prefix = `hb-order-${randomUUID().slice(0, 8)}`;
  const a = new RedisHeartbeatStore(REDIS_URL, prefix);
  const b = new RedisHeartbeatStore(REDIS_URL, prefix);
  afterAll(async () => {
    const r = new Redis(REDIS_URL);
    await r.del(`${prefix}:heartbeats`);
    r.disconnect();
    await Promise.all([a.close(), b.close()]);
  });

  it('writes a claim for a node never seen, and for one whose newest observedAt is older', async () => {
    expect(await a.claimOrder([{ nodeId: 'n1', seenAt: 1000, observedAt: 900 }])).toEqual([null]);
    expect(await b.get(['n1'])).toEqual([{ seenAt: 1000, observedAt: 900 }]);
    expect(await b.claimOrder([{ nodeId: 'n1', seenAt: 1100, observedAt: 950 }])).toEqual([null]);
    expect(await a.get(['n1'])).toEqual([{ seenAt: 1100, observedAt: 950 }]);
  });

  it('answers the later observedAt another replica recorded, and writes nothing of the older claim', async () => {
    await b.touch([{ nodeId: 'n2', seenAt: 2000, observedAt: 1900 }]); // a report that changed nothing
    expect(
      await a.claimOrder([
        { nodeId: 'n2', seenAt: 2100, observedAt: 1800 },
        { nodeId: 'n3', seenAt: 2100, observedAt: 1800 },
      ]),
    ).toEqual([1900, null]);
    expect(await b.get(['n2', 'n3'])).toEqual([
      { seenAt: 2000, observedAt: 1900 },
      { seenAt: 2100, observedAt: 1800 },
    ]);
  });

  it('keeps the later sighting when a claim arrives with an earlier receive time', async () => {
    await b.touch([{ nodeId: 'n4', seenAt: 5000, observedAt: 100 }]);
    expect(await a.claimOrder([{ nodeId: 'n4', seenAt: 4000, observedAt: 200 }])).toEqual([null]);
    expect(await b.get(['n4'])).toEqual([{ seenAt: 5000, observedAt: 200 }]);
  });

  it('lets one of two replicas claiming the same node at once go first, the other told its time', async () => {
    const [x, y] = await Promise.all([
      a.claimOrder([{ nodeId: 'n5', seenAt: 1, observedAt: 10 }]),
      b.claimOrder([{ nodeId: 'n5', seenAt: 1, observedAt: 20 }]),
    ]);
    // Whichever ran first was written; the older one, if second, was told of the newer.
    expect([x[0], y[0]]).toContainEqual(null);
    if (x[0] !== null) expect(x[0]).toBe(20);
    expect((await a.get(['n5']))[0]?.observedAt).toBe(20);
  });
});
