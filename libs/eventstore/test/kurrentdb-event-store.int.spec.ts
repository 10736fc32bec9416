import { KURRENTDB_SCHEMES } from '../src/kurrentdb-connection';
import { KurrentDbEventStore } from '../src/kurrentdb-event-store';
import { eventStoreContract } from './event-store.contract';

// Runs only where a KurrentDB (or EventStoreDB) is reachable (docker-compose sets EVENTSTORE_URL).
const url = process.env.EVENTSTORE_URL;
const isKurrentDb = KURRENTDB_SCHEMES.some((scheme) => url?.startsWith(`${scheme}//`));

(isKurrentDb ? describe : describe.skip)('KurrentDbEventStore', () => {
  eventStoreContract('KurrentDbEventStore', async () => {
    const store = KurrentDbEventStore.fromConnectionString(url ?? '');
    // Streams are unique per test, so nothing needs deleting from the shared server.
    return { store, cleanup: () => store.close() };
  });
});
