/**
 * A process that opens the event log given as argv[2] exclusively, appends one event to
 * stream 'held', tells its parent over IPC and waits to be killed (a control plane holding
 * its DATA_DIR).
 */
import { SqliteEventStore } from '../../src/sqlite-event-store';
import { testEvent } from './test-event';

const store = new SqliteEventStore({ file: process.argv[2], exclusive: true });
void store.append('held', [testEvent('Held.v1')], 'no_stream').then(() => {
  process.send?.('held');
  setInterval(() => undefined, 60_000);
});
