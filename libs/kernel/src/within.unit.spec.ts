import { settleWithin } from './within';

describe('settleWithin', () => {
  it('says how a promise settled in time', async () => {
    await expect(settleWithin(Promise.resolve(7), 1000)).resolves.toEqual({
      status: 'fulfilled',
      value: 7,
    });
    const error = new Error('no');
    await expect(settleWithin(Promise.reject(error), 1000)).resolves.toEqual({
      status: 'rejected',
      reason: error,
    });
  });

  it('says late once the wait runs out, and a rejection after it is not unhandled', async () => {
    let fail: (e: Error) => void = () => undefined;
    const slow = new Promise<void>((_, reject) => (fail = reject));
    const started = Date.now();
    await expect(settleWithin(slow, 50)).resolves.toEqual({ status: 'late' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      fail(new Error('gave up'));
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});
