import { InProcessJobs } from '../src/in-process-jobs';
import { delayedJobsContract, recorder, sleep } from './delayed-jobs.contract';

delayedJobsContract('InProcessJobs', async () => {
  const jobs = new InProcessJobs();
  return { jobs, cleanup: () => jobs.close() };
});

describe('InProcessJobs', () => {
  const DAY = 24 * 60 * 60 * 1000;

  describe('when a job is due beyond what setTimeout can hold (~24.8 days)', () => {
    it('does not fire at once', async () => {
      const jobs = new InProcessJobs();
      const { fires, handler } = recorder();
      jobs.register('q', handler);
      await jobs.start();
      const runAt = Date.now() + 30 * DAY;
      await jobs.schedule('q', 'far', runAt, null);

      await sleep(100);
      expect(fires).toHaveLength(0);
      expect(await jobs.scheduledAt('q', 'far')).toBe(runAt);
      await jobs.close();
    });

    it('fires once its time has come', async () => {
      jest.useFakeTimers({ now: 1_700_000_000_000 });
      try {
        const jobs = new InProcessJobs();
        const { fires, handler } = recorder();
        jobs.register('q', handler);
        await jobs.start();
        const runAt = Date.now() + 60 * DAY;
        await jobs.schedule('q', 'far', runAt, null);

        await jest.advanceTimersByTimeAsync(60 * DAY - 1000);
        expect(fires).toHaveLength(0);
        await jest.advanceTimersByTimeAsync(1000);
        expect(fires).toHaveLength(1);
        expect(fires[0].at).toBe(runAt);
        await jobs.close();
      } finally {
        jest.useRealTimers();
      }
    });
  });

  it('hands each handler its own copy of the payload', async () => {
    const jobs = new InProcessJobs();
    const { fires, handler } = recorder();
    jobs.register('q', handler);
    await jobs.start();
    const payload = { list: [1] };
    await jobs.schedule('q', 'j', Date.now(), payload);
    payload.list.push(2);

    await sleep(50);
    expect(fires[0].payload).toEqual({ list: [1] });
    await jobs.close();
  });

  it('does not keep the process alive with its timers', async () => {
    const jobs = new InProcessJobs();
    jobs.register('q', recorder().handler);
    await jobs.start();
    const timers = (): number =>
      process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    await jobs.schedule('q', 'j', Date.now() + 60_000, null);

    // Unref'd timers are not active resources.
    expect(timers()).toBe(before);
    await jobs.close();
  });
});
