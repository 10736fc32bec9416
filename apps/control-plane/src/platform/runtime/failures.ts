import pino from 'pino';
import { ReplyError } from 'ioredis';
import { FailureSink, ThrottledLog, UnavailableError } from '@fleet/kernel';
import { EventStoreInUseError } from '@fleet/eventstore/sqlite-event-store';
import { Config, ConfigError } from '../../config/config';
import { createPino } from '../observability/logger';
import { isRedisUnreachable } from './redis-unavailable';
import { StoreUnreachableError, errorName, reason, whereIs } from './wait-for-stores';

/** The process's exit codes; the README's table lists the same. */
export const EXIT = {
  /** Stopped by SIGTERM/SIGINT, the shutdown finished. */
  ok: 0,
  /**
   * The start failed on a store (out of reach within START_TIMEOUT_SEC, refusing, the
   * embedded log held by another process), or a shutdown overran its deadline.
   */
  storeFailed: 1,
  /** Something nobody handles (a bug, or a client's error no code expects): EX_SOFTWARE. */
  unexpected: 70,
  /** A setting is invalid: EX_CONFIG. */
  config: 78,
} as const;

export type StoreUrls = Pick<Config, 'eventstoreUrl' | 'mongoUrl' | 'redisUrl'>;

/** What a failure says in one line, the exit code it ends in, and the store it came from. */
export type Failure = {
  readonly code: number;
  readonly line: string;
  /** The setting of the store whose client threw it, when one did. */
  readonly setting?: string;
  /** Kept only for what nobody expected: the bug report needs it. */
  readonly stack?: string;
};

/** `Name: message`, or the name alone when the message says nothing more. */
const said = (error: unknown): string => {
  const name = errorName(error);
  const why = reason(error);
  return why === name ? name : `${name}: ${why}`;
};

/** The configured store whose client `error` comes from, tried only for clients in use. */
const storeOf = async (
  error: unknown,
  urls: StoreUrls,
): Promise<{ setting: string; url: string; client: string } | undefined> => {
  if (urls.mongoUrl) {
    // Already loaded when MONGO_URL is set: this import is the module the adapter uses.
    const { MongoError } = await import('mongodb');
    if (error instanceof MongoError) {
      return { setting: 'MONGO_URL', url: urls.mongoUrl, client: 'MongoDB' };
    }
  }
  if (urls.eventstoreUrl) {
    const { isCommandError } = await import('@kurrent/kurrentdb-client');
    if (error instanceof Error && isCommandError(error)) {
      return { setting: 'EVENTSTORE_URL', url: urls.eventstoreUrl, client: 'KurrentDB' };
    }
  }
  if (urls.redisUrl && (error instanceof ReplyError || isRedisUnreachable(error))) {
    return { setting: 'REDIS_URL', url: urls.redisUrl, client: 'Redis' };
  }
  return undefined;
};

/**
 * Names a failure for the operator: a refusal the code knows says what to do; a store
 * client's error names the setting, where it points (no credentials) and what the client
 * said; anything else gives its name and message (and keeps its stack) with exit 70.
 */
export const describeFailure = async (error: unknown, urls: StoreUrls): Promise<Failure> => {
  if (error instanceof ConfigError) return { code: EXIT.config, line: error.message };
  if (error instanceof StoreUnreachableError || error instanceof EventStoreInUseError) {
    return { code: EXIT.storeFailed, line: error.message };
  }
  if (error instanceof UnavailableError) {
    return {
      code: EXIT.storeFailed,
      line: `${error.dependency} is not answering: ${reason(error.cause)}`,
    };
  }
  const store = await storeOf(error, urls).catch(() => undefined);
  if (store) {
    if (store.setting === 'MONGO_URL' && errorName(error) === 'MongoParseError') {
      return {
        code: EXIT.config,
        line: new ConfigError('MONGO_URL', `the MongoDB client cannot read it: ${reason(error)}`)
          .message,
        setting: store.setting,
      };
    }
    return {
      code: EXIT.storeFailed,
      line: `${store.setting} (${whereIs(store.url)}): ${store.client} ${said(error)}`,
      setting: store.setting,
    };
  }
  return {
    code: EXIT.unexpected,
    line: said(error),
    stack: error instanceof Error ? error.stack : undefined,
  };
};

/** The start's refusal: plain text on stderr (the app's logger is not up), then the exit. */
export const failStart = async (error: unknown, urls: StoreUrls): Promise<never> => {
  const failure = await describeFailure(error, urls).catch((): Failure => ({
    code: EXIT.unexpected,
    line: said(error),
  }));
  process.stderr.write(
    `failed to start: ${failure.line}\n${failure.stack ? `${failure.stack}\n` : ''}`,
  );
  process.exit(failure.code);
};

/**
 * An exception or a rejection nobody handled, at start or at run time: one JSON line (fatal,
 * whatever LOG_LEVEL says: a process that ends must say why), then exit 70, for the restart
 * policy to start it afresh. Without this, node printed a bare stack trace (not a log line)
 * and exited 1, as a store out of reach at start does.
 */
export const exitOnUnhandled = (urls: () => StoreUrls): void => {
  const log = createPino('fatal', pino.destination({ dest: 1, sync: true }), { redact: false });
  let exiting = false;
  const handle = (what: string) => (error: unknown) => {
    if (exiting) return;
    exiting = true;
    void describeFailure(error, urls())
      .catch((): Failure => ({ code: EXIT.unexpected, line: said(error) }))
      .then((failure) => {
        log.fatal(
          {
            context: 'process',
            ...(failure.setting ? { setting: failure.setting } : {}),
            err: {
              name: errorName(error),
              message: reason(error),
              stack: error instanceof Error ? error.stack : undefined,
            },
          },
          `${what}: ${failure.line}; exiting`,
        );
        process.exit(EXIT.unexpected);
      });
  };
  process.on('uncaughtException', handle('an uncaught exception'));
  process.on('unhandledRejection', handle('an unhandled rejection'));
};

/**
 * The subscription runner's onError: a projection or reactor whose page failed (a store out
 * of reach, a bug) is retried with backoff and shown in /health/ready and the metrics, but
 * its error reached no log. One line per subscriber and kind of error per 10 s.
 */
export const subscriberFailures = (
  sink: FailureSink,
): ((name: string, error: unknown, attempt: number) => void) => {
  const log = new ThrottledLog(sink);
  return (name, error, attempt) => {
    const e = error as { code?: unknown } | null;
    log.log(
      `${name}\u0000${String(e?.code ?? reason(error))}`,
      `subscriber ${name} failed (attempt ${attempt}); its page is retried from its checkpoint`,
      error,
    );
  };
};
