import { KeyLocks } from './key-locks';

const flush = () => new Promise((r) => setImmediate(r));

describe('KeyLocks', () => {
  describe('when no key asked for is held', () => {
    it('takes them all at once, without waiting', () => {
      const locks = new KeyLocks();
      expect(locks.tryTake(['a', 'b'])).toBe(true);
      expect(locks.busy('a') && locks.busy('b')).toBe(true);
    });

    it('takes a key listed twice', async () => {
      const locks = new KeyLocks();
      await locks.take(['a', 'a']);
      locks.release(['a', 'a']);
      expect(locks.busy('a')).toBe(false);
    });
  });

  describe('when one key asked for is held', () => {
    it('takes none of them, and waits for its release to take them all', async () => {
      const locks = new KeyLocks();
      locks.tryTake(['b']);
      expect(locks.tryTake(['a', 'b'])).toBe(false);
      expect(locks.busy('a')).toBe(false);
      let taken = false;
      const waiting = locks.take(['a', 'b']).then(() => (taken = true));
      await flush();
      expect(taken).toBe(false);
      locks.release(['b']);
      await waiting;
      expect(locks.busy('a') && locks.busy('b')).toBe(true);
    });

    it('leaves keys nobody holds to other callers meanwhile', async () => {
      const locks = new KeyLocks();
      locks.tryTake(['b']);
      const waiting = locks.take(['a', 'b']);
      expect(locks.tryTake(['a'])).toBe(true);
      locks.release(['b']);
      await flush();
      locks.release(['a']);
      await waiting;
      expect(locks.busy('a') && locks.busy('b')).toBe(true);
    });
  });

  describe('when callers share several keys in different orders', () => {
    it('runs each in turn, never two holding one key, without a deadlock', async () => {
      const locks = new KeyLocks();
      const holding = new Set<string>();
      const overlaps: string[] = [];
      const work = async (keys: string[]): Promise<void> => {
        await locks.take(keys);
        try {
          for (const k of keys) if (holding.has(k)) overlaps.push(k);
          for (const k of keys) holding.add(k);
          await flush();
          for (const k of keys) holding.delete(k);
        } finally {
          locks.release(keys);
        }
      };
      await Promise.all([
        work(['a', 'b', 'c']),
        work(['c', 'b', 'a']),
        work(['b', 'd']),
        work(['d', 'a']),
        work(['e']),
      ]);
      expect(overlaps).toEqual([]);
      for (const k of ['a', 'b', 'c', 'd', 'e']) expect(locks.busy(k)).toBe(false);
    });
  });
});
