import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { UnavailableError } from '@fleet/kernel';
import { OwnRedis } from '../../../../../test/support/own-redis';
import {
  IDEMPOTENCY_TTL_MS,
  IdempotencyStore,
  RedisIdempotencyStore,
  SqliteIdempotencyStore,
} from './idempotency.store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Every key under `prefix`, deleted. */
const drop = async (prefix: string): Promise<void> => {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
};

const contract = (
  name: string,
  make: () => { store: IdempotencyStore; cleanup(): Promise<void> },
) =>
  describe(`idempotency store: ${name}`, () => {
    let store: IdempotencyStore;
    let cleanup: () => Promise<void>;
    beforeEach(() => ({ store, cleanup } = make()));
    afterEach(async () => {
      await store.close();
      await cleanup();
    });

    it('keeps the first response under a key, and nothing under another', async () => {
      await store.put('s1', { bodyHash: 'h1', status: 201, body: { a: 1 }, at: Date.now() });
      await store.put('s1', { bodyHash: 'h2', status: 200, body: { a: 2 }, at: Date.now() });
      expect(await store.get('s1')).toMatchObject({ bodyHash: 'h1', status: 201, body: { a: 1 } });
      expect(await store.get('s2')).toBeNull();
    });

    it("stands by a key's first use, and forgets it only when asked with that use", async () => {
      const at = Date.now();
      expect(await store.claim('s', { bodyHash: 'h1', at })).toEqual({
        standing: { bodyHash: 'h1', at },
        created: true,
      });
      expect(await store.claim('s', { bodyHash: 'h2', at: at + 1 })).toEqual({
        standing: { bodyHash: 'h1', at },
        created: false,
      });
      await store.unclaim('s', { bodyHash: 'h2', at: at + 1 }); // not the first use: stays
      expect((await store.claim('s', { bodyHash: 'h3', at: at + 2 })).created).toBe(false);
      await store.unclaim('s', { bodyHash: 'h1', at });
      expect((await store.claim('s', { bodyHash: 'h3', at: at + 2 })).created).toBe(true);
    });

    it('takes a use more than 24 h after the first as a first use', async () => {
      const at = Date.now();
      await store.claim('s', { bodyHash: 'h1', at });
      const later = { bodyHash: 'h2', at: at + IDEMPOTENCY_TTL_MS + 1 };
      expect(await store.claim('s', later)).toEqual({ standing: later, created: true });
    });

    it('answers concurrent callers each their own, one first use per key', async () => {
      const at = Date.now();
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.claim(`k${i % 5}`, { bodyHash: `h${i}`, at })),
      );
      for (let k = 0; k < 5; k++) {
        const forKey = claims.filter((_, i) => i % 5 === k);
        expect(forKey.filter((c) => c.created)).toHaveLength(1);
        const standing = forKey.find((c) => c.created)!.standing;
        for (const c of forKey) expect(c.standing).toEqual(standing);
      }
    });
  });

contract('sqlite', () => ({
  store: new SqliteIdempotencyStore(':memory:'),
  cleanup: async () => undefined,
}));

contract('redis', () => {
  const prefix = `idem-test-${randomUUID().slice(0, 8)}`;
  return { store: new RedisIdempotencyStore(REDIS_URL, prefix), cleanup: () => drop(prefix) };
});

describe('idempotency store: redis, batched per turn of the event loop', () => {
  let prefix: string;
  let store: RedisIdempotencyStore;
  beforeEach(async () => {
    prefix = `idem-test-${randomUUID().slice(0, 8)}`;
    store = new RedisIdempotencyStore(REDIS_URL, prefix);
    await store.get('warm-up'); // connected
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    await drop(prefix);
  });

  it("sends one turn's reads, claims and writes as one pipeline, and answers each caller its own", async () => {
    const at = Date.now();
    await store.put('kept', { bodyHash: 'k', status: 201, body: { id: 'kept' }, at });
    const pipelines = jest.spyOn(Redis.prototype, 'pipeline');
    const before = store.batches;
    const [reads, claims, puts] = await Promise.all([
      Promise.all(Array.from({ length: 30 }, (_, i) => store.get(i % 2 ? 'kept' : `none${i}`))),
      Promise.all(
        Array.from({ length: 30 }, (_, i) => store.claim(`c${i}`, { bodyHash: `h${i}`, at })),
      ),
      Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.put(`p${i}`, { bodyHash: `h${i}`, status: 200, body: { i }, at }),
        ),
      ),
    ]);
    // Claims take one round trip: SET NX and GET in the same batch.
    expect(store.batches - before).toBe(1);
    expect(pipelines).toHaveBeenCalledTimes(1);
    reads.forEach((r, i) =>
      i % 2 ? expect(r).toMatchObject({ body: { id: 'kept' } }) : expect(r).toBeNull(),
    );
    claims.forEach((c, i) =>
      expect(c).toEqual({ standing: { bodyHash: `h${i}`, at }, created: true }),
    );
    expect(puts).toHaveLength(30);
    expect(await store.get('p17')).toMatchObject({ bodyHash: 'h17', body: { i: 17 } });
  });

  it('refuses only the caller whose command Redis refused', async () => {
    const other = new Redis(REDIS_URL);
    try {
      // A key of another type: GET of it is refused (WRONGTYPE), the batch's other commands are not.
      await other.lpush(`${prefix}:idem:broken`, 'x');
      const before = store.batches;
      const [broken, fine] = await Promise.allSettled([store.get('broken'), store.get('fine')]);
      expect(store.batches - before).toBe(1);
      expect(broken.status).toBe('rejected');
      expect(String((broken as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/);
      expect(fine).toEqual({ status: 'fulfilled', value: null });
    } finally {
      other.disconnect();
    }
  });
});

describe('idempotency store: redis, a batch when Redis stalls', () => {
  it('fails every caller of the batch with UnavailableError within the command timeout, with no unhandled rejection', async () => {
    const redis = await OwnRedis.onFreePort();
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    await redis.start();
    const store = new RedisIdempotencyStore(redis.url, 'idem-stall');
    try {
      await store.get('warm-up');
      redis.stall();
      const started = Date.now();
      const before = store.batches;
      const at = Date.now();
      const outcomes = await Promise.allSettled([
        store.get('a'),
        store.claim('b', { bodyHash: 'h', at }),
        store.put('c', { bodyHash: 'h', status: 200, body: null, at }),
        store.unclaim('d', { bodyHash: 'h', at }),
      ]);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(store.batches - before).toBe(1);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(UnavailableError);
      }
      redis.resume();
      expect(await store.get('a')).toBeNull();
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
      redis.resume();
      errors.mockRestore();
      await store.close();
      await redis.kill();
    }
  }, 30_000);
});
