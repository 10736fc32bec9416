import { randomUUID } from 'node:crypto';
import { Worker as Thread } from 'node:worker_threads';
import IORedis from 'ioredis';
import { BullmqJobs, BullmqJobsOptions } from '../src/bullmq-jobs';
import { InProcessJobs } from '../src/in-process-jobs';
import { createDelayedJobs } from '../src';
import { delayedJobsContract, gate, recorder, sleep, waitFor } from './delayed-jobs.contract';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Removes every key under the prefix, so runs leave Redis as they found it. */
async function deleteKeys(prefix: string): Promise<void> {
  const redis = new IORedis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}

const newPrefix = (): string => `fleet-test-${randomUUID().slice(0, 8)}`;

delayedJobsContract('BullmqJobs', async () => {
  const prefix = newPrefix();
  let jobs = new BullmqJobs({ redisUrl, prefix });
  return {
    jobs,
    async restart() {
      await jobs.close();
      jobs = new BullmqJobs({ redisUrl, prefix });
      return jobs;
    },
    async cleanup() {
      await jobs.close();
      await deleteKeys(prefix);
    },
  };
});

describe('BullmqJobs', () => {
  const q = 'node-offline';
  let prefix: string;
  const opened: BullmqJobs[] = [];
  const open = (options: Partial<BullmqJobsOptions> = {}): BullmqJobs => {
    const jobs = new BullmqJobs({ redisUrl, prefix, ...options });
    opened.push(jobs);
    return jobs;
  };

  beforeEach(() => {
    prefix = newPrefix();
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((jobs) => jobs.close()));
    await deleteKeys(prefix);
  });

  it('logs a handler that throws, once per queue per window, naming the queue, job and attempt', async () => {
    const lines: Array<{ message: string; error: unknown }> = [];
    const jobs = open({ log: (message, error) => lines.push({ message, error }) });
    const { fires, handler } = recorder((_p, info) => {
      if (info.attempt < 3) throw new Error(`refused try ${info.attempt}`);
    });
    jobs.register(q, handler, { attempts: 5, backoffMs: 20 });
    await jobs.start();
    await jobs.schedule(q, 'n1', Date.now(), null);
    await waitFor('the third try', () => fires.length === 3, 8000);
    // Two failed tries within 10 s: the first is logged, the second held back.
    expect(lines).toHaveLength(1);
    expect(lines[0].message).toContain(`a ${q} job failed (job n1, attempt 1)`);
    expect((lines[0].error as Error).message).toBe('refused try 1');
  });

  it('keeps a delayed job across a worker restart', async () => {
    const first = open();
    first.register(q, recorder().handler);
    await first.start();
    const runAt = Date.now() + 600;
    await first.schedule(q, 'node-1', runAt, { nodeId: 'node-1' });
    await first.close();

    const second = open();
    const { fires, handler } = recorder();
    second.register(q, handler);
    await second.start();
    expect(await second.scheduledAt(q, 'node-1')).toBe(runAt);
    await waitFor('the job to fire after the restart', () => fires.length === 1);
    expect(fires[0].payload).toEqual({ nodeId: 'node-1' });
    expect(fires[0].at).toBeGreaterThanOrEqual(runAt);
  });

  it('delivers a job again when the process running it dies', async () => {
    const stalls = { lockDuration: 600, stalledInterval: 200 };
    const dying = open(stalls);
    const running = gate();
    const hangs = recorder(async () => {
      running.open();
      // The process dies before this handler ends: it never does.
      await new Promise<never>(() => undefined);
    });
    dying.register(q, hangs.handler);
    await dying.start();
    await dying.schedule(q, 'node-1', Date.now(), 'again');
    await running.opened;
    await dying.kill();

    const survivor = open(stalls);
    const { fires, handler } = recorder();
    survivor.register(q, handler);
    await survivor.start();
    await waitFor('the stalled job to be delivered again', () => fires.length === 1, 5000);
    expect(fires[0].payload).toBe('again');
    expect(fires[0].info.jobId).toBe('node-1');
  });

  it('accepts job ids BullMQ would refuse (integers, colons)', async () => {
    const jobs = open();
    const { fires, handler } = recorder();
    jobs.register(q, handler);
    await jobs.start();
    await jobs.schedule(q, '42', Date.now(), 'integer');
    await jobs.schedule(q, 'node:gpu:7:x', Date.now(), 'colons');

    await waitFor('both jobs', () => fires.length === 2);
    expect(fires.map((f) => f.info.jobId).sort()).toEqual(['42', 'node:gpu:7:x']);
  });

  describe('when two processes schedule one id', () => {
    it('leaves one pending run when they race, at one of their times with its payload, and runs it once', async () => {
      const x = open();
      const y = open();
      const ids = Array.from({ length: 20 }, (_, i) => `race-${i}`);
      const base = Date.now() + 800;
      await Promise.all(
        ids.flatMap((id, i) => [
          x.schedule(q, id, base + i, { by: 'x', at: base + i }),
          y.schedule(q, id, base + 50 + i, { by: 'y', at: base + 50 + i }),
        ]),
      );

      expect(await x.counts(q)).toMatchObject({ waiting: 0, delayed: 20, running: 0 });
      for (const [i, id] of ids.entries()) {
        expect([base + i, base + 50 + i]).toContain(await y.scheduledAt(q, id));
      }
      const { fires, handler } = recorder();
      x.register(q, handler);
      await x.start();
      await waitFor('every id to run', () => fires.length === 20, 5000);
      await sleep(300);
      expect(fires).toHaveLength(20);
      expect(new Set(fires.map((f) => f.info.jobId))).toEqual(new Set(ids));
      for (const f of fires) expect((f.payload as { at: number }).at).toBe(f.info.runAt);
    });

    it('keeps the later of two schedules made one after the other', async () => {
      const x = open();
      const y = open();
      await x.schedule(q, 'node-1', Date.now() + 60_000, 'x');
      const later = Date.now() + 30_000;
      const before = y.flushes;
      await y.schedule(q, 'node-1', later, 'y');

      // Replaced by deduplication in its add, not found in the way, removed, and added again.
      expect(y.flushes - before).toBe(1);

      expect(await x.scheduledAt(q, 'node-1')).toBe(later);
      expect(await x.counts(q)).toMatchObject({ waiting: 0, delayed: 1 });
    });

    it('leaves one run when both race to move a run that is due and not started', async () => {
      const x = open();
      const y = open();
      const { fires, handler } = recorder();
      x.register(q, handler);
      await x.schedule(q, 'node-1', Date.now() - 1000, 'due');
      expect(await x.counts(q)).toMatchObject({ waiting: 1, delayed: 0 });
      const runAt = Date.now() + 300;
      await Promise.all([x.schedule(q, 'node-1', runAt, 'x'), y.schedule(q, 'node-1', runAt, 'y')]);

      expect(await x.counts(q)).toMatchObject({ waiting: 0, delayed: 1 });
      await x.start();
      await waitFor('the moved run', () => fires.length === 1);
      await sleep(400);
      expect(fires).toHaveLength(1);
      expect(['x', 'y']).toContain(fires[0].payload);
    });

    it('runs once more after a running job, whichever schedule of the two came last', async () => {
      const x = open();
      const y = open();
      const running = gate();
      const release = gate();
      const { fires, handler } = recorder(async (_p, _i, call) => {
        if (call !== 1) return;
        running.open();
        await release.opened;
      });
      x.register(q, handler);
      await x.start();
      await x.schedule(q, 'node-1', Date.now(), 'first');
      await running.opened;
      await Promise.all([
        x.schedule(q, 'node-1', Date.now() + 100, 'x'),
        y.schedule(q, 'node-1', Date.now() + 100, 'y'),
      ]);
      release.open();

      await waitFor('the run after it', () => fires.length === 2);
      await sleep(400);
      expect(fires).toHaveLength(2);
      expect(['x', 'y']).toContain(fires[1].payload);
    });
  });

  describe('arming many jobs in one turn', () => {
    it('sends them in one pipeline, and tells each caller its own outcome', async () => {
      const jobs = open();
      await jobs.ping();
      const redis = new IORedis(redisUrl);
      // One id's deduplication key holds a hash: its add fails, the others must not.
      await redis.hset(`${prefix}:${q}:de:broken`, 'not', 'a job id');
      await redis.quit();
      const ids = Array.from({ length: 200 }, (_, i) => `node-${i}`);
      const runAt = Date.now() + 60_000;
      const before = jobs.flushes;

      const outcomes = await Promise.allSettled([
        ...ids.map((id) => jobs.schedule(q, id, runAt, { id })),
        jobs.schedule(q, 'broken', runAt, null),
      ]);
      expect(jobs.flushes - before).toBe(1);
      expect(outcomes.slice(0, 200).every((o) => o.status === 'fulfilled')).toBe(true);
      expect(outcomes[200].status).toBe('rejected');
      expect(String((outcomes[200] as PromiseRejectedResult).reason)).toContain('WRONGTYPE');
      expect(await jobs.liveJobIds(q)).toEqual(new Set(ids));
      expect((await jobs.counts(q)).delayed).toBe(200);
      expect(await jobs.scheduledAt(q, 'node-7')).toBe(runAt);
    });

    it('sends only the last schedule of an id made in one turn', async () => {
      const jobs = open();
      const { fires, handler } = recorder();
      jobs.register(q, handler);
      await jobs.start();
      const first = jobs.schedule(q, 'node-1', Date.now(), 'first');
      const last = jobs.schedule(q, 'node-1', Date.now() + 100, 'last');
      await Promise.all([first, last]);

      await waitFor('the run', () => fires.length === 1);
      await sleep(300);
      expect(fires.map((f) => f.payload)).toEqual(['last']);
    });
  });

  describe('a handler that stops the event loop for 5 s (a busy loop)', () => {
    /**
     * Another "process" on its own thread and event loop: a BullMQ worker of the queue checking
     * for stalled jobs every 100 ms, which takes any job whose lock expired.
     */
    const OBSERVER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Worker } = require('bullmq');
const IORedis = require('ioredis');
let worker;
let connection;
parentPort.on('message', async (message) => {
  if (message === 'watch') {
    connection = new IORedis(workerData.redisUrl, { maxRetriesPerRequest: null });
    worker = new Worker(workerData.queue, async (job) => parentPort.postMessage('ran ' + job.id), {
      connection, prefix: workerData.prefix, stalledInterval: 100,
    });
    worker.on('stalled', (id) => parentPort.postMessage('stalled ' + id));
    worker.on('error', () => undefined);
    await worker.waitUntilReady();
    parentPort.postMessage('watching ' + Date.now());
  } else if (message === 'stop') {
    if (worker) await worker.close(true);
    if (connection) connection.disconnect();
    parentPort.postMessage('stopped');
  }
});`;

    const blockOnce = async (
      options: Partial<BullmqJobsOptions>,
    ): Promise<{ runs: number; seen: string[]; blockedUntil: number }> => {
      const seen: string[] = [];
      const thread = new Thread(OBSERVER, {
        eval: true,
        workerData: { redisUrl, prefix, queue: q },
      });
      thread.on('message', (message: string) => seen.push(message));
      try {
        const jobs = open({ ...options, log: () => undefined });
        let blockedUntil = 0;
        const { fires, handler } = recorder((_p, _i, call) => {
          if (call !== 1) return;
          thread.postMessage('watch');
          blockedUntil = Date.now() + 5000;
          while (Date.now() < blockedUntil) {
            // Nothing: the event loop stops, lock renewals included.
          }
        });
        jobs.register(q, handler);
        await jobs.start();
        await jobs.schedule(q, 'blocking', Date.now(), null);
        await waitFor('the run', () => fires.length >= 1);
        // A stall found late, or a redelivery, shows within this.
        await sleep(2000);
        thread.postMessage('stop');
        await waitFor('the observer to stop', () => seen.includes('stopped'));
        return { runs: fires.length, seen, blockedUntil };
      } finally {
        await thread.terminate();
      }
    };

    it('runs once with the default lock settings: no other process takes its job', async () => {
      const { runs, seen, blockedUntil } = await blockOnce({});
      const watching = seen.find((m) => m.startsWith('watching '));
      // The observer was checking while the loop stood still.
      expect(Number(watching?.split(' ')[1])).toBeLessThan(blockedUntil - 3000);
      expect(runs).toBe(1);
      expect(seen.filter((m) => m.startsWith('ran ') || m.startsWith('stalled '))).toEqual([]);
    }, 30_000);

    it('loses its job to another process when its lock is shorter than the pause', async () => {
      const { runs, seen } = await blockOnce({ lockDuration: 2000, lockRenewTime: 1000 });
      const redelivered = seen.filter((m) => m.startsWith('ran ') || m.startsWith('stalled '));
      expect(runs + redelivered.length).toBeGreaterThan(1);
    }, 30_000);
  });

  describe('periodic work', () => {
    it('runs each period once in total across two processes sharing the prefix', async () => {
      const x = open();
      const y = open();
      const runs: Array<{ by: string; runAt: number }> = [];
      x.every('tick', 200, async ({ runAt }) => void runs.push({ by: 'x', runAt }));
      y.every('tick', 200, async ({ runAt }) => void runs.push({ by: 'y', runAt }));
      await Promise.all([x.start(), y.start()]);

      await sleep(2100);
      // About ten periods, each run by one process.
      expect(runs.length).toBeGreaterThanOrEqual(7);
      expect(runs.length).toBeLessThanOrEqual(11);
      expect(new Set(runs.map((r) => r.runAt)).size).toBe(runs.length);
    });

    it('puts its scheduler back when Redis lost it (restarted empty, flushed)', async () => {
      const jobs = open({ log: () => undefined });
      let runs = 0;
      jobs.every('tick', 200, async () => void runs++);
      await jobs.start();
      await waitFor('a run', () => runs > 0);

      await deleteKeys(prefix);
      const after = runs;
      await waitFor('runs again', () => runs >= after + 2, 3000);
    });

    it('takes a new period at the next start', async () => {
      const first = open();
      first.every('tick', 60_000, async () => undefined);
      await first.start();
      await first.close();

      const second = open();
      let runs = 0;
      second.every('tick', 200, async () => void runs++);
      await second.start();
      await waitFor('runs at the new period', () => runs >= 2, 2000);
    });
  });

  it('answers ping from Redis and fails it when closed', async () => {
    const jobs = open();
    await jobs.ping();
    await jobs.close();
    await expect(jobs.ping()).rejects.toThrow();
  });

  describe('createDelayedJobs', () => {
    it('chooses BullMQ when a Redis URL is configured, else memory', async () => {
      const redis = createDelayedJobs({ redisUrl, prefix });
      const memory = createDelayedJobs({});
      expect(redis).toBeInstanceOf(BullmqJobs);
      expect(memory).toBeInstanceOf(InProcessJobs);
      await redis.ping();
      await Promise.all([redis.close(), memory.close()]);
    });
  });
});
