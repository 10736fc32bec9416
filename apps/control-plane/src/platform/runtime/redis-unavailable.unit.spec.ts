import { UnavailableError } from '@fleet/kernel';
import { isRedisUnreachable, unavailableAs } from './redis-unavailable';

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

describe('unavailableAs', () => {
  it('turns Redis out of reach into UnavailableError naming the store, and leaves other errors', () => {
    const handle = unavailableAs('heartbeat store (Redis)');
    const down = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    expect(() => handle(down)).toThrow(UnavailableError);
    expect(() => handle(down)).toThrow(/heartbeat store \(Redis\) is not answering/);
    const refused = new Error('WRONGTYPE Operation against a key');
    expect(() => handle(refused)).toThrow(refused);
  });
});
