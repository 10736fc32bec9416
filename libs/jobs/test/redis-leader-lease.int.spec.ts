import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import IORedis from 'ioredis';
import { OwnRedis } from '../../../test/support/own-redis';
import { LeadershipChange, leaseTiming } from '../src/leader-lease';
import { LeaseLoop } from '../src/lease-loop';
import { RedisLeaderLease, RedisLeaseStore } from '../src/redis-leader-lease';
import { leaderLeaseContract, Outage } from './leader-lease.contract';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const quiet = (): void => undefined;

const deleteLeaseKeys = async (prefix: string): Promise<void> => {
  const redis = new IORedis(redisUrl);
  try {
    await redis.del(`${prefix}:leader-lease`, `${prefix}:leader-lease:epoch`);
  } finally {
    await redis.quit();
  }
};

leaderLeaseContract(
  'RedisLeaderLease',
  async () => {
    const prefix = `fleet-test-${randomUUID().slice(0, 8)}`;
    const outage = new Outage();
    return {
      // A connection of its own per contender, as replicas have.
      contender: (wrap, timing) =>
        new LeaseLoop(
          wrap(outage.wrap(new RedisLeaseStore({ redisUrl, prefix, log: quiet }))),
          timing,
          {
            log: quiet,
          },
        ),
      outage: async () => void (outage.down = true),
      recover: async () => {
        await deleteLeaseKeys(prefix);
        outage.down = false;
      },
      dispose: () => deleteLeaseKeys(prefix),
    };
  },
  leaseTiming(1000),
);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const waitFor = async (what: string, check: () => boolean, ms: number): Promise<number> => {
  const from = performance.now();
  while (!check()) {
    if (performance.now() - from > ms)
      throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(5);
  }
  return performance.now() - from;
};

describe('RedisLeaderLease on a Redis of its own that dies, stalls and comes back', () => {
  const timing = leaseTiming(1000);
  let redis: OwnRedis;
  let leases: RedisLeaderLease[];
  let changes: LeadershipChange[][];
  const leaders = () => leases.filter((l) => l.isLeader());

  beforeAll(async () => {
    redis = await OwnRedis.onFreePort();
    await redis.start();
  });
  beforeEach(async () => {
    leases = [0, 1, 2].map(
      () => new RedisLeaderLease({ redisUrl: redis.url, lease: timing, log: quiet }),
    );
    changes = leases.map((lease) => {
      const seen: LeadershipChange[] = [];
      lease.onChange((change) => seen.push(change));
      return seen;
    });
    await Promise.all(leases.map((l) => l.start()));
    await waitFor('a leader', () => leaders().length === 1, timing.leaseMs);
  });
  afterEach(async () => {
    redis.resume();
    await Promise.all(leases.map((l) => l.stop()));
  });
  afterAll(async () => {
    await redis.kill();
  });

  it('steps down when Redis dies, has nobody lead while it is down, and leads again once it is back (empty), in a higher epoch', async () => {
    const [first] = leaders();
    const firstEpoch = first.epoch()!;
    await redis.kill();
    // isLeader() turns false by the clock; the listeners are told by the deadline's timer.
    const seen = changes[leases.indexOf(first)];
    const steppedDown = await waitFor(
      'the leader to step down',
      () => !first.isLeader() && seen.at(-1)?.leader === false,
      timing.leaseMs,
    );
    expect(steppedDown).toBeLessThan(timing.leaseMs);
    expect(changes[leases.indexOf(first)].at(-1)).toEqual({ leader: false, epoch: firstEpoch });
    let most = 0;
    const watching = setInterval(() => (most = Math.max(most, leaders().length)), 5);
    try {
      await sleep(timing.leaseMs);
    } finally {
      clearInterval(watching);
    }
    expect(most).toBe(0);
    await redis.start();
    // Reconnects within a second, then the first try takes the free lease.
    await waitFor('a leader again', () => leaders().length === 1, 1000 + timing.leaseMs);
    expect(leaders()[0].epoch()).toBeGreaterThan(firstEpoch);
  }, 20_000);

  it('steps down when Redis stalls (no answer), before another could lead, and leads again once it answers', async () => {
    const [first] = leaders();
    const firstEpoch = first.epoch()!;
    redis.stall();
    // isLeader() turns false by the clock; the listeners are told by the deadline's timer.
    const seen = changes[leases.indexOf(first)];
    const steppedDown = await waitFor(
      'the leader to step down',
      () => !first.isLeader() && seen.at(-1)?.leader === false,
      timing.leaseMs,
    );
    expect(steppedDown).toBeLessThan(timing.leaseMs);
    expect(leaders()).toHaveLength(0);
    await sleep(timing.leaseMs);
    redis.resume();
    await waitFor('a leader again', () => leaders().length === 1, 2 * timing.leaseMs);
    expect(leaders()[0].epoch()).toBeGreaterThan(firstEpoch);
  }, 20_000);
});
