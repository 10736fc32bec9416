import { leaseTiming } from '../src/leader-lease';
import { InProcessLeaderLease, MemoryLeaseStore } from '../src/in-process-leader-lease';
import { leaderLeaseContract, Outage } from './leader-lease.contract';

leaderLeaseContract(
  'InProcessLeaderLease on a shared MemoryLeaseStore',
  async () => {
    const store = new MemoryLeaseStore();
    const outage = new Outage();
    return {
      contender: (wrap, timing) =>
        new InProcessLeaderLease({ store: wrap(outage.wrap(store)), timing, log: () => undefined }),
      outage: async () => void (outage.down = true),
      recover: async () => {
        store.forget();
        outage.down = false;
      },
      dispose: async () => undefined,
    };
  },
  leaseTiming(600),
);

describe('InProcessLeaderLease alone (the embedded default)', () => {
  it('leads from its start to its stop, in epoch 1, and says so', async () => {
    const lease = new InProcessLeaderLease();
    const changes: unknown[] = [];
    lease.onChange((change) => changes.push(change));
    expect(lease.isLeader()).toBe(false);
    await lease.start();
    expect(lease.isLeader()).toBe(true);
    expect(lease.epoch()).toBe(1);
    await lease.stop();
    expect(lease.isLeader()).toBe(false);
    expect(lease.epoch()).toBeNull();
    expect(changes).toEqual([
      { leader: true, epoch: 1 },
      { leader: false, epoch: 1 },
    ]);
  });

  it('leads past a term its log recorded (the data was led with Redis before), telling the change', async () => {
    const lease = new InProcessLeaderLease();
    const changes: unknown[] = [];
    lease.onChange((change) => changes.push(change));
    await lease.start();
    lease.raiseFloor(7);
    expect(lease.epoch()).toBe(8);
    lease.raiseFloor(3); // older than its term: nothing changes
    expect(lease.epoch()).toBe(8);
    expect(changes).toEqual([
      { leader: true, epoch: 1 },
      { leader: false, epoch: 1 },
      { leader: true, epoch: 8 },
    ]);
  });

  it('does not step down when its event loop stalls longer than any lease', async () => {
    jest.useFakeTimers();
    try {
      const lease = new InProcessLeaderLease();
      await lease.start();
      jest.setSystemTime(Date.now() + 3_600_000);
      await jest.advanceTimersByTimeAsync(3_600_000);
      expect(lease.isLeader()).toBe(true);
      expect(lease.epoch()).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('MemoryLeaseStore', () => {
  let now = 0;
  const store = new MemoryLeaseStore(() => now);

  it('keeps the lease by the rules of the Redis key', async () => {
    now = 0;
    store.forget();
    expect(await store.acquire('a', 100, 0)).toEqual({ acquired: true, epoch: 1 });
    now = 40;
    expect(await store.acquire('b', 100, 0)).toEqual({
      acquired: false,
      remainingMs: 60,
      epoch: 1,
    });
    // The holder's own try again (its answer lost): the same term, renewed.
    expect(await store.acquire('a', 100, 0)).toEqual({ acquired: true, epoch: 1 });
    expect(await store.renew('b', 100)).toBe(false);
    now = 139;
    expect(await store.renew('a', 100)).toBe(true);
    now = 239;
    expect(await store.renew('a', 100)).toBe(false);
    expect(await store.acquire('b', 100, 0)).toEqual({ acquired: true, epoch: 2 });
    await store.resign('a');
    expect(await store.acquire('a', 100, 0)).toMatchObject({ acquired: false });
    await store.resign('b');
    // Above the floor a contender saw, even once the counter is lost.
    store.forget();
    expect(await store.acquire('a', 100, 7)).toEqual({ acquired: true, epoch: 8 });
  });
});
