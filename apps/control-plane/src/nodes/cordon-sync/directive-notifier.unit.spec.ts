import { asLogPosition } from '@fleet/eventstore/port';
import { DirectiveNotifier } from './directive-notifier';

describe('directive notifier', () => {
  it('wakes every waiter of the changed cluster and none of another', async () => {
    const n = new DirectiveNotifier();
    const a1 = n.wait('c1', asLogPosition(5), 10_000);
    const a2 = n.wait('c1', asLogPosition(7), 10_000);
    const b = n.wait('c2', asLogPosition(5), 50);
    n.wake('c1');
    await expect(a1.released).resolves.toBe('changed');
    await expect(a2.released).resolves.toBe('changed');
    await expect(b.released).resolves.toBe('timeout');
    expect(n.size).toBe(0);
  });

  it('times a waiter out, and answers at once when there is no time left', async () => {
    const n = new DirectiveNotifier();
    const started = Date.now();
    await expect(n.wait('c1', asLogPosition(0), 30).released).resolves.toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    await expect(n.wait('c1', asLogPosition(0), 0).released).resolves.toBe('timeout');
    expect(n.size).toBe(0);
  });

  it('releases a waiter once: a cancelled waiter is not woken later', async () => {
    const n = new DirectiveNotifier();
    const w = n.wait('c1', asLogPosition(0), 10_000);
    w.cancel();
    n.wake('c1');
    await expect(w.released).resolves.toBe('timeout');
    expect(n.size).toBe(0);
  });

  it('knows the oldest cursor any waiter reads from', () => {
    const n = new DirectiveNotifier();
    expect(n.oldestSince()).toBeNull();
    const a = n.wait('c1', asLogPosition(9), 10_000);
    const b = n.wait('c2', asLogPosition(4), 10_000);
    expect(n.oldestSince()).toBe(4);
    a.cancel();
    b.cancel();
  });

  describe('when the app shuts down', () => {
    it('releases every waiter and holds no new one', async () => {
      const n = new DirectiveNotifier();
      const w = n.wait('c1', asLogPosition(0), 60_000);
      n.closeAll();
      await expect(w.released).resolves.toBe('closed');
      await expect(n.wait('c1', asLogPosition(0), 60_000).released).resolves.toBe('closed');
      expect(n.size).toBe(0);
    });
  });
});
