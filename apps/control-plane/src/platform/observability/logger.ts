import { Logger as NestLogger, LoggerService } from '@nestjs/common';
import pino, { DestinationStream, Logger } from 'pino';
import { Config } from '../../config/config';
import type { FailureSink } from '@fleet/kernel/throttled-log';

/**
 * Paths censored in every log line. Nothing we log on purpose carries a header, so this is
 * defence in depth against a future `logger.info({ headers })`.
 */
export const REDACTED_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  '*.authorization',
  '*.headers.authorization',
  'token',
  '*.token',
];

export const createPino = (
  level: Config['logLevel'],
  destination?: DestinationStream,
  options: { redact?: boolean } = {},
): Logger =>
  pino(
    {
      level,
      base: { service: 'control-plane' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      ...(options.redact === false
        ? {}
        : { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }),
    },
    destination,
  );

/**
 * The app's loggers on one destination (stdout unless given): `app` for everything, with
 * redaction, and `requests` for the one line per answered request. That line's fields are
 * fixed scalars (method, route template, status, ms, correlation id, subject), so it skips
 * the redaction pass, about half of a line's cost (docs/PERFORMANCE.md).
 */
export const createLoggers = (
  level: Config['logLevel'],
  destination: DestinationStream = pino.destination({ dest: 1, sync: true }),
): { app: Logger; requests: Logger } => ({
  app: createPino(level, destination),
  requests: createPino(level, destination, { redact: false }).child({ context: 'http' }),
});

// Nest's start-up chatter (one line per module and route) is noise at info level.
const QUIET_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

const STACK = /\n\s+at /;

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's LoggerService on pino, so `new Logger('x').error({ correlationId, err }, 'text')`
 * anywhere in the app comes out as one JSON line with those fields and `context: 'x'`.
 */
export class PinoLoggerService implements LoggerService {
  /** The request log's logger: `context: 'http'`, fixed scalar fields only (createLoggers). */
  readonly requests: Logger;

  constructor(
    readonly pino: Logger,
    requests?: Logger,
  ) {
    this.requests = requests ?? pino.child({ context: 'http' });
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /**
   * Nest calls `(message, ...extra, context)`: a Logger with a context always appends it last
   * (after an `undefined` placeholder when there was no extra). An extra string that looks like
   * a stack is kept as `stack`; another one becomes the message when the message was an object.
   */
  private write(level: Level, message: unknown, params: unknown[]): void {
    const rest = [...params];
    let context: string | undefined;
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string') {
      context = rest.pop() as string;
    }
    const fields: Record<string, unknown> = {};
    if (context !== undefined) fields.context = context;
    let text: string | undefined;
    if (message instanceof Error) {
      fields.err = { name: message.name, message: message.message, stack: message.stack };
      text = message.message;
    } else if (message !== null && typeof message === 'object') {
      Object.assign(fields, message);
    } else if (message !== undefined) {
      text = String(message);
    }
    const extra: unknown[] = [];
    for (const param of rest) {
      if (param === undefined) continue;
      if (typeof param === 'string' && STACK.test(param)) fields.stack = param;
      else if (typeof param === 'string' && text === undefined) text = param;
      else extra.push(param);
    }
    if (extra.length) fields.extra = extra;
    const effective: Level =
      level === 'info' && context !== undefined && QUIET_CONTEXTS.has(context) ? 'debug' : level;
    this.pino[effective](fields, text);
  }
}

/**
 * A failure sink for the stores' clients (Redis connections, job workers): one JSON line at
 * error level through the app's logger, `context` naming the client, with the error's name,
 * code and message (a connection failure's stack says nothing the code does not).
 */
export const failureLog = (context: string): FailureSink => {
  const logger = new NestLogger(context);
  return (message, error) => {
    const e = error as { name?: unknown; code?: unknown; message?: unknown } | null;
    const err =
      e !== null && typeof e === 'object'
        ? { name: e.name, code: e.code, message: e.message }
        : { message: String(error) };
    logger.error({ err }, message);
  };
};
