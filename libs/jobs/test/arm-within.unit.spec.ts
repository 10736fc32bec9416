import { armWithin } from '../src/port';

describe('arming the job of a recorded command', () => {
  it('says armed when the queue answers in time', async () => {
    const misses: unknown[] = [];
    await expect(armWithin(Promise.resolve(), 1000, (e) => misses.push(e))).resolves.toBe(true);
    expect(misses).toEqual([]);
  });

  it('answers after the wait when the queue does not (Redis down: its client holds the command)', async () => {
    const misses: unknown[] = [];
    const started = Date.now();
    const never = new Promise<void>(() => undefined);
    await expect(armWithin(never, 100, (e) => misses.push(e))).resolves.toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(misses).toHaveLength(1);
  });

  it('reports a failed arming instead of failing the command that was recorded', async () => {
    const misses: unknown[] = [];
    const down = Promise.reject(new Error('Connection is closed.'));
    await expect(armWithin(down, 1000, (e) => misses.push(e))).resolves.toBe(false);
    expect(String(misses[0])).toContain('Connection is closed.');
  });

  it('handles an arming that fails after the wait (no unhandled rejection)', async () => {
    const misses: unknown[] = [];
    let fail: (e: Error) => void = () => undefined;
    const slow = new Promise<void>((_, reject) => (fail = reject));
    await expect(armWithin(slow, 20, (e) => misses.push(e))).resolves.toBe(false);
    fail(new Error('gave up'));
    await new Promise((r) => setImmediate(r));
    expect(misses.map(String)).toEqual([
      'Error: the job queue did not answer within 20 ms',
      'Error: gave up',
    ]);
  });
});
