import { SYSTEM_ACTOR, systemContext } from './messages';

describe('systemContext', () => {
  const now = new Date('2026-12-03T10:00:00.000Z');

  it('joins the correlation of the event that caused it, which is its cause', () => {
    const cause = { eventId: 'e-1', metadata: { correlationId: 'corr-1' } };
    expect(systemContext('cmd-1', { cause, now, correlationId: 'ignored' })).toEqual({
      commandId: 'cmd-1',
      correlationId: 'corr-1',
      causationId: 'e-1',
      actor: SYSTEM_ACTOR,
      now,
    });
  });

  it('without a cause takes the ids given, else starts a chain of its own', () => {
    expect(
      systemContext('cmd-2', { correlationId: 'corr-2', causationId: 'job-2', now }),
    ).toMatchObject({
      correlationId: 'corr-2',
      causationId: 'job-2',
    });
    expect(systemContext('cmd-3', { correlationId: 'corr-3', now })).toMatchObject({
      correlationId: 'corr-3',
      causationId: 'cmd-3',
    });
    expect(systemContext('cmd-4', { now })).toMatchObject({
      correlationId: 'cmd-4',
      causationId: 'cmd-4',
    });
  });

  it('is dated now unless told otherwise, and always acts as the system', () => {
    const before = Date.now();
    const ctx = systemContext('cmd-5');
    expect(ctx.now.getTime()).toBeGreaterThanOrEqual(before);
    expect(ctx.now.getTime()).toBeLessThanOrEqual(Date.now());
    expect(ctx.actor).toBe(SYSTEM_ACTOR);
  });

  it("carries the leader's lease epoch when issued by its periodic work, and none otherwise", () => {
    expect(systemContext('cmd-6', { now, leaderEpoch: 3 })).toMatchObject({ leaderEpoch: 3 });
    expect(systemContext('cmd-7', { now })).not.toHaveProperty('leaderEpoch');
  });
});
