import { EsdbEventStore } from '../src/esdb-event-store';
import { eventStoreContract } from './event-store.contract';

// Runs only where an EventStoreDB is reachable (docker-compose sets EVENTSTORE_URL).
const url = process.env.EVENTSTORE_URL;

(url ? describe : describe.skip)('EsdbEventStore', () => {
  eventStoreContract('EsdbEventStore', async () => {
    const store = EsdbEventStore.fromConnectionString(url ?? '');
    // Streams are unique per test, so nothing needs deleting from the shared server.
    return { store, cleanup: () => store.close() };
  });
});
