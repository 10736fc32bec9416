import { randomUUID } from 'node:crypto';
import { MongoReadModelStore } from '../src/mongo-read-model-store';
import { readModelStoreContract } from './read-model-store.contract';

// Runs against a real server only when one is configured (docker-compose, CI with Mongo).
const url = process.env.MONGO_URL;

(url ? describe : describe.skip)('MongoDB adapter', () => {
  readModelStoreContract('mongo', async () => {
    // A fresh database per test: tests never see each other's documents.
    const dbName = `readmodels_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
    const store = new MongoReadModelStore({ url: url ?? '', dbName });
    await store.connect();
    const peers: MongoReadModelStore[] = [];
    return {
      store,
      // Another client on the same database: a second replica writing the same read models.
      peer: async () => {
        const peer = new MongoReadModelStore({ url: url ?? '', dbName });
        peers.push(peer);
        await peer.connect();
        return peer;
      },
      cleanup: async () => {
        for (const peer of peers) await peer.close();
        await store.reset();
        await store.close();
      },
    };
  });
});
