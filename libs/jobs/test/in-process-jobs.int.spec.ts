import { createDelayedJobs } from '../src';
import { InProcessJobs } from '../src/in-process-jobs';
import { delayedJobsContract, recorder, sleep } from './delayed-jobs.contract';

delayedJobsContract('InProcessJobs', async () => {
  const jobs = new InProcessJobs();
  return { jobs, cleanup: () => jobs.close() };
});

describe('InProcessJobs', () => {
  it('is made by createDelayedJobs to log a handler that throws, once per queue per window', async () => {
    const lines: Array<{ message: string; error: unknown }> = [];
    const jobs = createDelayedJobs({ log: (message, error) => lines.push({ message, error }) });
    const { fires, handler } = recorder((_p, info) => {
      if (info.attempt < 3) throw new Error(`refused try ${info.attempt}`);
    });
    jobs.register('hooks', handler, { attempts: 5, backoffMs: 5 });
    await jobs.start();
    await jobs.schedule('hooks', 'n1', Date.now(), null);
    for (let i = 0; i < 200 && fires.length < 3; i++) await sleep(10);
    expect(fires).toHaveLength(3);
    expect(lines).toHaveLength(1);
    expect(lines[0].message).toContain('a hooks job failed (job n1, attempt 1)');
    expect((lines[0].error as Error).message).toBe('refused try 1');
    await jobs.close();
  });

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
