import Redis, { type RedisOptions } from 'ioredis';
import { ThrottledLog, UnavailableError, settleWithin } from '@fleet/kernel';
import { failureLog } from '../observability/logger';

/** Errors ioredis gives when Redis cannot be reached (not a command Redis refused). */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND']);

export const isRedisUnreachable = (error: unknown): boolean => {
  const e = error as { name?: unknown; code?: unknown; message?: unknown } | null;
  return (
    // Not exported by ioredis: the command gave up while reconnecting.
    e?.name === 'MaxRetriesPerRequestError' ||
    (typeof e?.code === 'string' && CONNECTION_CODES.has(e.code)) ||
    e?.message === 'Connection is closed.' ||
    // enableOfflineQueue false: sent while the connection was not up.
    (typeof e?.message === 'string' && e.message.startsWith("Stream isn't writeable")) ||
    // commandTimeout: connected, but Redis does not answer (stalled, overloaded).
    e?.message === 'Command timed out'
  );
};

/**
 * A rejection handler for a Redis command's promise (`.catch(handler)`, made once per store:
 * nothing more per call on the report path): Redis out of reach becomes UnavailableError (a
 * 503: retry), anything else stays as it is.
 */
export const unavailableAs =
  (dependency: string) =>
  (error: unknown): never => {
    throw isRedisUnreachable(error) ? new UnavailableError(dependency, error) : error;
  };

/**
 * Logs a connection's failures once per 10 s per kind (readiness and the requests that need
 * it report them too), and again at once after it has reconnected.
 */
export const logConnectionErrors = (redis: Redis, label: string): void => {
  const errors = new ThrottledLog(failureLog('redis'));
  redis.on('error', (error) => errors.failure(`${label}: the Redis connection failed`, error));
  redis.on('ready', () => errors.clear());
};

/** How long a request waits for a Redis connection that is down before it is answered 503. */
export const CONNECT_WAIT_MS = 1_000;
/** How long a command may go unanswered on a live connection (a stalled Redis) before a 503. */
export const COMMAND_TIMEOUT_MS = 2_000;

/**
 * A Redis client for stores a request waits on (heartbeats, idempotency keys). ioredis by
 * default holds a command sent while the connection is down in its offline queue through
 * several reconnect attempts, whose delays grow to 2 s: requests took 7-16 s to be answered
 * 503 in an outage, stacked up behind one another, and writes held that long landed late.
 * Here nothing is queued: a request waits at most CONNECT_WAIT_MS for the connection to be up
 * (a restart of Redis is usually that quick), else it fails at once; a command unanswered on a
 * live connection fails after COMMAND_TIMEOUT_MS; reconnect attempts stay at most a second
 * apart, so service resumes within a second of Redis.
 */
export class RequestPathRedis {
  readonly client: Redis;
  private up: Promise<void> | null = null;

  constructor(
    url: string,
    label: string,
    private readonly dependency: string,
    options: RedisOptions = {},
    private readonly waitMs = CONNECT_WAIT_MS,
  ) {
    this.client = new Redis(url, {
      ...options,
      enableOfflineQueue: false,
      // A Redis that stalls (paused, swapping, a slow command) keeps the connection up and
      // answers nothing: without this, requests waited for as long as it stalled.
      commandTimeout: COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    });
    logConnectionErrors(this.client, label);
  }

  /**
   * `command`, or a timeout (rejected as ioredis's own, 'Command timed out') once
   * COMMAND_TIMEOUT_MS have passed since this call. ioredis times a command from when it is
   * written; with auto-pipelining, commands asked for while an earlier batch is unanswered
   * are written only once that batch times out, so in a stall they waited up to twice the
   * timeout (3.5 s measured). The command itself runs on; what it does later is ioredis's.
   */
  async bounded<T>(command: Promise<T>): Promise<T> {
    const outcome = await settleWithin(command, COMMAND_TIMEOUT_MS);
    if (outcome.status === 'fulfilled') return outcome.value;
    if (outcome.status === 'rejected') throw outcome.reason;
    throw new Error('Command timed out');
  }

  /**
   * Nothing to wait for when connected (undefined: no promise on the hot path); otherwise
   * resolves when the connection is up, or rejects with UnavailableError after the wait.
   */
  connected(): Promise<void> | undefined {
    if (this.client.status === 'ready') return undefined;
    this.up ??= new Promise<void>((resolve) =>
      this.client.once('ready', () => {
        this.up = null;
        resolve();
      }),
    );
    return settleWithin(this.up, this.waitMs).then((outcome) => {
      if (outcome.status === 'late') {
        const cause = new Error(`not connected within ${this.waitMs} ms`);
        throw new UnavailableError(this.dependency, cause);
      }
    });
  }
}
