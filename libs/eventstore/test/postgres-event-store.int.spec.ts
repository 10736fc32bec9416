import { PostgresEventStore } from '../src/postgres-event-store';
import { eventStoreContract } from './event-store.contract';
import { createTestDatabase } from './support/postgres-database';

eventStoreContract('PostgresEventStore', async () => {
  const db = await createTestDatabase();
  const store = new PostgresEventStore({ url: db.url, pollMs: 100 });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await db.drop();
    },
  };
});
