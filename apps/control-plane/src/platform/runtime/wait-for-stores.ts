import Redis from 'ioredis';

/** Where a store's URL points, without its credentials (a password in REDIS_URL stays out of logs). */
export const whereIs = (url: string): string => {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'an unreadable URL';
  }
};

/** A network store the start needs, named by its setting, and one try at reaching it. */
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

export class StoreUnreachableError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = 'StoreUnreachableError';
  }
}

const TRY_TIMEOUT_MS = 2_000;
const RETRY_MS = 500;
const SAY_EVERY_MS = 5_000;

/**
 * Before the app starts, each network store answers, or the start stops naming the setting.
 * A Redis out of reach held the start for good without a word: its clients retry forever, and
 * the app's log is held until the app is up. Here the start says what it waits for, every few
 * seconds, and gives up after `deadlineMs`.
 */
export const waitForStores = async (
  stores: readonly NeededStore[],
  options: { deadlineMs: number; say(line: string): void },
): Promise<void> => {
  const until = Date.now() + options.deadlineMs;
  for (const store of stores) {
    let saidAt = -Infinity;
    for (;;) {
      try {
        await store.reach(store.url, Math.min(TRY_TIMEOUT_MS, options.deadlineMs));
        break;
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        const where = `${store.setting} (${whereIs(store.url)})`;
        if (Date.now() >= until) {
          throw new StoreUnreachableError(
            store.setting,
            `${where} did not answer within ${Math.round(options.deadlineMs / 1000)} s: ${why}`,
          );
        }
        if (Date.now() - saidAt >= SAY_EVERY_MS) {
          options.say(`waiting for ${where}: ${why}`);
          saidAt = Date.now();
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }
};
