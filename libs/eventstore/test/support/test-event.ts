import { randomUUID } from 'node:crypto';
import { NewEvent } from '../../src/port';

/** A new event with a fresh id and system metadata, for the SQLite store's own tests. */
export const testEvent = (type = 'TestHappened.v1', data: unknown = {}): NewEvent => ({
  eventId: randomUUID(),
  type,
  data,
  metadata: {
    correlationId: 'c',
    causationId: 'c',
    actor: { sub: 'system', roles: ['system'] },
    occurredAt: new Date(0).toISOString(),
    schemaVersion: 1,
  },
});
