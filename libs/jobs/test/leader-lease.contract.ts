import { performance } from 'node:perf_hooks';
import {
  AcquireResult,
  LeaderLease,
  LeadershipChange,
  LeaseStore,
  LeaseTiming,
} from '../src/leader-lease';

export type Contender = LeaderLease & { abandon(): void };

export type LeaseArena = {
  /** A new contender, not started, on the arena's store wrapped in `wrap` (to cut it off). */
  contender(wrap: (inner: LeaseStore) => LeaseStore, timing: LeaseTiming): Contender;
  /** The store stops answering everyone (Redis down) until `recover`. */
  outage(): Promise<void>;
  /** The store answers again, having lost everything (Redis restarted empty). */
  recover(): Promise<void>;
  /** Removes what the arena left (keys, connections). */
  dispose(): Promise<void>;
};

/**
 * For arenas: the store of every contender, refusing every call while `down` (a connection
 * refused), as one Redis that went away.
 */
export class Outage {
  down = false;
  wrap(inner: LeaseStore): LeaseStore {
    const check = (): void => {
      if (this.down) throw new Error('connect ECONNREFUSED (the store is down)');
    };
    return {
      acquire: async (token, ttlMs, floor) => (check(), inner.acquire(token, ttlMs, floor)),
      renew: async (token, ttlMs) => (check(), inner.renew(token, ttlMs)),
      resign: async (token) => (check(), inner.resign(token)),
      close: () => inner.close(),
    };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const waitFor = async <T>(what: string, check: () => T | null, ms: number): Promise<T> => {
  const until = performance.now() + ms;
  for (;;) {
    const value = check();
    if (value !== null) return value;
    if (performance.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(5);
  }
};

/** A store the test can cut off: while cut, calls never answer (a partition). */
class Partitionable implements LeaseStore {
  cut = false;
  constructor(private readonly inner: LeaseStore) {}
  private call<T>(work: () => Promise<T>): Promise<T> {
    return this.cut ? new Promise<T>(() => undefined) : work();
  }
  acquire(token: string, ttlMs: number, floor: number): Promise<AcquireResult> {
    return this.call(() => this.inner.acquire(token, ttlMs, floor));
  }
  renew(token: string, ttlMs: number): Promise<boolean> {
    return this.call(() => this.inner.renew(token, ttlMs));
  }
  resign(token: string): Promise<void> {
    return this.call(() => this.inner.resign(token));
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Samples every contender's `isLeader()` every few ms: how many led at once, and who. */
const watch = (contenders: readonly Contender[]) => {
  let most = 0;
  const leaders: number[] = [];
  const sample = (): void => {
    const now = contenders.flatMap((c, i) => (c.isLeader() ? [i] : []));
    most = Math.max(most, now.length);
    if (now.length === 1 && leaders.at(-1) !== now[0]) leaders.push(now[0]);
  };
  const timer = setInterval(sample, 2);
  return {
    /** The most contenders that counted themselves leader at one instant. */
    most: () => (sample(), most),
    /** The leaders in the order they came. */
    leaders: () => leaders,
    stop: () => clearInterval(timer),
  };
};

const leaderOf = (contenders: readonly Contender[]): Contender | null => {
  const leading = contenders.filter((c) => c.isLeader());
  return leading.length === 1 ? leading[0] : null;
};

/**
 * What every LeaderLease adapter promises, with several contenders on one store: one leads;
 * a leader killed is replaced within the lease; epochs only grow; a leader cut off knows it
 * lost before anyone else can lead; with the store down nobody leads, and someone does again
 * once it is back.
 */
export function leaderLeaseContract(
  name: string,
  arena: () => Promise<LeaseArena>,
  timing: LeaseTiming,
): void {
  describe(`${name} (LeaderLease contract)`, () => {
    let made: LeaseArena;
    let started: Contender[] = [];
    let cuts: Partitionable[] = [];
    let changes: Array<Array<LeadershipChange>> = [];

    const contenders = async (n: number): Promise<Contender[]> => {
      const made_ = Array.from({ length: n }, () =>
        made.contender((inner) => {
          const store = new Partitionable(inner);
          cuts.push(store);
          return store;
        }, timing),
      );
      for (const c of made_) {
        const seen: LeadershipChange[] = [];
        changes.push(seen);
        c.onChange((change) => seen.push(change));
      }
      started.push(...made_);
      await Promise.all(made_.map((c) => c.start()));
      return made_;
    };

    beforeEach(async () => {
      made = await arena();
      started = [];
      cuts = [];
      changes = [];
    });
    afterEach(async () => {
      for (const c of cuts) c.cut = false;
      await Promise.all(started.map((c) => c.stop()));
      await made.dispose();
    });

    it('has one leader among several contenders, and keeps it while it renews', async () => {
      const all = await contenders(4);
      const watching = watch(all);
      try {
        const leader = await waitFor('a leader', () => leaderOf(all), timing.leaseMs);
        await sleep(2 * timing.leaseMs);
        expect(watching.most()).toBe(1);
        expect(leaderOf(all)).toBe(leader);
        expect(watching.leaders()).toHaveLength(1);
        expect(changes[all.indexOf(leader)]).toEqual([{ leader: true, epoch: leader.epoch() }]);
        expect(all.filter((c) => c !== leader).map((c) => c.epoch())).toEqual([null, null, null]);
      } finally {
        watching.stop();
      }
    });

    it('replaces a leader that stops renewing (killed) within the lease, in a higher epoch', async () => {
      const all = await contenders(3);
      const first = await waitFor('a leader', () => leaderOf(all), timing.leaseMs);
      const firstEpoch = first.epoch()!;
      const watching = watch(all);
      try {
        const killedAt = performance.now();
        first.abandon();
        const next = await waitFor(
          'another leader',
          () => leaderOf(all.filter((c) => c !== first)),
          2 * timing.leaseMs,
        );
        const took = performance.now() - killedAt;
        expect(took).toBeLessThanOrEqual(timing.leaseMs + timing.renewEveryMs);
        expect(next.epoch()).toBeGreaterThan(firstEpoch);
        expect(watching.most()).toBe(1);
      } finally {
        watching.stop();
      }
    });

    it('hands over at once when the leader stops, and every new term has a higher epoch', async () => {
      const all = await contenders(4);
      const epochs: number[] = [];
      let live = all;
      for (let round = 0; round < 3; round++) {
        const leader = await waitFor('a leader', () => leaderOf(live), timing.leaseMs);
        epochs.push(leader.epoch()!);
        const stoppedAt = performance.now();
        await leader.stop();
        expect(leader.isLeader()).toBe(false);
        expect(changes[all.indexOf(leader)].at(-1)).toEqual({
          leader: false,
          epoch: epochs.at(-1),
        });
        live = live.filter((c) => c !== leader);
        await waitFor('the next leader', () => leaderOf(live), timing.leaseMs);
        // Resigned: the next one need not wait for the lease to run out.
        expect(performance.now() - stoppedAt).toBeLessThan(timing.renewEveryMs + 150);
      }
      epochs.push(leaderOf(live)!.epoch()!);
      expect([...epochs].sort((a, b) => a - b)).toEqual(epochs);
      expect(new Set(epochs).size).toBe(epochs.length);
    });

    it('tells a leader cut off from the store that it lost, before another can lead', async () => {
      const all = await contenders(3);
      const first = await waitFor('a leader', () => leaderOf(all), timing.leaseMs);
      const firstEpoch = first.epoch()!;
      const watching = watch(all);
      try {
        const cutAt = performance.now();
        cuts[all.indexOf(first)].cut = true;
        await waitFor(
          'the cut-off leader to step down',
          () => (first.isLeader() ? null : true),
          timing.leaseMs,
        );
        const steppedDownAfter = performance.now() - cutAt;
        expect(steppedDownAfter).toBeLessThan(timing.leaseMs);
        await waitFor(
          'it to be told',
          () => (changes[all.indexOf(first)].length === 2 ? true : null),
          100,
        );
        expect(changes[all.indexOf(first)]).toEqual([
          { leader: true, epoch: firstEpoch },
          { leader: false, epoch: firstEpoch },
        ]);
        const next = await waitFor('a new leader', () => leaderOf(all), 2 * timing.leaseMs);
        expect(next).not.toBe(first);
        expect(next.epoch()).toBeGreaterThan(firstEpoch);
        // Never two at once: the old leader's deadline came before the lease could be taken.
        expect(watching.most()).toBe(1);
        expect(watching.leaders()).toEqual([all.indexOf(first), all.indexOf(next)]);
        // Back in reach, it follows: the new leader keeps the lease.
        cuts[all.indexOf(first)].cut = false;
        await sleep(timing.leaseMs);
        expect(leaderOf(all)).toBe(next);
        expect(watching.most()).toBe(1);
      } finally {
        watching.stop();
      }
    });

    it('has nobody lead while the store is down, and a leader again, in a higher epoch, once it is back', async () => {
      const all = await contenders(3);
      const first = await waitFor('a leader', () => leaderOf(all), timing.leaseMs);
      const firstEpoch = first.epoch()!;
      const downAt = performance.now();
      await made.outage();
      await waitFor(
        'the leader to step down',
        () => (first.isLeader() ? null : true),
        timing.leaseMs,
      );
      expect(performance.now() - downAt).toBeLessThan(timing.leaseMs);
      const watching = watch(all);
      try {
        await sleep(timing.leaseMs);
        expect(watching.most()).toBe(0);
        expect(changes[all.indexOf(first)].at(-1)).toEqual({ leader: false, epoch: firstEpoch });
        const upAt = performance.now();
        await made.recover();
        const next = await waitFor('a leader again', () => leaderOf(all), 2 * timing.leaseMs);
        expect(performance.now() - upAt).toBeLessThan(timing.leaseMs);
        // The store lost its counter: the epoch still grows (contenders remember the highest).
        expect(next.epoch()).toBeGreaterThan(firstEpoch);
        expect(watching.most()).toBe(1);
      } finally {
        watching.stop();
      }
    });
  });
}
