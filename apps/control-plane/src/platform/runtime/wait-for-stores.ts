import net from 'node:net';
import Redis from 'ioredis';
import { settleWithin } from '@fleet/kernel';
import { isPostgresUrl, reachPostgres } from '@fleet/eventstore/postgres-connection';
import { Config, ConfigError } from '../../config/config';

/** Where a store's URL points, without its credentials (a password in REDIS_URL stays out of logs). */
export const whereIs = (url: string): string => {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'an unreadable URL';
  }
};

/** An error's class name: some clients (KurrentDB's) leave `name` at 'Error'. */
export const errorName = (error: unknown): string => {
  if (!(error instanceof Error)) return typeof error;
  if (error.name && error.name !== 'Error') return error.name;
  return error.constructor?.name || 'Error';
};

/** An error's own words; a client whose message is empty or only its class name gives that name. */
export const reason = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  const name = errorName(error);
  return error.message && error.message !== name ? error.message : name;
};

/**
 * A network store the start needs, named by its setting, and one try at reaching it: resolves
 * once the store answers, rejects saying why not, or throws ConfigError when its client cannot
 * read the URL (no retry helps that).
 */
export type NeededStore = {
  readonly setting: string;
  readonly url: string;
  reach(url: string, timeoutMs: number): Promise<void>;
};

/** One try at Redis: resolves once it answers PING, rejects saying why not. */
export const reachRedis = async (url: string, timeoutMs: number): Promise<void> => {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // The connection's own error (ECONNREFUSED, ENOTFOUND, ...) says more than the rejection
  // ("Connection is closed.").
  let cause: Error | undefined;
  client.on('error', (error: Error) => (cause ??= error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw cause ?? error;
  } finally {
    client.disconnect();
  }
};

/**
 * One try at MongoDB: resolves once the primary answers a ping (read models are written
 * there), rejects saying why not ("connect ECONNREFUSED …", or a server selection that timed
 * out: a replica set with no primary yet).
 */
export const reachMongo = async (url: string, timeoutMs: number): Promise<void> => {
  const { MongoClient } = await import('mongodb');
  let client: InstanceType<typeof MongoClient>;
  try {
    // Only reading the URL and options throws here: a URL no retry can fix.
    client = new MongoClient(url, {
      serverSelectionTimeoutMS: timeoutMs,
      connectTimeoutMS: timeoutMs,
      socketTimeoutMS: timeoutMs,
      maxPoolSize: 1,
    });
  } catch (error) {
    throw new ConfigError('MONGO_URL', `the MongoDB client cannot read it: ${reason(error)}`);
  }
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close();
  }
};

/** One TCP connection to `host:port`, closed at once: the plainest "is anything there". */
export const reachTcp = (host: string, port: number, timeoutMs: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`no TCP connection to ${host}:${port} within ${timeoutMs} ms`));
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });

/** esdb:// and esdb+discover:// are the same URLs under KurrentDB's names (its client warns on the old ones). */
const asKurrentDbUrl = (url: string): string => url.replace(/^esdb(\+discover)?:/i, 'kurrentdb$1:');

/**
 * One try at the event store. KurrentDB: a TCP connection to the first host (its error names
 * what is wrong: refused, no such host), then a read of the last event of `$all` through the
 * KurrentDB client, which also proves the gRPC API and the credentials. The client's read
 * takes no deadline, so the try is bounded here.
 */
export const reachEventStore = async (url: string, timeoutMs: number): Promise<void> => {
  // PostgreSQL's own client tries it: a connection and `SELECT 1`.
  if (isPostgresUrl(url)) return reachPostgres(url, timeoutMs);
  let first: URL | undefined;
  try {
    first = new URL(url);
  } catch {
    // Several hosts (`host1:2113,host2:2113`) are no WHATWG URL: the client alone checks them.
  }
  if (first?.hostname) {
    await reachTcp(first.hostname.replace(/^\[|\]$/g, ''), Number(first.port || 2113), timeoutMs);
  }
  const { KurrentDBClient, BACKWARDS, END } = await import('@kurrent/kurrentdb-client');
  let client: ReturnType<typeof KurrentDBClient.connectionString>;
  try {
    client = KurrentDBClient.connectionString(asKurrentDbUrl(url));
  } catch (error) {
    // Its message quotes the whole connection string, password included: only what it expected.
    const expected = (error as { expected?: unknown }).expected;
    throw new ConfigError(
      'EVENTSTORE_URL',
      `the KurrentDB client cannot read it${typeof expected === 'string' ? ` (expected ${expected})` : ''}`,
    );
  }
  try {
    const read = (async () => {
      for await (const _event of client.readAll({
        maxCount: 1,
        direction: BACKWARDS,
        fromPosition: END,
      })) {
        break;
      }
    })();
    const outcome = await settleWithin(read, timeoutMs);
    if (outcome.status === 'rejected') {
      throw new Error(`a read of $all failed: ${reason(outcome.reason)}`);
    }
    if (outcome.status === 'late') {
      throw new Error(`a read of $all was not answered within ${timeoutMs} ms`);
    }
  } finally {
    await client.dispose();
  }
};

