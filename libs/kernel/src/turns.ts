/**
 * Work queued per key, one task at a time for each key, in the order given; keys do not wait
 * for each other. A task that fails does not stop the next. A key with nothing queued runs its
 * task at once (no extra tick), and is forgotten once its last task settles.
 */
export class Turns {
  private readonly tails = new Map<string, Promise<void>>();

  /** Whether a task for `key` is running or waiting. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    const run = previous === undefined ? task() : previous.then(task);
    // Forgotten as `run` settles, before whoever awaits it goes on (its reaction comes first):
    // a caller that finds the key idle right after its task is done does not see it busy.
    const forget = (): void => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    const tail: Promise<void> = run.then(forget, forget);
    this.tails.set(key, tail);
    return run;
  }
}
