import { DelayedJobs, JobHandler, JobInfo } from '../src/port';

export type MadeJobs = {
  readonly jobs: DelayedJobs;
  /** Closes whatever instance is current and removes what the run left behind. */
  cleanup(): Promise<void>;
  /** Closes the instance and opens a new one on the same storage, for adapters that persist. */
  restart?(): Promise<DelayedJobs>;
};

export type Fire = { readonly payload: unknown; readonly info: JobInfo; readonly at: number };

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 4000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** A handler that records each call, then does what `then` says (throw, block, reschedule). */
export function recorder(
  then?: (payload: unknown, info: JobInfo, call: number) => Promise<void> | void,
): {
  readonly fires: Fire[];
  readonly handler: JobHandler<unknown>;
} {
  const fires: Fire[] = [];
  const handler: JobHandler<unknown> = async (payload, info) => {
    fires.push({ payload, info, at: Date.now() });
    await then?.(payload, info, fires.length);
  };
  return { fires, handler };
}

/** A promise the test resolves by hand, to hold a handler in the middle of its run. */
export function gate(): { readonly opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * What every DelayedJobs adapter promises. Delays are short (100-800 ms) and waits bounded,
 * so the suite runs in seconds against the real backend.
 */
export function delayedJobsContract(name: string, make: () => Promise<MadeJobs>): void {
  describe(`${name} (DelayedJobs contract)`, () => {
    let made: MadeJobs;
    let jobs: DelayedJobs;
    const q = 'node-offline';

    beforeEach(async () => {
      made = await make();
      jobs = made.jobs;
    });

    afterEach(async () => {
      await made.cleanup();
    });

    describe('when a job is scheduled', () => {
      it('fires once, never before its time, with its payload and job info', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.start();
        const payload = {
          nodeId: 'node-1',
          since: 1700000000000,
          tags: ['gpu', 'a100'],
          nested: { ok: true },
        };
        const runAt = Date.now() + 300;
        await jobs.schedule(q, 'node-1', runAt, payload);

        await waitFor('the job to fire', () => fires.length === 1);
        expect(fires[0].at).toBeGreaterThanOrEqual(runAt);
        expect(fires[0].payload).toEqual(payload);
        expect(fires[0].info).toEqual({ queue: q, jobId: 'node-1', attempt: 1, runAt });
        await sleep(300);
        expect(fires).toHaveLength(1);
      });

      it('runs a job due now or in the past as soon as possible', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.start();
        await jobs.schedule(q, 'late', Date.now() - 60_000, 'late');

        await waitFor('the overdue job to fire', () => fires.length === 1, 1000);
      });

      it('reports its run time while pending, and null before and after', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.start();
        expect(await jobs.scheduledAt(q, 'node-1')).toBeNull();
        const runAt = Date.now() + 300;
        await jobs.schedule(q, 'node-1', runAt, null);

        expect(await jobs.scheduledAt(q, 'node-1')).toBe(runAt);
        await waitFor('the job to fire', () => fires.length === 1);
        await waitFor(
          'the job to be gone',
          async () => (await jobs.scheduledAt(q, 'node-1')) === null,
          1000,
        );
      });

      it('counts delayed jobs', async () => {
        jobs.register(q, recorder().handler);
        await jobs.start();
        await jobs.schedule(q, 'node-1', Date.now() + 5_000, null);
        await jobs.schedule(q, 'node-2', Date.now() + 5_000, null);

        expect(await jobs.counts(q)).toEqual({ waiting: 0, delayed: 2, running: 0, failed: 0 });
      });

      it('fires jobs scheduled before start only once started', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        const runAt = Date.now() + 100;
        await jobs.schedule(q, 'node-1', runAt, 'early');

        await sleep(400);
        expect(fires).toHaveLength(0);
        await jobs.start();
        await waitFor('the job to fire after start', () => fires.length === 1);
        expect(fires[0].payload).toBe('early');
      });
    });

    describe('listing live jobs', () => {
      it('lists delayed, due and running jobs by id and counts the running ones', async () => {
        const running = gate();
        const release = gate();
        const { fires, handler } = recorder(async (_payload, info) => {
          if (info.jobId !== 'busy') return;
          running.open();
          await release.opened;
        });
        jobs.register(q, handler);
        await jobs.start();
        await jobs.schedule(q, 'busy', Date.now(), null);
        await running.opened;
        await jobs.schedule(q, 'cluster:c1/node 1', Date.now() + 5_000, null);
        await jobs.schedule(q, 'done', Date.now(), null);
        await waitFor('the quick job to fire', () => fires.some((f) => f.info.jobId === 'done'));
        await waitFor(
          'the quick job to be gone',
          async () => !(await jobs.liveJobIds(q)).has('done'),
          1000,
        );

        expect(await jobs.liveJobIds(q)).toEqual(new Set(['busy', 'cluster:c1/node 1']));
        expect(await jobs.counts(q)).toEqual({ waiting: 0, delayed: 1, running: 1, failed: 0 });
        release.open();
        await waitFor(
          'the running job to be gone',
          async () => !(await jobs.liveJobIds(q)).has('busy'),
          1000,
        );
        await jobs.cancel(q, 'cluster:c1/node 1');
        expect(await jobs.liveJobIds(q)).toEqual(new Set());
        expect(await jobs.liveJobIds('never-used')).toEqual(new Set());
      });
    });

    describe('when a job is scheduled again under the same id', () => {
      it('moves it to a later time', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.start();
        const earlier = Date.now() + 150;
        const later = Date.now() + 600;
        await jobs.schedule(q, 'node-1', earlier, 'earlier');
        await jobs.schedule(q, 'node-1', later, 'later');

        expect(await jobs.scheduledAt(q, 'node-1')).toBe(later);
        await sleep(400);
        expect(fires).toHaveLength(0);
        await waitFor('the moved job to fire', () => fires.length === 1);
        expect(fires[0].at).toBeGreaterThanOrEqual(later);
        expect(fires[0].payload).toBe('later');
        await sleep(300);
        expect(fires).toHaveLength(1);
      });

      it('moves it to an earlier time', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.start();
        const later = Date.now() + 800;
        const earlier = Date.now() + 200;
        await jobs.schedule(q, 'node-1', later, 'later');
        await jobs.schedule(q, 'node-1', earlier, 'earlier');

        await waitFor('the moved job to fire', () => fires.length === 1);
        expect(fires[0].at).toBeGreaterThanOrEqual(earlier);
        expect(fires[0].at).toBeLessThan(later);
        expect(fires[0].payload).toBe('earlier');
        await sleep(later - Date.now() + 300);
        expect(fires).toHaveLength(1);
      });

      it('fires once when the same id and time are scheduled twice', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.start();
        const runAt = Date.now() + 200;
        await jobs.schedule(q, 'node-1', runAt, 'x');
        await jobs.schedule(q, 'node-1', runAt, 'x');

        await waitFor('the job to fire', () => fires.length === 1);
        await sleep(400);
        expect(fires).toHaveLength(1);
      });

      it('does not lose a reschedule made while the job is running', async () => {
        const running = gate();
        const release = gate();
        const { fires, handler } = recorder(async (_payload, _info, call) => {
          if (call === 1) {
            running.open();
            await release.opened;
          }
        });
        jobs.register(q, handler);
        await jobs.start();
        await jobs.schedule(q, 'node-1', Date.now(), 'first');
        await running.opened;

        const again = Date.now() + 300;
        await jobs.schedule(q, 'node-1', again, 'second');
        expect(await jobs.scheduledAt(q, 'node-1')).toBe(again);
        await sleep(100);
        release.open();

        await waitFor('the rescheduled job to fire', () => fires.length === 2);
        expect(fires[1].payload).toBe('second');
        expect(fires[1].at).toBeGreaterThanOrEqual(again);
        expect(fires[1].info.attempt).toBe(1);
        await sleep(300);
        expect(fires).toHaveLength(2);
      });

      it('moves a run that is due and has not started yet', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.schedule(q, 'node-1', Date.now() - 1000, 'due');
        const later = Date.now() + 300;
        await jobs.schedule(q, 'node-1', later, 'later');
        expect(await jobs.scheduledAt(q, 'node-1')).toBe(later);
        await jobs.start();

        await waitFor('the moved job to fire', () => fires.length === 1);
        expect(fires[0].payload).toBe('later');
        expect(fires[0].at).toBeGreaterThanOrEqual(later);
        await sleep(300);
        expect(fires).toHaveLength(1);
      });

      it('never overlaps runs of one id: one due while the last runs starts when it ends', async () => {
        const running = gate();
        const release = gate();
        let releasedAt = 0;
        const { fires, handler } = recorder(async (_payload, _info, call) => {
          if (call === 1) {
            running.open();
            await release.opened;
          }
        });
        jobs.register(q, handler);
        await jobs.start();
        await jobs.schedule(q, 'node-1', Date.now(), 'first');
        await running.opened;
        await jobs.schedule(q, 'node-1', Date.now(), 'second');

        await sleep(300);
        expect(fires).toHaveLength(1);
        releasedAt = Date.now();
        release.open();
        await waitFor('the second run', () => fires.length === 2);
        expect(fires[1].payload).toBe('second');
        expect(fires[1].at).toBeGreaterThanOrEqual(releasedAt);
      });

      it('keeps the last of several schedules made while the job runs, and runs it once', async () => {
        const running = gate();
        const release = gate();
        const { fires, handler } = recorder(async (_payload, _info, call) => {
          if (call === 1) {
            running.open();
            await release.opened;
          }
        });
        jobs.register(q, handler);
        await jobs.start();
        await jobs.schedule(q, 'node-1', Date.now(), 'first');
        await running.opened;
        await jobs.schedule(q, 'node-1', Date.now() + 100, 'a');
        const last = Date.now() + 150;
        await jobs.schedule(q, 'node-1', last, 'b');
        expect(await jobs.scheduledAt(q, 'node-1')).toBe(last);
        release.open();

        await waitFor('the next run', () => fires.length === 2);
        expect(fires[1].payload).toBe('b');
        expect(fires[1].at).toBeGreaterThanOrEqual(last);
        await sleep(400);
        expect(fires).toHaveLength(2);
      });

      it("lets a schedule made while a failing run runs replace that run's retry", async () => {
        const { fires, handler } = recorder(async (payload, info) => {
          if (payload !== 'first') return;
          await jobs.schedule(info.queue, info.jobId, Date.now() + 100, 'instead');
          throw new Error('failed after rescheduling');
        });
        jobs.register(q, handler, { attempts: 3, backoffMs: 50 });
        await jobs.start();
        await jobs.schedule(q, 'node-1', Date.now(), 'first');

        await waitFor('the new run', () => fires.length === 2);
        expect(fires.map((f) => [f.payload, f.info.attempt])).toEqual([
          ['first', 1],
          ['instead', 1],
        ]);
        await sleep(400);
        expect(fires).toHaveLength(2);
        expect((await jobs.counts(q)).failed).toBe(0);
      });

      it('drops a schedule cancelled in the same turn', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.start();
        const scheduled = jobs.schedule(q, 'node-1', Date.now() + 100, null);
        const cancelled = jobs.cancel(q, 'node-1');
        await Promise.all([scheduled, cancelled]);

        expect(await jobs.scheduledAt(q, 'node-1')).toBeNull();
        await sleep(300);
        expect(fires).toHaveLength(0);
      });

      it('lets a handler reschedule its own job, as a ticker does', async () => {
        const { fires, handler } = recorder(async (payload, info) => {
          const tick = payload as number;
          if (tick < 3) await jobs.schedule(info.queue, info.jobId, Date.now() + 100, tick + 1);
        });
        jobs.register(q, handler);
        await jobs.start();
        await jobs.schedule(q, 'ticker', Date.now(), 1);

        await waitFor('three ticks', () => fires.length === 3);
        expect(fires.map((f) => f.payload)).toEqual([1, 2, 3]);
        await sleep(300);
        expect(fires).toHaveLength(3);
      });
    });

    describe('when a job is cancelled', () => {
      it('does not fire', async () => {
        const { fires, handler } = recorder();
        jobs.register(q, handler);
        await jobs.start();
        await jobs.schedule(q, 'node-1', Date.now() + 200, null);
        await jobs.cancel(q, 'node-1');

        expect(await jobs.scheduledAt(q, 'node-1')).toBeNull();
        expect((await jobs.counts(q)).delayed).toBe(0);
        await sleep(500);
        expect(fires).toHaveLength(0);
      });

      it('is a no-op for an unknown job', async () => {
        await expect(jobs.cancel(q, 'nothing')).resolves.toBeUndefined();
      });
    });

    describe('when a handler throws', () => {
      it('is retried with a growing attempt number until it succeeds', async () => {
        const { fires, handler } = recorder((_p, info) => {
          if (info.attempt < 3) throw new Error(`flaky ${info.attempt}`);
        });
        jobs.register(q, handler, { attempts: 5, backoffMs: 50 });
        await jobs.start();
        const runAt = Date.now() + 100;
        await jobs.schedule(q, 'node-1', runAt, 'p');

        await waitFor('the third try', () => fires.length === 3);
        expect(fires.map((f) => f.info.attempt)).toEqual([1, 2, 3]);
        expect(fires.map((f) => f.info.runAt)).toEqual([runAt, runAt, runAt]);
        expect(fires.every((f) => f.payload === 'p')).toBe(true);
        // Backoff: 50 ms, then 100 ms.
        expect(fires[1].at - fires[0].at).toBeGreaterThanOrEqual(45);
        expect(fires[2].at - fires[1].at).toBeGreaterThanOrEqual(95);
        await sleep(300);
        expect(fires).toHaveLength(3);
        expect(await jobs.counts(q)).toEqual({ waiting: 0, delayed: 0, running: 0, failed: 0 });
      });

      it('counts a job that exhausted its attempts as failed', async () => {
        const { fires, handler } = recorder(() => {
          throw new Error('always');
        });
        jobs.register(q, handler, { attempts: 2, backoffMs: 30 });
        await jobs.start();
        await jobs.schedule(q, 'node-1', Date.now() + 100, null);

        await waitFor('the job to fail', async () => (await jobs.counts(q)).failed === 1);
        expect(fires.map((f) => f.info.attempt)).toEqual([1, 2]);
        expect(await jobs.scheduledAt(q, 'node-1')).toBeNull();
        await sleep(200);
        expect(fires).toHaveLength(2);
      });

      it('can schedule a failed job again', async () => {
        const { fires, handler } = recorder((_p, info) => {
          if (fires.length === 1) throw new Error(`first ${info.attempt}`);
        });
        jobs.register(q, handler, { attempts: 1 });
        await jobs.start();
        await jobs.schedule(q, 'node-1', Date.now(), 'one');
        await waitFor('the job to fail', async () => (await jobs.counts(q)).failed === 1);

        await jobs.schedule(q, 'node-1', Date.now() + 100, 'two');
        await waitFor('the job to fire again', () => fires.length === 2);
        expect(fires[1].payload).toBe('two');
      });
    });

    describe('with two queues', () => {
      it('keeps their jobs apart, even under the same id', async () => {
        const offline = recorder();
        const drain = recorder();
        expect(jobs.registeredQueues()).toEqual([]);
        jobs.register('node-offline', offline.handler);
        jobs.register('drain', drain.handler);
        // Scheduling on a queue registers nothing: only handlers do.
        await jobs.schedule('unhandled', 'x', Date.now() + 60_000, null);
        expect(jobs.registeredQueues()).toEqual(['node-offline', 'drain']);
        await jobs.cancel('unhandled', 'x');
        await jobs.start();
        const runAt = Date.now() + 200;
        await jobs.schedule('node-offline', 'node-1', runAt, 'offline');
        await jobs.schedule('drain', 'node-1', runAt, 'drain');
        await jobs.cancel('drain', 'other');

        await waitFor('both jobs', () => offline.fires.length === 1 && drain.fires.length === 1);
        expect(offline.fires[0].payload).toBe('offline');
        expect(offline.fires[0].info.queue).toBe('node-offline');
        expect(drain.fires[0].payload).toBe('drain');
        expect(drain.fires[0].info.queue).toBe('drain');
        await sleep(200);
        expect(offline.fires).toHaveLength(1);
        expect(drain.fires).toHaveLength(1);
      });
    });

    it('runs at most `concurrency` handlers of a queue at once', async () => {
      let active = 0;
      let most = 0;
      const { fires, handler } = recorder(async () => {
        active++;
        most = Math.max(most, active);
        await sleep(150);
        active--;
      });
      jobs.register(q, handler, { concurrency: 2 });
      await jobs.start();
      const runAt = Date.now() + 100;
      for (let i = 0; i < 5; i++) await jobs.schedule(q, `node-${i}`, runAt, i);

      await waitFor('all five jobs', () => fires.length === 5);
      await waitFor('the last handler to end', () => active === 0);
      expect(most).toBe(2);
    });

    it('shares `concurrency` among its fetchers, firing each job once', async () => {
      let active = 0;
      let most = 0;
      const { fires, handler } = recorder(async () => {
        active++;
        most = Math.max(most, active);
        await sleep(100);
        active--;
      });
      jobs.register(q, handler, { concurrency: 3, fetchers: 2 });
      await jobs.start();
      const runAt = Date.now() + 100;
      for (let i = 0; i < 8; i++) await jobs.schedule(q, `node-${i}`, runAt, i);

      await waitFor('all eight jobs', () => fires.length === 8);
      await waitFor('the last handler to end', () => active === 0);
      expect(most).toBeLessThanOrEqual(3);
      expect(fires.map((f) => f.payload).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      await sleep(200);
      expect(fires).toHaveLength(8);
    });

    describe('periodic work (`every`)', () => {
      it('runs about once a period, the first one period after start', async () => {
        const runs: Array<{ at: number; runAt: number }> = [];
        jobs.every('tick', 200, async ({ runAt }) => void runs.push({ at: Date.now(), runAt }));
        const started = Date.now();
        await jobs.start();

        await sleep(1100);
        expect(runs.length).toBeGreaterThanOrEqual(3);
        expect(runs.length).toBeLessThanOrEqual(6);
        expect(runs[0].at - started).toBeGreaterThanOrEqual(180);
        // Each period once: no two runs for the same time.
        expect(new Set(runs.map((r) => r.runAt)).size).toBe(runs.length);
      });

      it('skips a period while its last run goes on, and goes on after a run that throws', async () => {
        let active = 0;
        let most = 0;
        let runs = 0;
        jobs.every('slow', 100, async () => {
          runs++;
          active++;
          most = Math.max(most, active);
          await sleep(250);
          active--;
          throw new Error('a failing period');
        });
        await jobs.start();

        await waitFor('three runs', () => runs >= 3, 3000);
        expect(most).toBe(1);
      });

      it('stops on close', async () => {
        let runs = 0;
        jobs.every('tick', 100, async () => void runs++);
        await jobs.start();
        await waitFor('a run', () => runs > 0);

        await jobs.close();
        const after = runs;
        await sleep(400);
        expect(runs).toBe(after);
      });

      it('refuses a second `every` under one name', () => {
        jobs.every('tick', 100, async () => undefined);
        expect(() => jobs.every('tick', 200, async () => undefined)).toThrow(/already/);
      });
    });

    it('waits for running handlers on close', async () => {
      const running = gate();
      let finished = false;
      jobs.register(
        q,
        recorder(async () => {
          running.open();
          await sleep(200);
          finished = true;
        }).handler,
      );
      await jobs.start();
      await jobs.schedule(q, 'node-1', Date.now(), null);
      await running.opened;

      await jobs.close();
      expect(finished).toBe(true);
    });

    it('answers ping', async () => {
      await expect(jobs.ping()).resolves.toBeUndefined();
    });

    it('keeps a pending job across a restart, when the adapter persists', async () => {
      if (!made.restart) return;
      jobs.register(q, recorder().handler);
      await jobs.start();
      const runAt = Date.now() + 500;
      await jobs.schedule(q, 'node-1', runAt, { survives: true });

      const next = await made.restart();
      const { fires, handler } = recorder();
      next.register(q, handler);
      await next.start();
      await waitFor('the job to fire in the new instance', () => fires.length === 1);
      expect(fires[0].payload).toEqual({ survives: true });
      expect(fires[0].at).toBeGreaterThanOrEqual(runAt);
    });
  });
}
