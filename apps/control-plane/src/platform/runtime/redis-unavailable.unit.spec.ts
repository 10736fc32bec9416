import { isRedisUnreachable } from './redis-unavailable';

describe('isRedisUnreachable', () => {
  it('tells Redis out of reach from a command Redis refused', () => {
    const maxRetries = Object.defineProperty(new Error('Reached the max retries'), 'name', {
      value: 'MaxRetriesPerRequestError',
    });
    expect(isRedisUnreachable(maxRetries)).toBe(true);
    expect(isRedisUnreachable(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe(
      true,
    );
    expect(isRedisUnreachable(new Error('Connection is closed.'))).toBe(true);
    expect(isRedisUnreachable(new Error('WRONGTYPE Operation against a key'))).toBe(false);
    expect(isRedisUnreachable(null)).toBe(false);
  });
});
