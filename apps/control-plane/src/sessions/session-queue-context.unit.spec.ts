import { StoredEvent, asLogPosition } from '@fleet/eventstore/port';
import { SYSTEM_ACTOR } from '@fleet/kernel';
import { Step, sessionEvent, storedSessionEvent } from '../../../../test/support/session-events';
import { queuedByIn, queuedSessionContext } from './session-queue.workflow';
import { sessionStreamId } from './session.events';

const T0 = '2026-12-02T10:00:00.000Z';
const T1 = '2026-12-02T10:10:00.000Z';
const NOW = new Date('2026-12-02T10:30:00.000Z');
const PASS = '01a23e27-0000-7000-8000-000000000000';

const stream = (...steps: Step[]): StoredEvent[] =>
  steps.map((step, revision) => ({
    ...storedSessionEvent(
      sessionEvent('s1', step),
      `00000000-0000-4000-8000-00000000000${revision}`,
    ),
    streamId: sessionStreamId('s1'),
    revision,
    position: asLogPosition(revision + 1),
  }));

describe('the context of a placement from the queue', () => {
  const queuedBy = { eventId: 'requested-1', correlationId: 'carol-request' };

  it('is a system command caused by the event that queued the session, in its correlation', () => {
    expect(queuedSessionContext(PASS, 's1', queuedBy, NOW)).toMatchObject({
      correlationId: 'carol-request',
      causationId: 'requested-1',
      actor: SYSTEM_ACTOR,
      now: NOW,
    });
  });

  it('is one command per session of a pass, each in the chain of its own request', () => {
    const a = queuedSessionContext(PASS, 's1', queuedBy, NOW);
    const b = queuedSessionContext(
      PASS,
      's2',
      { eventId: 'requested-2', correlationId: 'dave-request' },
      NOW,
    );
    expect(a.commandId).not.toBe(b.commandId);
    expect(a.correlationId).not.toBe(b.correlationId);
    // Derived from the pass (time-ordered like it): the same pass and session, the same command.
    expect(queuedSessionContext(PASS, 's1', queuedBy, NOW).commandId).toBe(a.commandId);
    expect(a.commandId.slice(0, 18)).toBe(PASS.slice(0, 18));
  });

  it('without a queuing event is a chain of its own, not one shared by the pass', () => {
    const ctx = queuedSessionContext(PASS, 's1', null, NOW);
    expect(ctx.correlationId).toBe(ctx.commandId);
    expect(ctx.causationId).toBe(ctx.commandId);
  });
});

describe('the event that queued a session, found in its stream', () => {
  it('is the request of a session never placed', () => {
    const [requested] = stream({ requested: T0, owner: 'alice' });
    expect(queuedByIn([requested])).toEqual({
      eventId: requested.eventId,
      correlationId: requested.metadata.correlationId,
    });
  });

  it('is the last resume request of a resumed session', () => {
    const events = stream(
      { requested: T0, owner: 'alice' },
      { started: T0 },
      { paused: T1 },
      { resumeRequested: T1 },
    );
    expect(queuedByIn(events)).toEqual({
      eventId: events[3].eventId,
      correlationId: events[3].metadata.correlationId,
    });
  });

  it('is none in an empty stream', () => {
    expect(queuedByIn([])).toBeNull();
  });
});
