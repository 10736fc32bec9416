import { eventIdFor, uuidFrom, uuidV7 } from '@fleet/kernel';
import { sessionIdFor, stepCommandId } from './step-ids';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the command id of a step', () => {
  const request = uuidV7(Date.parse('2026-12-03T00:00:00Z'));

  it('is the same for the same step of the same parent (a retried step is the same command)', () => {
    expect(stepCommandId(request, 'allocate', 'n1', 's1')).toBe(
      stepCommandId(request, 'allocate', 'n1', 's1'),
    );
  });

  it('differs per step and per parent', () => {
    const ids = new Set([
      stepCommandId(request, 'allocate', 'n1', 's1'),
      stepCommandId(request, 'allocate', 'n2', 's1'),
      stepCommandId(request, 'place', 's1', 'n1'),
      stepCommandId(uuidV7(Date.parse('2026-12-03T00:00:00Z')), 'allocate', 'n1', 's1'),
    ]);
    expect(ids.size).toBe(4);
  });

  it('keeps the first 8 bytes (time and counter) of a UUIDv7 parent, so its events sort with the request', () => {
    const step = stepCommandId(request, 'allocate', 'n1', 's1');
    expect(step).toMatch(UUID);
    expect(step.slice(0, 18)).toBe(request.slice(0, 18));
    expect(eventIdFor(step, 0).slice(0, 18)).toBe(eventIdFor(request, 0).slice(0, 18));
    const later = uuidV7(Date.parse('2026-12-03T00:00:01Z'));
    expect(stepCommandId(later, 'place').localeCompare(step)).toBeGreaterThan(0);
  });

  it('keeps the first 8 bytes of an event id made from a UUIDv7 command (a reaction to it)', () => {
    const event = eventIdFor(request, 0);
    expect(stepCommandId(event, 'release').slice(0, 18)).toBe(event.slice(0, 18));
  });

  it('is a plain derived id under a parent that is not time-ordered', () => {
    const keyed = uuidFrom('idempotency-key', 'k1');
    expect(stepCommandId(keyed, 'place')).toBe(uuidFrom(keyed, 'place'));
  });
});

describe('the id of a session', () => {
  it('is what it always was under a keyed create (a retry across versions is the same session)', () => {
    const keyed = uuidFrom('idempotency', 'scope');
    expect(sessionIdFor(keyed)).toBe(uuidFrom('session', keyed));
  });

  it('sorts with its create command when that is a UUIDv7', () => {
    const first = uuidV7(Date.parse('2026-12-03T00:00:00Z'));
    const second = uuidV7(Date.parse('2026-12-03T00:00:01Z'));
    expect(sessionIdFor(first)).toMatch(UUID);
    expect(sessionIdFor(first).slice(0, 18)).toBe(first.slice(0, 18));
    expect(sessionIdFor(first)).toBe(sessionIdFor(first));
    expect(sessionIdFor(second).localeCompare(sessionIdFor(first))).toBeGreaterThan(0);
  });
});
