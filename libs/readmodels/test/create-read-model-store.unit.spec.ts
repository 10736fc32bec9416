import { MongoClient, MongoNetworkError } from 'mongodb';
import {
  createReadModelStore,
  EmbeddedReadModelStore,
  InsertOnlyViolationError,
  MongoReadModelStore,
} from '../src';

describe('createReadModelStore', () => {
  it('chooses the embedded store when no MongoDB URL is set', () => {
    expect(createReadModelStore({})).toBeInstanceOf(EmbeddedReadModelStore);
  });

  it('chooses MongoDB when its URL is set, connecting only on first use', async () => {
    const store = createReadModelStore({ mongoUrl: 'mongodb://localhost:1/fleet' });
    expect(store).toBeInstanceOf(MongoReadModelStore);
    // Insert-only rules are declared in memory, before any connection.
    store.defineCollection('billing', { insertOnly: true });
    await store.close();
  });

  it("hands MongoDB's background failures to the log it is given", async () => {
    const refused = new MongoNetworkError('connect ECONNREFUSED 127.0.0.1:1');
    const connect = jest.spyOn(MongoClient, 'connect').mockRejectedValue(refused);
    try {
      const log = jest.fn();
      const store = createReadModelStore({ mongoUrl: 'mongodb://localhost:1/fleet', log });
      store.defineCollection('nodes', { indexes: ['status'] });
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(log).toHaveBeenCalledWith(
        'MongoDB read models: creating index {"status":1,"_id":1} on nodes failed',
        refused,
      );
      await store.close();
    } finally {
      connect.mockRestore();
    }
  });

  it('exports the port errors', () => {
    expect(new InsertOnlyViolationError('billing', 'b1').message).toContain('insert-only');
  });
});
