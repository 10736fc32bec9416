import { dueSlot, nextRuns } from './backup-schedule';

describe('a backup schedule', () => {
  it('lists the next runs after a moment, in UTC', () => {
    expect(nextRuns('0 3 * * *', new Date('2026-12-07T02:59:00Z'), 3)).toEqual([
      '2026-12-07T03:00:00.000Z',
      '2026-12-08T03:00:00.000Z',
      '2026-12-09T03:00:00.000Z',
    ]);
    expect(nextRuns('0 3 * * *', new Date('2026-12-07T03:00:00Z'), 1)).toEqual([
      '2026-12-08T03:00:00.000Z',
    ]);
  });

  describe('the slot due now', () => {
    const since = '2026-12-01T00:00:00.000Z';
    it('is none before the first slot after the policy was set', () => {
      expect(
        dueSlot('0 3 * * *', '2026-12-07T03:30:00Z', null, new Date('2026-12-08T02:00:00Z')),
      ).toBeNull();
    });
    it('is the slot at now exactly, once', () => {
      const now = new Date('2026-12-07T03:00:00Z');
      expect(dueSlot('0 3 * * *', since, '2026-12-06T03:00:00.000Z', now)).toBe(
        '2026-12-07T03:00:00.000Z',
      );
      expect(dueSlot('0 3 * * *', since, '2026-12-07T03:00:00.000Z', now)).toBeNull();
    });
    it('is one run for every slot missed while down: the latest', () => {
      const now = new Date('2026-12-10T09:00:00Z');
      expect(dueSlot('0 3 * * *', since, '2026-12-06T03:00:00.000Z', now)).toBe(
        '2026-12-10T03:00:00.000Z',
      );
    });
  });
});
