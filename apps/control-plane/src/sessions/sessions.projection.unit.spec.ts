import { Cause } from '@fleet/kernel';
import { Step, sessionEvent } from '../../../../test/support/session-events';
import { SessionDoc, projectSession } from './sessions.projection';

const T0 = '2026-12-02T10:00:00.000Z';
const T1 = '2026-12-02T10:10:00.000Z';
const T2 = '2026-12-02T10:20:00.000Z';

const cause = (eventId: string): Cause => ({
  eventId,
  metadata: { correlationId: `corr-of-${eventId}` },
});

/** The document after `steps`, the n-th event stored with id `e<n>`. */
const after = (...steps: Step[]): SessionDoc | null =>
  steps.reduce<SessionDoc | null>(
    (doc, step, i) => projectSession(doc, sessionEvent('s1', step), i, cause(`e${i}`)),
    null,
  );

describe('the Sessions read model: the event that queued a session', () => {
  it('is the request while the session waits for its first placement', () => {
    expect(after({ requested: T0, owner: 'alice' })?.queuedBy).toEqual({
      eventId: 'e0',
      correlationId: 'corr-of-e0',
    });
  });

  it('is gone once the session runs, and for a terminated one', () => {
    expect(after({ requested: T0, owner: 'alice' }, { started: T0 })?.queuedBy).toBeNull();
    expect(after({ requested: T0, owner: 'alice' }, { terminated: T1 })?.queuedBy).toBeNull();
  });

  it('is the resume request for a resumed session that waits, until it runs again', () => {
    const waiting = after(
      { requested: T0, owner: 'alice' },
      { started: T0 },
      { paused: T1 },
      { resumeRequested: T2 },
    );
    expect(waiting).toMatchObject({
      status: 'queued',
      queuedBy: { eventId: 'e3', correlationId: 'corr-of-e3' },
    });
    expect(
      after(
        { requested: T0, owner: 'alice' },
        { started: T0 },
        { paused: T1 },
        { resumeRequested: T2 },
        { resumed: T2 },
      )?.queuedBy,
    ).toBeNull();
  });
});
