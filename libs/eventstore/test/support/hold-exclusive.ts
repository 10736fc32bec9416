/**
 * A process that opens the event log given as argv[2] exclusively, appends one event to
 * stream 'held', tells its parent over IPC and waits to be killed (a control plane holding
 * its DATA_DIR).
 */
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '../../src/sqlite-event-store';

const store = new SqliteEventStore({ file: process.argv[2], exclusive: true });
void store
  .append(
    'held',
    [
      {
        eventId: randomUUID(),
        type: 'Held.v1',
        data: {},
        metadata: {
          correlationId: 'c',
          causationId: 'c',
          actor: { sub: 'system', roles: ['system'] },
          occurredAt: new Date(0).toISOString(),
          schemaVersion: 1,
        },
      },
    ],
    'no_stream',
  )
  .then(() => {
    process.send?.('held');
    setInterval(() => undefined, 60_000);
  });
