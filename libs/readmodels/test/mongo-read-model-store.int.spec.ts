import { randomUUID } from 'node:crypto';
import { MongoReadModelStore } from '../src/mongo-read-model-store';
import { readModelStoreContract } from './read-model-store.contract';

// Runs against a real server only when one is configured (docker-compose, CI with Mongo).
const url = process.env.MONGO_URL;

(url ? describe : describe.skip)('MongoDB adapter', () => {
  readModelStoreContract('mongo', async () => {
    // A fresh database per test: tests never see each other's documents.
    const store = new MongoReadModelStore({
      url: url ?? '',
      dbName: `readmodels_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
    });
    await store.connect();
    return {
      store,
      cleanup: async () => {
        await store.reset();
        await store.close();
      },
    };
  });
});
