import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { UnavailableError } from '@fleet/kernel';
import { OwnRedis } from '../../../../../test/support/own-redis';
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

    describe('when a touch lands after a later one (two reports or two replicas racing)', () => {
      it('keeps the later seenAt and observedAt of each node, in one batch or apart', async () => {
        await store.touch([
          { nodeId: 'a', seenAt: 3000, observedAt: 2900 },
          { nodeId: 'b', seenAt: 1000, observedAt: 900 },
        ]);
        await store.touch([
          { nodeId: 'a', seenAt: 2000, observedAt: 1900 },
          { nodeId: 'b', seenAt: 4000, observedAt: 3900 },
          { nodeId: 'c', seenAt: 500, observedAt: 400 },
        ]);
        expect(await store.get(['a', 'b', 'c'])).toEqual([
          { seenAt: 3000, observedAt: 2900 },
          { seenAt: 4000, observedAt: 3900 },
          { seenAt: 500, observedAt: 400 },
        ]);
      });

      it('moves each time on its own: a later sighting of an older report keeps the newest observedAt', async () => {
        await store.touch([{ nodeId: 'a', seenAt: 1000, observedAt: 2900 }]);
        await store.touch([{ nodeId: 'a', seenAt: 2000, observedAt: 1900 }]);
        expect(await store.get(['a'])).toEqual([{ seenAt: 2000, observedAt: 2900 }]);
      });

      it('keeps an observedAt over a touch without one, and takes one over none', async () => {
        await store.touch([
          { nodeId: 'a', seenAt: 1000, observedAt: 900 },
          { nodeId: 'b', seenAt: 1000, observedAt: null },
        ]);
        await store.touch([
          { nodeId: 'a', seenAt: 2000, observedAt: null },
          { nodeId: 'b', seenAt: 500, observedAt: 400 },
        ]);
        expect(await store.get(['a', 'b'])).toEqual([
          { seenAt: 2000, observedAt: 900 },
          { seenAt: 1000, observedAt: 400 },
        ]);
      });

      it('starts a node removed and seen again afresh', async () => {
        await store.touch([{ nodeId: 'a', seenAt: 5000, observedAt: 4900 }]);
        await store.remove('a');
        await store.touch([{ nodeId: 'a', seenAt: 1000, observedAt: 900 }]);
        expect(await store.get(['a'])).toEqual([{ seenAt: 1000, observedAt: 900 }]);
      });
    });

    it('answers in process (getNow, touchNow) as get and touch do, where it has them', async () => {
      const { getNow, touchNow } = store;
      // Both or neither: a report takes the in-process path only for the pair.
      expect(getNow === undefined).toBe(touchNow === undefined);
      if (!getNow || !touchNow) return;
      touchNow.call(store, [{ nodeId: 'a', seenAt: 3000, observedAt: 2900 }]);
      await store.touch([
        { nodeId: 'a', seenAt: 2000, observedAt: 1900 },
        { nodeId: 'b', seenAt: 1000, observedAt: null },
      ]);
      touchNow.call(store, [{ nodeId: 'b', seenAt: 4000, observedAt: 3900 }]);
      const expected = [
        { seenAt: 3000, observedAt: 2900 },
        { seenAt: 4000, observedAt: 3900 },
        null,
      ];
      expect(getNow.call(store, ['a', 'b', 'x'])).toEqual(expected);
      expect(await store.get(['a', 'b', 'x'])).toEqual(expected);
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

contract('memory, written down', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hb-snapshot-'));
  return {
    store: new MemoryHeartbeatStore({ file: path.join(dir, 'heartbeats'), everyMs: 50 }),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

describe('heartbeat store: memory, written down under DATA_DIR', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hb-snapshot-'));
    file = path.join(dir, 'heartbeats');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads back at start what the last one closed with, removals included', async () => {
    const first = new MemoryHeartbeatStore({ file, everyMs: 60_000 });
    const beats = Array.from({ length: 12_345 }, (_, i) => ({
      nodeId: `node-${i}`,
      seenAt: 1_000 + i,
      observedAt: i % 2 === 0 ? 900 + i : null,
    }));
    await first.touch(beats);
    await first.remove('node-7');
    await first.close();
    const second = new MemoryHeartbeatStore({ file, everyMs: 60_000 });
    try {
      expect(await second.get(['node-0', 'node-1', 'node-7', 'node-12344', 'never'])).toEqual([
        { seenAt: 1_000, observedAt: 900 },
        { seenAt: 1_001, observedAt: null },
        null,
        { seenAt: 13_344, observedAt: 13_244 },
        null,
      ]);
    } finally {
      await second.close();
    }
  });

  it('writes a fleet larger than one write (node ids, times, none) line for line, and reads it back', async () => {
    const first = new MemoryHeartbeatStore({ file, everyMs: 60_000 });
    const beats = Array.from({ length: 20_000 }, (_, i) => ({
      nodeId: randomUUID(),
      seenAt: 1_796_000_000_000 + i,
      observedAt: i % 3 === 0 ? null : 1_795_000_000_000 + i * 7,
    }));
    await first.touch(beats);
    await first.close();
    // ~1.3 MB: several of the store's writes, each line whole across their boundaries.
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toBe(beats.map((b) => `${b.nodeId} ${b.seenAt} ${b.observedAt ?? ''}\n`).join(''));
    const second = new MemoryHeartbeatStore({ file, everyMs: 60_000 });
    try {
      const ids = beats.map((b) => b.nodeId);
      expect(second.getNow(ids)).toEqual(
        beats.map((b) => ({ seenAt: b.seenAt, observedAt: b.observedAt })),
      );
    } finally {
      await second.close();
    }
  });

  it('writes down every period, so a process killed without closing loses one period at most', async () => {
    const store = new MemoryHeartbeatStore({ file, everyMs: 50 });
    await store.touch([{ nodeId: 'a', seenAt: 1_000, observedAt: null }]);
    await new Promise((r) => setTimeout(r, 200));
    // Not closed: as after a SIGKILL, only what the periods wrote is there.
    const after = new MemoryHeartbeatStore({ file, everyMs: 60_000 });
    expect(await after.get(['a'])).toEqual([{ seenAt: 1_000, observedAt: null }]);
    await after.close();
    await store.close();
  });

  it('writes down what was touched in process (touchNow) as what was touched', async () => {
    const store = new MemoryHeartbeatStore({ file, everyMs: 50 });
    store.touchNow([{ nodeId: 'a', seenAt: 2_000, observedAt: 1_900 }]);
    await new Promise((r) => setTimeout(r, 200));
    const after = new MemoryHeartbeatStore({ file, everyMs: 60_000 });
    expect(after.getNow(['a'])).toEqual([{ seenAt: 2_000, observedAt: 1_900 }]);
    await after.close();
    await store.close();
  });

  it('skips lines it cannot read (a torn or foreign file) and starts with what it can', async () => {
    fs.writeFileSync(file, 'a 1000 900\nb not-a-time\n\ngarbage\nc 3000 \n');
    const store = new MemoryHeartbeatStore({ file, everyMs: 60_000 });
    expect(await store.get(['a', 'b', 'c', 'garbage'])).toEqual([
      { seenAt: 1_000, observedAt: 900 },
      null,
      { seenAt: 3_000, observedAt: null },
      null,
    ]);
    await store.close();
  });

  it('writes nothing while nothing was touched', async () => {
    const store = new MemoryHeartbeatStore({ file, everyMs: 20 });
    await new Promise((r) => setTimeout(r, 100));
    await store.close();
    expect(fs.existsSync(file)).toBe(false);
  });
});

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

describe('heartbeat store: redis, when Redis loses its data or goes away', () => {
  it('still knows the last heartbeat it recorded, sighting and report order, when Redis loses it', async () => {
    const prefix = `hb-test-${randomUUID().slice(0, 8)}`;
    const store = new RedisHeartbeatStore(REDIS_URL, prefix);
    const other = new Redis(REDIS_URL);
    try {
      await store.touch([{ nodeId: 'a', seenAt: 1000, observedAt: 900 }]);
      await other.del(`${prefix}:heartbeats`); // as a restart of Redis without data would
      // The order holds too: a delayed report older than 900 still changes nothing.
      expect(await store.get(['a', 'b'])).toEqual([{ seenAt: 1000, observedAt: 900 }, null]);
      await store.touch([{ nodeId: 'a', seenAt: 2000, observedAt: 1900 }]);
      expect(await store.get(['a'])).toEqual([{ seenAt: 2000, observedAt: 1900 }]);
      await store.remove('a');
      await other.del(`${prefix}:heartbeats`);
      expect(await store.get(['a'])).toEqual([null]);
    } finally {
      other.disconnect();
      await store.close();
    }
  });

  const up = async (store: RedisHeartbeatStore) => {
    for (let i = 0; i < 200; i++) {
      try {
        return await store.ping();
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error('redis did not come up');
  };

  /** `body` with a store on a Redis of its own, to kill, stall and restart; its failures' log lines silenced. */
  const onOwnRedis = async (
    prefix: string,
    body: (redis: OwnRedis, store: RedisHeartbeatStore) => Promise<void>,
  ): Promise<void> => {
    const redis = await OwnRedis.onFreePort();
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await redis.start();
    const store = new RedisHeartbeatStore(redis.url, prefix);
    try {
      await up(store);
      await body(redis, store);
    } finally {
      redis.resume();
      errors.mockRestore();
      await store.close();
      await redis.kill();
    }
  };

  it(
    'answers at once while Redis is down, however long it has been, and resumes as it returns',
    () =>
      onOwnRedis('hb-fast', async (redis, store) => {
        await redis.kill();
        // Long enough for ioredis's own reconnect delays to have grown to 2 s apart.
        await new Promise((r) => setTimeout(r, 8_000));
        // One after another, as a controller retrying would: each within the connect wait (1 s).
        const took: number[] = [];
        for (const call of [
          () => store.touch([{ nodeId: 'a', seenAt: 1, observedAt: null }]),
          () => store.get(['a']),
          () => store.touch([{ nodeId: 'a', seenAt: 1, observedAt: null }]),
          () => store.get(['a']),
        ]) {
          const started = Date.now();
          await expect(call()).rejects.toBeInstanceOf(UnavailableError);
          took.push(Date.now() - started);
        }
        expect(Math.max(...took)).toBeLessThan(1_300);
        await redis.start();
        const back = Date.now();
        await store.touch([{ nodeId: 'a', seenAt: 2, observedAt: null }]).catch(() => up(store));
        await store.touch([{ nodeId: 'a', seenAt: 2, observedAt: null }]);
        expect(Date.now() - back).toBeLessThan(2_500);
        // Nothing held from the outage was written late over it.
        expect(await store.get(['a'])).toEqual([{ seenAt: 2, observedAt: null }]);
      }),
    30_000,
  );

  it(
    'answers within its command timeout while Redis stalls (connected, answering nothing), and says when it answered again',
    () =>
      onOwnRedis('hb-stall', async (redis, store) => {
        await store.touch([{ nodeId: 'a', seenAt: 1, observedAt: null }]);
        redis.stall();
        const started = Date.now();
        await expect(store.get(['a'])).rejects.toBeInstanceOf(UnavailableError);
        expect(Date.now() - started).toBeLessThan(3_000);
        const resumedAt = Date.now();
        redis.resume();
        await store.touch([{ nodeId: 'a', seenAt: 2, observedAt: null }]);
        // Reports could not be recorded while it stalled: silence counts from its return.
        expect(store.restoredAt()).toBeGreaterThanOrEqual(resumedAt);
        expect(await store.get(['a'])).toEqual([{ seenAt: 2, observedAt: null }]);
      }),
    30_000,
  );

  it(
    'answers each call within its command timeout while Redis stalls, also calls made behind an earlier unanswered one',
    () =>
      onOwnRedis('hb-stall-queue', async (redis, store) => {
        redis.stall();
        // Reports arriving during the stall: each is answered within the timeout of its own
        // call (2 s), not held until the calls before it have timed out too.
        const took = await Promise.all(
          [0, 500, 1_000, 1_500].map(async (delay) => {
            await new Promise((r) => setTimeout(r, delay));
            const started = Date.now();
            const call =
              delay % 1_000 === 0
                ? store.get(['a'])
                : store.touch([{ nodeId: 'a', seenAt: delay, observedAt: null }]);
            await expect(call).rejects.toBeInstanceOf(UnavailableError);
            return Date.now() - started;
          }),
        );
        expect(Math.max(...took)).toBeLessThan(2_500);
      }),
    30_000,
  );

  it(
    'says when Redis came back after being out of reach',
    () =>
      onOwnRedis('hb-restore', async (redis, store) => {
        // Reachable from the start: recordable since the store was made (the process started).
        expect(store.restoredAt()).toBeLessThanOrEqual(Date.now());
        expect(store.restoredAt()).toBeGreaterThan(Date.now() - 20_000);
        const sinceStart = store.restoredAt();
        await store.touch([{ nodeId: 'a', seenAt: 1, observedAt: null }]);
        expect(store.restoredAt()).toBe(sinceStart);
        await redis.kill();
        await expect(store.get(['a'])).rejects.toThrow();
        const restartedAt = Date.now();
        await redis.start();
        await up(store);
        expect(store.restoredAt()).toBeGreaterThanOrEqual(restartedAt);
      }),
    30_000,
  );
});

describe('heartbeat store: redis, batched per turn of the event loop', () => {
  let prefix: string;
  let store: RedisHeartbeatStore;
  let other: Redis;
  beforeEach(async () => {
    prefix = `hb-test-${randomUUID().slice(0, 8)}`;
    store = new RedisHeartbeatStore(REDIS_URL, prefix);
    other = new Redis(REDIS_URL);
    await store.ping();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await other.del(`${prefix}:heartbeats`);
    other.disconnect();
    await store.close();
  });

  const beat = (nodeId: string, seenAt: number, observedAt: number | null = null) => ({
    nodeId,
    seenAt,
    observedAt,
  });

  it('sends the touches and reads asked for in one turn as one pipeline, and answers each caller its own', async () => {
    await store.touch([beat('old', 100, 90)]);
    const pipelines = jest.spyOn(Redis.prototype, 'pipeline');
    const before = store.batches;
    // 50 reports' worth in one turn: touches, then reads of what they touch and of others.
    const touches = Array.from({ length: 50 }, (_, i) =>
      store.touch([beat(`n${i}`, 1_000 + i, i % 2 ? 900 + i : null), beat(`m${i}`, 5)]),
    );
    const reads = Array.from({ length: 50 }, (_, i) => store.get([`n${i}`, 'old', 'never']));
    await expect(Promise.all(touches)).resolves.toHaveLength(50);
    const got = await Promise.all(reads);
    expect(store.batches - before).toBe(1);
    expect(pipelines).toHaveBeenCalledTimes(1);
    got.forEach((answer, i) =>
      expect(answer).toEqual([
        { seenAt: 1_000 + i, observedAt: i % 2 ? 900 + i : null },
        { seenAt: 100, observedAt: 90 },
        null,
      ]),
    );
    // In Redis, not only in this process's record of them.
    expect(await other.hget(`${prefix}:heartbeats`, 'n7')).toBe('1007:907');
    expect(await other.hlen(`${prefix}:heartbeats`)).toBe(101);
  });

  it('sends what one turn took without waiting (touchLater) as one pipeline, in Redis a round trip later', async () => {
    const before = store.batches;
    for (let i = 0; i < 200; i++) {
      expect(store.touchLater([beat(`n${i}`, 2_000 + i, 1_000)])).toBe(true);
    }
    // Nothing sent yet (the callers did not wait), and in this process's record at once.
    expect(store.batches).toBe(before);
    expect(store.recordedHere(['n3'])).toEqual([{ seenAt: 2_003, observedAt: 1_000 }]);
    await new Promise((r) => setImmediate(r));
    expect(store.batches - before).toBe(1);
    // A read on the same connection comes after the batch's writes.
    expect(await store.get(['n3'])).toEqual([{ seenAt: 2_003, observedAt: 1_000 }]);
    expect(await other.hget(`${prefix}:heartbeats`, 'n3')).toBe('2003:1000');
    expect(await other.hlen(`${prefix}:heartbeats`)).toBe(200);
  });

  it('keeps the later times of a node touched twice in one turn, the later touch first', async () => {
    await store.touch([beat('a', 1_000, 900)]);
    await Promise.all([
      store.touch([beat('a', 3_000, 2_900), beat('b', 10, null)]),
      store.touch([beat('a', 2_000, 1_900), beat('b', 20, 15)]),
      store.touch([beat('b', 5, null)]),
    ]);
    expect(await other.hmget(`${prefix}:heartbeats`, 'a', 'b')).toEqual(['3000:2900', '20:15']);
  });

  it('keeps a turn in the order asked: a removal between two touches of a node', async () => {
    const first = store.touch([beat('a', 5_000, 4_900), beat('b', 5_000, 4_900)]);
    const removed = store.remove('a');
    const again = store.touch([beat('a', 1_000, 900)]);
    const removedB = store.remove('b');
    await Promise.all([first, removed, again, removedB]);
    expect(await store.get(['a', 'b'])).toEqual([{ seenAt: 1_000, observedAt: 900 }, null]);
  });

  it('answers the later of Redis and its own record: a replica ahead in Redis, or a sighting Redis lost', async () => {
    await store.touch([beat('a', 1_000, 900), beat('b', 1_000, 900)]);
    // Another replica wrote a later sighting of a; Redis lost b's.
    await other.hset(`${prefix}:heartbeats`, 'a', '3000:2900');
    await other.hdel(`${prefix}:heartbeats`, 'b');
    expect(await store.get(['a', 'b'])).toEqual([
      { seenAt: 3_000, observedAt: 2_900 },
      { seenAt: 1_000, observedAt: 900 },
    ]);
  });

  describe('when Redis refuses a batch', () => {
    it('fails every caller of the batch with the error, reads and writes, and takes no sighting without a caller until writes succeed again', async () => {
      // A key of another type: every command of the batch is refused (WRONGTYPE).
      await other.set(`${prefix}:heartbeats`, 'not a hash');
      const unhandled = jest.fn();
      process.on('unhandledRejection', unhandled);
      const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      try {
        const before = store.batches;
        const calls = [
          store.touch([beat('a', 1, null)]),
          store.get(['a']),
          store.touch([beat('b', 1, null)]),
          store.get(['b', 'c']),
        ];
        expect(store.touchLater([beat('c', 1, null)])).toBe(true);
        const outcomes = await Promise.allSettled(calls);
        expect(store.batches - before).toBe(1);
        for (const outcome of outcomes) {
          expect(outcome.status).toBe('rejected');
          expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/);
        }
        // The sighting no caller waited for is not lost silently.
        expect(logged).toHaveBeenCalledWith(
          expect.anything(),
          expect.stringMatching(
            /sightings of 1 node\(s\) answered to reports could not be written/,
          ),
        );
        // Its writes failed: a report now waits for its sighting, and hears the error.
        expect(store.touchLater([beat('c', 2, null)])).toBe(false);
        await expect(store.touch([beat('c', 2, null)])).rejects.toThrow(/WRONGTYPE/);
        await other.del(`${prefix}:heartbeats`);
        await store.touch([beat('c', 3, null)]);
        expect(store.touchLater([beat('c', 4, null)])).toBe(true);
        expect(await store.get(['c'])).toEqual([{ seenAt: 4, observedAt: null }]);
        await new Promise((r) => setTimeout(r, 50));
        expect(unhandled).not.toHaveBeenCalled();
      } finally {
        process.off('unhandledRejection', unhandled);
      }
    });
  });
});

describe('heartbeat store: redis, a batch when Redis stalls', () => {
  it('fails every caller of the batch with UnavailableError within the command timeout, and declines touchLater until Redis answers', async () => {
    const redis = await OwnRedis.onFreePort();
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    await redis.start();
    const store = new RedisHeartbeatStore(redis.url, 'hb-batch-stall');
    try {
      await store.ping();
      redis.stall();
      const started = Date.now();
      const before = store.batches;
      const calls = Array.from({ length: 10 }, (_, i) =>
        i % 2
          ? store.get([`n${i}`])
          : store.touch([{ nodeId: `n${i}`, seenAt: i, observedAt: null }]),
      );
      expect(store.touchLater([{ nodeId: 'x', seenAt: 1, observedAt: null }])).toBe(true);
      const outcomes = await Promise.allSettled(calls);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(store.batches - before).toBe(1);
      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(UnavailableError);
      }
      expect(store.touchLater([{ nodeId: 'x', seenAt: 2, observedAt: null }])).toBe(false);
      redis.resume();
      await store.touch([{ nodeId: 'x', seenAt: 3, observedAt: null }]);
      expect(store.touchLater([{ nodeId: 'x', seenAt: 4, observedAt: null }])).toBe(true);
      expect(await store.get(['x'])).toEqual([{ seenAt: 4, observedAt: null }]);
    } finally {
      redis.resume();
      errors.mockRestore();
      await store.close();
      await redis.kill();
    }
  }, 30_000);
});
