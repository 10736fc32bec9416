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

  it('exports the port errors', () => {
    expect(new InsertOnlyViolationError('billing', 'b1').message).toContain('insert-only');
  });
});
