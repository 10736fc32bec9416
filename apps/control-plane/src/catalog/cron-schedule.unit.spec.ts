import { scheduleProblem } from './cron-schedule';

describe('a cron schedule (velero at create, the backup policy)', () => {
  it('takes five-field cron expressions', () => {
    for (const ok of ['0 3 * * *', '*/15 * * * *', '0 0 1 1 *', '30 2 * * 1-5', '0 4 * * sun']) {
      expect(scheduleProblem(ok)).toBeNull();
    }
  });

  it('refuses other field counts, macros and values out of range, saying why', () => {
    expect(scheduleProblem('0 0 3 * * *')).toMatch(/five-field.*found 6 fields/);
    expect(scheduleProblem('@daily')).toMatch(/found 1 fields/);
    expect(scheduleProblem('')).toMatch(/found 0 fields/);
    expect(scheduleProblem('61 3 * * *')).toMatch(/five-field cron expression.*: .+/);
    expect(scheduleProblem('0 25 * * *')).not.toBeNull();
    expect(scheduleProblem('0 3 * * funday')).not.toBeNull();
  });
});
