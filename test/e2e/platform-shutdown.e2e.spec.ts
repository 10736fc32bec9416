import net from 'node:net';
import request from 'supertest';
import { EventStore, ReadAllOptions } from '@fleet/eventstore/port';
import { DELAYED_JOBS, EVENT_STORE } from '../../apps/control-plane/src/platform/runtime/tokens';
import { SubscriptionRunner } from '@fleet/cqrs';
import { DelayedJobs } from '@fleet/jobs/port';
import { EventStoreInUseError } from '@fleet/eventstore/sqlite-event-store';
import { startApp, TestApp } from '../support/app';
import { ChildApp, ensureBuilt, startChildApp } from '../support/child-app';
import { OwnRedis } from '../support/own-redis';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` is true, or fails after `ms`. */
const waitFor = async (check: () => Promise<boolean>, ms = 10_000): Promise<void> => {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(50);
  }
};

// A limit no other reader uses, so only the request under test is slowed down.
const MARKER_LIMIT = 777;

/**
 * Reads of the log with MARKER_LIMIT take 500 ms: a request in flight while the app closes.
 * Resolves when such a read has begun.
 */
const holdMarkedReads = (t: TestApp): Promise<void> => {
  const store = t.app.get<EventStore>(EVENT_STORE);
  const readAll = store.readAll.bind(store);
  let entered!: () => void;
  const inHandler = new Promise<void>((resolve) => (entered = resolve));
  jest.spyOn(store, 'readAll').mockImplementation(async (options: ReadAllOptions) => {
    if (options.limit === MARKER_LIMIT) {
      entered();
      await sleep(500);
    }
    return readAll(options);
  });
  return inHandler;
};

describe('graceful shutdown', () => {
  it('lets a request in flight complete when the app closes, then refuses new ones', async () => {
    const t = await startApp();
    const auth = await t.auth('ann', ['auditor']);
    const inHandler = holdMarkedReads(t);

    const order: string[] = [];
    const response = request(t.url)
      .get(`/v1/events?limit=${MARKER_LIMIT}`)
      .set(auth)
      .then((res) => {
        order.push('answered');
        return res;
      });
    await inHandler;
    const closing = t.app.close().then(() => order.push('closed'));

    const res = await response;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ events: [], nextPosition: 0 });
    await closing;
    // Closing waited for the request, and the stores closed only after it was answered.
    expect(order).toEqual(['answered', 'closed']);

    await expect(request(t.url).get('/health/live')).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('a request arriving while the app closes', () => {
  it('is turned away with 503 unavailable in the envelope, Retry-After 1, nothing done', async () => {
    const t = await startApp();
    const inHandler = holdMarkedReads(t);
    const auth = await t.auth('ann', ['auditor']);
    // Sent now (supertest sends once its promise is asked for).
    const held = request(t.url)
      .get(`/v1/events?limit=${MARKER_LIMIT}`)
      .set(auth)
      .then((res) => res);
    // A connection already open, its request half sent when the close begins.
    const port = Number(new URL(t.url).port);
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    await inHandler;
    const closing = t.app.close();
    await sleep(100);
    socket.write('\r\n');
    await ended;
    expect((await held).status).toBe(200);
    await closing;
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(head.toLowerCase()).toContain('retry-after: 1');
    expect(JSON.parse(body)).toEqual({
      error: {
        code: 'unavailable',
        message: expect.stringContaining('shutting down'),
        details: expect.objectContaining({ correlationId: expect.any(String) }),
      },
    });
  });
});

describe('the order of shutdown', () => {
  it('stops the reactors before the jobs client closes, the projections after it', async () => {
    const t = await startApp();
    const runner = t.app.get(SubscriptionRunner);
    const jobs = t.app.get<DelayedJobs>(DELAYED_JOBS);
    const names = async () => (await runner.status()).map((s) => s.name);
    expect((await names()).filter((n) => n.startsWith('reactor:')).length).toBeGreaterThan(0);
    const close = jobs.close.bind(jobs);
    let runningWhenJobsClosed: string[] = [];
    jest.spyOn(jobs, 'close').mockImplementation(async () => {
      runningWhenJobsClosed = await names();
      return close();
    });
    await t.close();
    expect(jobs.close).toHaveBeenCalled();
    // Reactors schedule and cancel jobs: none may still run when the client quits Redis.
    expect(runningWhenJobsClosed.filter((n) => n.startsWith('reactor:'))).toEqual([]);
    expect(runningWhenJobsClosed.filter((n) => n.startsWith('projection:')).length).toBeGreaterThan(
      0,
    );
  });
});

describe('one control plane per embedded DATA_DIR', () => {
  it('refuses to start a second one on the same data, and starts once the first has closed', async () => {
    const first = await startApp({}, { redis: false });
    const dataDir = first.config.dataDir;
    try {
      // The second waits a few seconds for the lock (the first may be shutting down), then gives up.
      await expect(startApp({}, { dataDir, redis: false })).rejects.toThrow(EventStoreInUseError);
    } finally {
      await first.close();
    }
    const second = await startApp({}, { dataDir, redis: false });
    await second.close();
  }, 30_000);
});

describe('shutdown with Redis gone', () => {
  it('exits within its deadline (10 s) on SIGTERM even when a store cannot be closed cleanly', async () => {
    await ensureBuilt();
    const redis = await OwnRedis.onFreePort();
    await redis.start();
    let app: ChildApp | null = null;
    try {
      app = await startChildApp({ REDIS_URL: redis.url });
      await redis.kill();
      await sleep(1000);
      const askedAt = Date.now();
      process.kill(app.pid, 'SIGTERM');
      // Not app.kill(): it escalates to SIGKILL after 10 s and would hide a hang.
      const running = app;
      await waitFor(async () => !running.running, 15_000);
      expect(Date.now() - askedAt).toBeLessThan(13_000);
    } finally {
      if (app?.running) await app.kill('SIGKILL');
      await redis.kill();
    }
  }, 60_000);
});