/** Every network store `config` names, each with its setting; none for the embedded ones. */
export const neededStores = (
  config: Pick<Config, 'eventstoreUrl' | 'mongoUrl' | 'redisUrl'>,
): NeededStore[] => {
  const stores: NeededStore[] = [];
  if (config.eventstoreUrl) {
    stores.push({ setting: 'EVENTSTORE_URL', url: config.eventstoreUrl, reach: reachEventStore });
  }
  if (config.mongoUrl) {
    stores.push({ setting: 'MONGO_URL', url: config.mongoUrl, reach: reachMongo });
  }
  if (config.redisUrl) {
    stores.push({ setting: 'REDIS_URL', url: config.redisUrl, reach: reachRedis });
  }
  return stores;
};

export class StoreUnreachableError extends Error {
  constructor(
    /** The settings of every store that had not answered when the wait ran out. */
    readonly settings: readonly string[],
    message: string,
  ) {
    super(message);
    this.name = 'StoreUnreachableError';
  }
}

export type WaitOptions = {
  /** START_TIMEOUT_SEC in ms: how long every store together may take to answer. */
  readonly deadlineMs: number;
  say(line: string): void;
  /** How often a store still out of reach is told about again. */
  readonly sayEveryMs?: number;
  /** The pause between two tries at one store. */
  readonly retryMs?: number;
  /** The longest one try may take. */
  readonly tryTimeoutMs?: number;
};

const TRY_TIMEOUT_MS = 2_000;
const RETRY_MS = 500;
const SAY_EVERY_MS = 5_000;
/** A try is never shorter than this, even at the end of the wait (a store must have a chance). */
const SHORTEST_TRY_MS = 250;

/**
 * Before the app starts, every network store answers, or the start stops naming each setting
 * still out of reach. A store out of reach held the start for good without a word: its
 * clients retry forever, and the app's log is held until the app is up. Here all stores are
 * tried at once, each one still out of reach is told about at once and then every few
 * seconds, and the wait gives up after `deadlineMs`. A URL a client cannot read ends the wait
 * at once with its ConfigError.
 */
export const waitForStores = async (
  stores: readonly NeededStore[],
  options: WaitOptions,
): Promise<void> => {
  const sayEveryMs = options.sayEveryMs ?? SAY_EVERY_MS;
  const retryMs = options.retryMs ?? RETRY_MS;
  const tryTimeoutMs = options.tryTimeoutMs ?? TRY_TIMEOUT_MS;
  const until = Date.now() + options.deadlineMs;
  let refused: ConfigError | undefined;

  /** Resolves with null once `store` answered, or with why not once the wait ran out. */
  const waitFor = async (store: NeededStore): Promise<string | null> => {
    let saidAt = -Infinity;
    for (;;) {
      const timeoutMs = Math.max(SHORTEST_TRY_MS, Math.min(tryTimeoutMs, until - Date.now()));
      let why: string;
      // A client that overruns its own timeout still ends this try (it runs on, unheard).
      const outcome = await settleWithin(
        Promise.resolve().then(() => store.reach(store.url, timeoutMs)),
        timeoutMs + 1_000,
      );
      if (outcome.status === 'fulfilled') return null;
      if (outcome.status === 'rejected') {
        if (outcome.reason instanceof ConfigError) {
          refused ??= outcome.reason;
          return null;
        }
        why = reason(outcome.reason);
      } else {
        why = `no answer within ${timeoutMs} ms`;
      }
      if (refused) return null;
      // Told at the first miss even when it used up the wait: the start says what it waited for.
      if (Date.now() - saidAt >= sayEveryMs) {
        options.say(`waiting for ${store.setting} (${whereIs(store.url)}): ${why}`);
        saidAt = Date.now();
      }
      if (Date.now() >= until) return why;
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      if (refused) return null;
    }
  };

  const outcomes = await Promise.all(stores.map(waitFor));
  if (refused) throw refused;
  const seconds = Math.round(options.deadlineMs / 1000);
  const missing = stores
    .map((store, i) => ({ store, why: outcomes[i] }))
    .filter((m): m is { store: NeededStore; why: string } => m.why !== null);
  if (missing.length === 0) return;
  throw new StoreUnreachableError(
    missing.map((m) => m.store.setting),
    missing
      .map(
        (m) =>
          `${m.store.setting} (${whereIs(m.store.url)}) did not answer within ${seconds} s ` +
          `(START_TIMEOUT_SEC): ${m.why}`,
      )
      .join('; '),
  );
};
