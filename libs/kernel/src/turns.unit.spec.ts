import { Turns } from './turns';

const deferred = () => {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};
const flush = () => new Promise((r) => setImmediate(r));

describe('Turns', () => {
  it('runs the tasks of one key one at a time, in order, and keys apart at once', async () => {
    const turns = new Turns();
    const log: string[] = [];
    const first = deferred();
    const a1 = turns.run('a', async () => {
      log.push('a1 start');
      await first.promise;
      log.push('a1 end');
    });
    const a2 = turns.run('a', async () => void log.push('a2'));
    const b1 = turns.run('b', async () => void log.push('b1'));
    await flush();
    expect(log).toEqual(['a1 start', 'b1']);
    expect(turns.busy('a')).toBe(true);
    first.resolve();
    await Promise.all([a1, a2, b1]);
    expect(log).toEqual(['a1 start', 'b1', 'a1 end', 'a2']);
  });

  it('starts a task of an idle key at once, and goes on after a failure', async () => {
    const turns = new Turns();
    let started = false;
    const failed = turns.run('k', () => {
      started = true;
      return Promise.reject(new Error('refused'));
    });
    expect(started).toBe(true);
    const next = turns.run('k', async () => 'next');
    await expect(failed).rejects.toThrow('refused');
    await expect(next).resolves.toBe('next');
  });

  it('forgets a key once its last task settled', async () => {
    const turns = new Turns();
    await turns.run('k', async () => undefined);
    await flush();
    expect(turns.busy('k')).toBe(false);
  });

  it('shows the key idle to the caller of its last task as soon as it goes on, failed or not', async () => {
    const turns = new Turns();
    await turns.run('k', async () => undefined);
    expect(turns.busy('k')).toBe(false);
    await expect(turns.run('k', () => Promise.reject(new Error('refused')))).rejects.toThrow();
    expect(turns.busy('k')).toBe(false);
  });

  it('keeps the key busy for a task still waiting behind the one that settled', async () => {
    const turns = new Turns();
    const first = turns.run('k', async () => undefined);
    const second = turns.run('k', async () => undefined);
    await first;
    expect(turns.busy('k')).toBe(true);
    await second;
    expect(turns.busy('k')).toBe(false);
  });
});
