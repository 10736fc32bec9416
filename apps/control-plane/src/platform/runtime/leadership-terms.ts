import { Decider, EventCodec, Message } from '@fleet/kernel';
import { LEADERSHIP_STREAM, StaleLeaderError } from '@fleet/eventstore/port';

/**
 * The leaders' terms as the log records them (`leadership-terms`): each leader records its
 * lease term before its periodic work appends, and the event store refuses an append written
 * in an older term than the newest recorded (fencing, port.ts).
 */
export type LeadershipTaken = Message<'LeadershipTaken', { epoch: number; at: string }>;
export type LeadershipEvent = LeadershipTaken;

export type TakeLeadership = Message<'TakeLeadership', { epoch: number; at: string }>;

export type LeadershipState = { readonly newest: number };

export const leadershipCodec = new EventCodec<LeadershipEvent>({ LeadershipTaken: 1 });

/**
 * A term newer than the newest recorded is recorded; the newest again changes nothing (a retry,
 * or a replica that took the same term); an older one is a stale leader's, refused.
 */
export const leadershipDecider: Decider<TakeLeadership, LeadershipEvent, LeadershipState> = {
  initialState: () => ({ newest: 0 }),
  evolve: (state, event) => ({ newest: Math.max(state.newest, event.data.epoch) }),
  decide: (command, state) => {
    const { epoch } = command.data;
    if (epoch > state.newest) return [{ type: 'LeadershipTaken', data: command.data }];
    if (epoch === state.newest) return [];
    throw new StaleLeaderError(LEADERSHIP_STREAM, epoch, state.newest);
  },
};

export const leadershipAggregate = {
  name: 'leadership',
  decider: leadershipDecider,
  codec: leadershipCodec,
};
