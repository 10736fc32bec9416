/**
 * Exclusive holds on sets of keys, taken all at once. Taking free keys is synchronous and
 * allocates nothing beyond the map entries (a hot path takes them on every call); only a
 * caller that finds one of its keys held gets a promise. A waiter holds nothing while it
 * waits, and takes all its keys in one synchronous step once they are free, so two callers
 * sharing several keys in different orders cannot deadlock.
 */
export class KeyLocks {
  /** Held keys; the wake-ups of the callers waiting for one, once some caller waits. */
  private readonly held = new Map<string, Array<() => void> | null>();

  /** Takes every key if none is held (true), else takes none (false). */
  tryTake(keys: readonly string[]): boolean {
    for (let i = 0; i < keys.length; i++) if (this.held.has(keys[i])) return false;
    for (let i = 0; i < keys.length; i++) this.held.set(keys[i], null);
    return true;
  }

  /** Takes every key, waiting until none is held. */
  async take(keys: readonly string[]): Promise<void> {
    // Another caller may take a key between a release and this waiter's turn: look again.
    while (!this.tryTake(keys)) await this.released(keys);
  }

  /** Gives the keys back, waking whoever waits for one of them. */
  release(keys: readonly string[]): void {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (!this.held.has(key)) continue; // listed twice: released already
      const waiters = this.held.get(key);
      this.held.delete(key);
      if (waiters) for (const wake of waiters) wake();
    }
  }

  /** Whether `key` is held. */
  busy(key: string): boolean {
    return this.held.has(key);
  }

  /** Settles once every key of `keys` held now has been released. */
  private released(keys: readonly string[]): Promise<void> {
    return new Promise((resolve) => {
      let pending = 1;
      const done = (): void => {
        if (--pending === 0) resolve();
      };
      for (const key of keys) {
        if (!this.held.has(key)) continue;
        let waiters = this.held.get(key);
        if (!waiters) this.held.set(key, (waiters = []));
        pending++;
        waiters.push(done);
      }
      done();
    });
  }
}
