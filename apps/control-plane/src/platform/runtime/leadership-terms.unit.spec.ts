import { StaleLeaderError } from '@fleet/eventstore/port';
import { LeadershipEvent, TakeLeadership, leadershipDecider } from './leadership-terms';

const at = '2026-12-07T00:00:00.000Z';
const taken = (epoch: number): LeadershipEvent => ({
  type: 'LeadershipTaken',
  data: { epoch, at },
});
const take = (epoch: number): TakeLeadership => ({ type: 'TakeLeadership', data: { epoch, at } });

const given = (events: LeadershipEvent[]) => ({
  when: (command: TakeLeadership) =>
    leadershipDecider.decide(
      command,
      events.reduce(leadershipDecider.evolve, leadershipDecider.initialState()),
    ),
});

describe('leadership terms', () => {
  it('records the first term', () => {
    expect(given([]).when(take(1))).toEqual([taken(1)]);
  });

  it('records a newer term than the newest recorded', () => {
    expect(given([taken(1), taken(3)]).when(take(7))).toEqual([taken(7)]);
  });

  it('records nothing for the newest term again (a retry, or the same term twice)', () => {
    expect(given([taken(1), taken(3)]).when(take(3))).toEqual([]);
  });

  it("refuses an older term: a stale leader's", () => {
    expect(() => given([taken(5)]).when(take(4))).toThrow(StaleLeaderError);
  });
});
