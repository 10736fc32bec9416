import { StoredEvent, asLogPosition } from '@fleet/eventstore/port';
import { CollectionOptions, Doc, ReadModelStore, WriteOp } from '@fleet/readmodels/port';
import { Subscriber } from './subscription-runner';

/**
 * What a projection may do while handling a page: read documents (seeing the page's own
 * pending writes first) and queue writes. The writes and the checkpoint commit together.
 */
export interface ProjectionWriter {
  get<T extends Doc>(collection: string, id: string): Promise<T | null>;
  upsert(collection: string, doc: Doc): void;
  delete(collection: string, id: string): void;
  insert(collection: string, doc: Doc): void;
}

export type Projection = {
  readonly name: string;
  readonly collections: ReadonlyArray<{
    readonly name: string;
    readonly insertOnly?: boolean;
    readonly indexes?: CollectionOptions['indexes'];
  }>;
  /** Applies one event; pure decisions live in the feature, this only routes them. */
  readonly apply: (event: StoredEvent, writer: ProjectionWriter) => Promise<void> | void;
};

class PageWriter implements ProjectionWriter {
  readonly ops: WriteOp[] = [];
  private readonly overlay = new Map<string, Doc | null>();

  constructor(private readonly store: ReadModelStore) {}

  async get<T extends Doc>(collection: string, id: string): Promise<T | null> {
    const key = `${collection}\u0000${id}`;
    if (this.overlay.has(key)) return (this.overlay.get(key) ?? null) as T | null;
    return this.store.get<T>(collection, id);
  }

  upsert(collection: string, doc: Doc): void {
    this.overlay.set(`${collection}\u0000${doc._id}`, doc);
    this.ops.push({ op: 'upsert', collection, doc });
  }

  delete(collection: string, id: string): void {
    this.overlay.set(`${collection}\u0000${id}`, null);
    this.ops.push({ op: 'delete', collection, id });
  }

  insert(collection: string, doc: Doc): void {
    this.overlay.set(`${collection}\u0000${doc._id}`, doc);
    this.ops.push({ op: 'insert', collection, doc });
  }
}

/** Runs a projection as a subscriber whose checkpoint is stored with its documents. */
export const projectionSubscriber = (projection: Projection, store: ReadModelStore): Subscriber => {
  for (const c of projection.collections) {
    store.defineCollection(c.name, { insertOnly: c.insertOnly, indexes: c.indexes });
  }
  let pending: WriteOp[] = [];
  return {
    name: `projection:${projection.name}`,
    loadCheckpoint: async () => asLogPosition(await store.checkpoint(projection.name)),
    async handle(events) {
      const writer = new PageWriter(store);
      for (const event of events) await projection.apply(event, writer);
      pending = writer.ops;
    },
    async saveCheckpoint(position) {
      const ops = pending;
      pending = [];
      await store.commit(projection.name, ops, position);
    },
  };
};
