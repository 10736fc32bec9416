import {
  AccessDeniedError,
  UnavailableError as KurrentUnavailable,
} from '@kurrent/kurrentdb-client';
import { ReplyError } from 'ioredis';
import { MongoParseError, MongoServerError } from 'mongodb';
import { UnavailableError } from '@fleet/kernel';
import { EventStoreInUseError } from '@fleet/eventstore/sqlite-event-store';
import { ConfigError } from '../../config/config';
import { EXIT, StoreUrls, describeFailure, subscriberFailures } from './failures';
import { StoreUnreachableError } from './wait-for-stores';

const all: StoreUrls = {
  eventstoreUrl: 'kurrentdb://admin:es-secret@eventstore:2113?tls=false',
  mongoUrl: 'mongodb://fleet:mongo-secret@mongo:27017/fleet?replicaSet=rs0',
  redisUrl: 'redis://:redis-secret@redis:6379',
};

const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:6379'), {
  code: 'ECONNREFUSED',
});

describe('describeFailure', () => {
  it('gives 78 and the setting for invalid configuration', async () => {
    const error = new ConfigError('START_TIMEOUT_SEC', 'expected 1 to 3600, got 0');
    expect(await describeFailure(error, all)).toEqual({
      code: EXIT.config,
      line: 'invalid configuration: START_TIMEOUT_SEC: expected 1 to 3600, got 0',
    });
  });

  it('gives 1 and its own words for the refusals the start knows', async () => {
    const unreachable = new StoreUnreachableError(['MONGO_URL'], 'MONGO_URL (…) did not answer');
    expect(await describeFailure(unreachable, all)).toEqual({
      code: EXIT.storeFailed,
      line: 'MONGO_URL (…) did not answer',
    });
    const inUse = new EventStoreInUseError('/data/events.db');
    expect(await describeFailure(inUse, {})).toEqual({
      code: EXIT.storeFailed,
      line: inUse.message,
    });
    const unavailable = new UnavailableError('read models (MongoDB)', refused);
    expect(await describeFailure(unavailable, all)).toEqual({
      code: EXIT.storeFailed,
      line: 'read models (MongoDB) is not answering: connect ECONNREFUSED 10.0.0.9:6379',
    });
  });

  it('names the store whose client threw, where it points and what it said, with 1, never the password', async () => {
    const cases: [unknown, string, string][] = [
      [
        new MongoServerError({ message: 'Authentication failed.', code: 18 }),
        'MONGO_URL',
        'MONGO_URL (mongodb://mongo:27017): MongoDB MongoServerError: Authentication failed.',
      ],
      [
        new AccessDeniedError(),
        'EVENTSTORE_URL',
        'EVENTSTORE_URL (kurrentdb://eventstore:2113): KurrentDB AccessDeniedError',
      ],
      [
        new KurrentUnavailable(undefined, 'no leader'),
        'EVENTSTORE_URL',
        'EVENTSTORE_URL (kurrentdb://eventstore:2113): KurrentDB UnavailableError: no leader',
      ],
      [
        new ReplyError('WRONGPASS invalid username-password pair'),
        'REDIS_URL',
        'REDIS_URL (redis://redis:6379): Redis ReplyError: WRONGPASS invalid username-password pair',
      ],
      [
        refused,
        'REDIS_URL',
        'REDIS_URL (redis://redis:6379): Redis Error: connect ECONNREFUSED 10.0.0.9:6379',
      ],
    ];
    for (const [error, setting, line] of cases) {
      const failure = await describeFailure(error, all);
      expect(failure).toEqual({ code: EXIT.storeFailed, line, setting });
      expect(failure.line).not.toMatch(/secret/);
    }
  });

  it('gives 78 for a MongoDB URL its client cannot read', async () => {
    const failure = await describeFailure(
      new MongoParseError('directConnection must be either "true" or "false"'),
      all,
    );
    expect(failure).toMatchObject({
      code: EXIT.config,
      line: 'invalid configuration: MONGO_URL: the MongoDB client cannot read it: directConnection must be either "true" or "false"',
    });
  });

  it('does not blame a store that is not configured', async () => {
    const failure = await describeFailure(
      new MongoServerError({ message: 'Authentication failed.' }),
      { redisUrl: all.redisUrl },
    );
    expect(failure.code).toBe(EXIT.unexpected);
    expect(failure.setting).toBeUndefined();
    expect(failure.line).toBe('MongoServerError: Authentication failed.');
  });

  it('gives 70 with the name, the message and the stack for anything else', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'x')");
    expect(await describeFailure(bug, all)).toEqual({
      code: EXIT.unexpected,
      line: "TypeError: Cannot read properties of undefined (reading 'x')",
      stack: bug.stack,
    });
    expect(await describeFailure('thrown string', {})).toEqual({
      code: EXIT.unexpected,
      line: 'string: thrown string',
      stack: undefined,
    });
  });
});

describe('subscriberFailures', () => {
  it('logs a failing subscriber once per kind of error, naming it and the attempt', () => {
    const lines: [string, unknown][] = [];
    const onError = subscriberFailures((message, error) => lines.push([message, error]));
    const down = new MongoServerError({ message: 'not primary', code: 10107 });
    onError('nodes-projection', down, 1);
    onError('nodes-projection', down, 2);
    onError('sessions-projection', down, 1);
    onError('nodes-projection', new TypeError('x is undefined'), 3);
    expect(lines).toEqual([
      [
        'subscriber nodes-projection failed (attempt 1); its page is retried from its checkpoint',
        down,
      ],
      [
        'subscriber sessions-projection failed (attempt 1); its page is retried from its checkpoint',
        down,
      ],
      [
        'subscriber nodes-projection failed (attempt 3); its page is retried from its checkpoint',
        expect.any(TypeError),
      ],
    ]);
  });
});
