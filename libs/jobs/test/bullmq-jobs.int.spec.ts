import { randomUUID } from 'node:crypto';
import IORedis from 'ioredis';
import { BullmqJobs, BullmqJobsOptions } from '../src/bullmq-jobs';
import { InProcessJobs } from '../src/in-process-jobs';
import { JobSlotsBusyError, createDelayedJobs, scheduleUnlessBusy } from '../src';
import { delayedJobsContract, gate, recorder, waitFor } from './delayed-jobs.contract';

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

  it('refuses a third schedule while two runs of the same job are still going', async () => {
    const jobs = open();
    const running = gate();
    const release = gate();
    const { fires, handler } = recorder(async (_p, _i, call) => {
      if (call === 2) running.open();
      await release.opened;
    });
    jobs.register(q, handler);
    await jobs.start();
    await jobs.schedule(q, 'node-1', Date.now(), 1);
    await waitFor('the first run', () => fires.length === 1);
    await jobs.schedule(q, 'node-1', Date.now(), 2);
    await running.opened;

    const refused = jobs.schedule(q, 'node-1', Date.now(), 3);
    await expect(refused).rejects.toThrow(/both of its slots are running/);
    await expect(refused).rejects.toBeInstanceOf(JobSlotsBusyError);
    // For callers content with "a run soon": the running ones re-read state.
    await expect(scheduleUnlessBusy(jobs, q, 'node-1', Date.now(), 4)).resolves.toBe(false);
    release.open();
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
