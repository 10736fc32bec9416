import { ThrottledLog } from './throttled-log';

describe('ThrottledLog', () => {
  const setup = () => {
    let now = 0;
    const lines: string[] = [];
    const log = new ThrottledLog(
      (message) => lines.push(message),
      10_000,
      () => now,
    );
    return { log, lines, advance: (ms: number) => (now += ms) };
  };

  it('logs the first occurrence at once and counts the repeats of its window', () => {
    const { log, lines, advance } = setup();
    log.log('ECONNREFUSED', 'jobs: redis:', new Error('x'));
    for (let i = 0; i < 50; i++) log.log('ECONNREFUSED', 'jobs: worker a:', new Error('x'));
    expect(lines).toEqual(['jobs: redis:']);
    advance(10_000);
    log.log('ECONNREFUSED', 'jobs: worker b:', new Error('x'));
    expect(lines).toEqual([
      'jobs: redis:',
      'jobs: worker b: (and 50 more like it since the last report)',
    ]);
  });

  it('keeps kinds of failure apart, and logs again at once after clear', () => {
    const { log, lines } = setup();
    log.log('ECONNREFUSED', 'a', null);
    log.log('ECONNRESET', 'b', null);
    log.log('ECONNREFUSED', 'c', null);
    expect(lines).toEqual(['a', 'b']);
    log.clear();
    log.log('ECONNREFUSED', 'd', null);
    expect(lines).toEqual(['a', 'b', 'd']);
  });

  it('groups errors by their code, else their message', () => {
    const { log, lines } = setup();
    log.failure('a', Object.assign(new Error('connect 1'), { code: 'ECONNREFUSED' }));
    log.failure('b', Object.assign(new Error('connect 2'), { code: 'ECONNREFUSED' }));
    log.failure('c', new Error('Connection is closed.'));
    log.failure('d', new Error('Connection is closed.'));
    expect(lines).toEqual(['a', 'c']);
  });
});
