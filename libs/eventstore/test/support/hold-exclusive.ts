/**
 * A process that opens the event log given as argv[2] exclusively, appends one event to
 * stream 'held', tells its parent over IPC and waits to be killed (a control plane holding
 * its DATA_DIR).
 */
import { SqliteEventStore } from '../../src/sqlite-event-store';
import { testEvent } from './test-event';

const store = new SqliteEventStore({ file: process.argv[2], exclusive: true });
// Kept reachable until the process dies: an unreachable store is garbage, and collecting it
// closes the database and drops the lock this process is here to hold (CI saw that happen).
(globalThis as { heldStore?: SqliteEventStore }).heldStore = store;
void store.append('held', [testEvent('Held.v1')], 'no_stream').then(() => {
  setInterval(() => undefined, 60_000);
  // With --expose-gc (as the spec runs it) collect first, off the append's own stack, so a
  // store left unreachable is closed before the parent looks, not at some luckier moment.
  setImmediate(() => {
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.('held');
  });
});
