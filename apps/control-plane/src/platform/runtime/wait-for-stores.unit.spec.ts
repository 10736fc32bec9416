import { ConfigError } from '../../config/config';
import {
  NeededStore,
  StoreUnreachableError,
  neededStores,
  waitForStores,
  whereIs,
} from './wait-for-stores';

const refused = (): Error =>
  Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

/** A store that answers from its `answersAt`-th try on (never when Infinity), counting tries. */
const store = (setting: string, answersAt = 1) => {
  const tries: number[] = [];
  const needed: NeededStore = {
    setting,
    url: `tcp://user:pw@${setting.toLowerCase()}:1`,
    reach: async (_url, timeoutMs) => {
      tries.push(timeoutMs);
      if (tries.length < answersAt) throw refused();
    },
  };
  return { needed, tries };
};

const fast = { sayEveryMs: 60, retryMs: 10, tryTimeoutMs: 50 };

describe('waitForStores', () => {
  it('proceeds once every store answers, telling only those it still waits for', async () => {
    const redis = store('REDIS_URL', 1);
    const mongo = store('MONGO_URL', 4);
    const said: string[] = [];
    await waitForStores([redis.needed, mongo.needed], {
      ...fast,
      deadlineMs: 5_000,
      say: (line) => said.push(line),
    });
    expect(redis.tries).toHaveLength(1);
    expect(mongo.tries).toHaveLength(4);
    expect(said).toEqual(['waiting for MONGO_URL (tcp://mongo_url:1): connect ECONNREFUSED']);
  });

  it('tries every store at once: one out of reach does not hold back another', async () => {
    const order: string[] = [];
    const slow: NeededStore = {
      setting: 'EVENTSTORE_URL',
      url: 'kurrentdb://es:2113',
      reach: () =>
        new Promise((resolve) =>
          setTimeout(() => {
            order.push('es');
            resolve();
          }, 100),
        ),
    };
    const quick: NeededStore = {
      setting: 'REDIS_URL',
      url: 'redis://r:6379',
      reach: async () => void order.push('redis'),
    };
    await waitForStores([slow, quick], { ...fast, tryTimeoutMs: 500, deadlineMs: 5_000, say() {} });
    expect(order).toEqual(['redis', 'es']);
  });

  it('tells a store still out of reach again every sayEveryMs', async () => {
    const mongo = store('MONGO_URL', Infinity);
    const said: string[] = [];
    await expect(
      waitForStores([mongo.needed], { ...fast, deadlineMs: 400, say: (line) => said.push(line) }),
    ).rejects.toThrow(StoreUnreachableError);
    // 400 ms of tries 10 ms apart, told at once and then every 60 ms: about 7 times, not 40.
    expect(mongo.tries.length).toBeGreaterThan(15);
    expect(said.length).toBeGreaterThanOrEqual(4);
    expect(said.length).toBeLessThanOrEqual(8);
  });

  it('gives up after the deadline naming every store still out of reach, and START_TIMEOUT_SEC', async () => {
    const es = store('EVENTSTORE_URL', Infinity);
    const mongo = store('MONGO_URL', Infinity);
    const redis = store('REDIS_URL', 2);
    const started = Date.now();
    const error: StoreUnreachableError = await waitForStores(
      [es.needed, mongo.needed, redis.needed],
      { ...fast, deadlineMs: 1_000, say() {} },
    ).then(
      () => {
        throw new Error('resolved');
      },
      (e: StoreUnreachableError) => e,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(error).toBeInstanceOf(StoreUnreachableError);
    expect(error.settings).toEqual(['EVENTSTORE_URL', 'MONGO_URL']);
    expect(error.message).toBe(
      'EVENTSTORE_URL (tcp://eventstore_url:1) did not answer within 1 s (START_TIMEOUT_SEC): ' +
        'connect ECONNREFUSED; ' +
        'MONGO_URL (tcp://mongo_url:1) did not answer within 1 s (START_TIMEOUT_SEC): ' +
        'connect ECONNREFUSED',
    );
    expect(error.message).not.toContain('pw');
  });

  it('ends a try whose client overruns its own timeout', async () => {
    const hung: NeededStore = {
      setting: 'MONGO_URL',
      url: 'mongodb://m:27017',
      reach: () => new Promise(() => {}),
    };
    const said: string[] = [];
    const started = Date.now();
    await expect(
      waitForStores([hung], {
        ...fast,
        tryTimeoutMs: 100,
        deadlineMs: 200,
        say: (line) => said.push(line),
      }),
    ).rejects.toThrow(/MONGO_URL \(mongodb:\/\/m:27017\) did not answer within 0 s/);
    // Each try is given its timeout (at least 250 ms) and a second more before it is let go.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(said[0]).toMatch(
      /^waiting for MONGO_URL \(mongodb:\/\/m:27017\): no answer within \d+ ms$/,
    );
  });

  it('stops at once on a URL a client cannot read, with its ConfigError', async () => {
    const other = store('REDIS_URL', Infinity);
    const bad: NeededStore = {
      setting: 'MONGO_URL',
      url: 'mongodb://m',
      reach: async () => {
        throw new ConfigError('MONGO_URL', 'the MongoDB client cannot read it: nope');
      },
    };
    const started = Date.now();
    await expect(
      waitForStores([other.needed, bad], { ...fast, deadlineMs: 10_000, say() {} }),
    ).rejects.toThrow('invalid configuration: MONGO_URL: the MongoDB client cannot read it: nope');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('waits for nothing when no network store is configured', async () => {
    await expect(waitForStores([], { deadlineMs: 1, say() {} })).resolves.toBeUndefined();
  });
});

describe('neededStores', () => {
  it('names each configured network store by its setting, and none of the embedded ones', () => {
    expect(neededStores({})).toEqual([]);
    const all = neededStores({
      eventstoreUrl: 'kurrentdb://es:2113?tls=false',
      mongoUrl: 'mongodb://mongo:27017/fleet',
      redisUrl: 'redis://redis:6379',
    });
    expect(all.map((s) => [s.setting, s.url])).toEqual([
      ['EVENTSTORE_URL', 'kurrentdb://es:2113?tls=false'],
      ['MONGO_URL', 'mongodb://mongo:27017/fleet'],
      ['REDIS_URL', 'redis://redis:6379'],
    ]);
    expect(neededStores({ mongoUrl: 'mongodb://m' }).map((s) => s.setting)).toEqual(['MONGO_URL']);
  });
});

describe('whereIs', () => {
  it('keeps the scheme and host, never the credentials', () => {
    expect(whereIs('mongodb://admin:secret@mongo:27017/fleet?replicaSet=rs0')).toBe(
      'mongodb://mongo:27017',
    );
    expect(whereIs('not a url')).toBe('an unreadable URL');
  });
});
