import { Writable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { DomainError } from '@fleet/kernel';
import { ErrorFilter } from '../errors/error.filter';
import { createLoggers, createPino, PinoLoggerService } from './logger';

/** A pino destination that keeps each JSON line. */
const capture = (): { lines: Array<Record<string, unknown>>; stream: Writable } => {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
};

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('the pino logger behind Nest', () => {
  afterEach(() => Logger.overrideLogger(false));

  it('writes a Nest log call as one JSON line with its context', async () => {
    const { lines, stream } = capture();
    Logger.overrideLogger(new PinoLoggerService(createPino('info', stream)));
    new Logger('runtime').log('read models caught up');
    await flush();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        context: 'runtime',
        msg: 'read models caught up',
        service: 'control-plane',
        time: expect.any(String),
      }),
    ]);
  });

  it('keeps the fields of an object message, as the error filter logs them', async () => {
    const { lines, stream } = capture();
    Logger.overrideLogger(new PinoLoggerService(createPino('info', stream)));
    new Logger('http').error(
      { correlationId: 'c-1', err: { message: 'boom' } },
      'unexpected error',
    );
    await flush();
    expect(lines[0]).toMatchObject({
      level: 'error',
      context: 'http',
      correlationId: 'c-1',
      err: { message: 'boom' },
      msg: 'unexpected error',
    });
  });

  it('keeps a stack passed the Nest way as `stack`', async () => {
    const { lines, stream } = capture();
    const logger = new PinoLoggerService(createPino('info', stream));
    const error = new Error('kaput');
    logger.error('handler failed', error.stack, 'jobs');
    await flush();
    expect(lines[0]).toMatchObject({ msg: 'handler failed', context: 'jobs', stack: error.stack });
  });

  it('honours the level, and writes nothing when silent', async () => {
    const quiet = capture();
    const warnOnly = new PinoLoggerService(createPino('warn', quiet.stream));
    warnOnly.log('not shown', 'x');
    warnOnly.debug('not shown', 'x');
    warnOnly.warn('shown', 'x');
    const silent = capture();
    new PinoLoggerService(createPino('silent', silent.stream)).error('nothing', 'x');
    await flush();
    expect(quiet.lines.map((l) => l.msg)).toEqual(['shown']);
    expect(silent.lines).toEqual([]);
  });

  it("turns Nest's start-up chatter down to debug", async () => {
    const { lines, stream } = capture();
    const logger = new PinoLoggerService(createPino('info', stream));
    logger.log('Mapped {/v1/events, GET} route', 'RouterExplorer');
    await flush();
    expect(lines).toEqual([]);
  });

  it('redacts an authorization header whoever logs it', async () => {
    const { lines, stream } = capture();
    const pino = createPino('info', stream);
    pino.info({ headers: { authorization: 'Bearer secret.jwt.value', host: 'x' } }, 'oops');
    pino.info({ req: { headers: { authorization: 'Bearer secret.jwt.value' } } }, 'oops');
    await flush();
    expect(JSON.stringify(lines)).not.toContain('secret.jwt.value');
    expect(lines[0]).toMatchObject({ headers: { authorization: '[redacted]', host: 'x' } });
  });

  it('writes the request line and the app lines to one destination, the app lines redacted', async () => {
    const { lines, stream } = capture();
    const { app, requests } = createLoggers('info', stream);
    const service = new PinoLoggerService(app, requests);
    service.requests.info(
      { method: 'POST', route: '/v1/nodes/:nodeId/cordon', status: 200 },
      'request',
    );
    service.pino.info({ headers: { authorization: 'Bearer secret.jwt.value' } }, 'oops');
    await flush();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        service: 'control-plane',
        context: 'http',
        method: 'POST',
        route: '/v1/nodes/:nodeId/cordon',
        status: 200,
        msg: 'request',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      }),
      expect.objectContaining({ headers: { authorization: '[redacted]' }, msg: 'oops' }),
    ]);
  });

  it('honours the level on the request line too', async () => {
    const { lines, stream } = capture();
    const { requests } = createLoggers('warn', stream);
    requests.info({ status: 200 }, 'request');
    requests.warn({ status: 503 }, 'request refused: a store is unavailable');
    await flush();
    expect(lines.map((l) => l.status)).toEqual([503]);
  });
});

describe('ErrorFilter.describe for an unexpected error', () => {
  afterEach(() => Logger.overrideLogger(false));

  it('answers 500 internal_error naming only the correlation id, and logs the cause as JSON', async () => {
    const { lines, stream } = capture();
    Logger.overrideLogger(new PinoLoggerService(createPino('info', stream)));
    const secret = new Error('connect ECONNREFUSED 10.0.0.7:27017 user=admin password=hunter2');
    const [status, body] = new ErrorFilter().describe(secret, 'corr-42');
    await flush();
    expect(status).toBe(500);
    expect(body).toEqual({
      error: {
        code: 'internal_error',
        message: expect.any(String),
        details: { correlationId: 'corr-42' },
      },
    });
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|10\.0\.0\.7|hunter2|stack|Error/);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'error',
        context: 'http',
        correlationId: 'corr-42',
        msg: 'unexpected error',
        err: expect.objectContaining({ message: secret.message, stack: secret.stack }),
      }),
    ]);
  });

  it('does not log a refusal, which is no error of ours', async () => {
    const { lines, stream } = capture();
    Logger.overrideLogger(new PinoLoggerService(createPino('info', stream)));
    const [status] = new ErrorFilter().describe(
      new DomainError('node_busy', 'node holds sessions', 'conflict'),
      'corr-1',
    );
    await flush();
    expect(status).toBe(409);
    expect(lines).toEqual([]);
  });
});
