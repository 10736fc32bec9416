import type Redis from 'ioredis';
import { ThrottledLog, UnavailableError } from '../../../../../libs/kernel/src';

/** Errors ioredis gives when Redis cannot be reached (not a command Redis refused). */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND']);

export const isRedisUnreachable = (error: unknown): boolean => {
  const e = error as { name?: unknown; code?: unknown; message?: unknown } | null;
  return (
    // Not exported by ioredis: the command gave up while reconnecting.
    e?.name === 'MaxRetriesPerRequestError' ||
    (typeof e?.code === 'string' && CONNECTION_CODES.has(e.code)) ||
    e?.message === 'Connection is closed.'
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
  const errors = new ThrottledLog((message, error) => console.error(message, error));
  redis.on('error', (error) => errors.failure(`${label}: redis:`, error));
  redis.on('ready', () => errors.clear());
};
