/**
 * The read-model port: collections of JSON documents keyed by `_id`, queried with
 * MongoDB filter syntax. Query code (filters, sort, paging) is written once against
 * this port and runs unchanged on the embedded store and on MongoDB.
 */
export type Doc = { readonly _id: string } & Record<string, unknown>;

/** A MongoDB query filter (`{status: 'ready', 'capacity.cpu': {$gte: 8}}`). */
export type Filter = Record<string, unknown>;

/** A MongoDB sort spec; `_id` is always appended as the final tie-breaker. */
export type Sort = Record<string, 1 | -1>;

export type FindOptions = {
  readonly sort?: Sort;
  readonly limit?: number;
  /** Opaque cursor from a previous page's `nextCursor`. */
  readonly cursor?: string | null;
};

export type Page<T> = { readonly items: T[]; readonly nextCursor: string | null };

/** One write of a projection batch. */
export type WriteOp =
  | { readonly op: 'upsert'; readonly collection: string; readonly doc: Doc }
  | { readonly op: 'delete'; readonly collection: string; readonly id: string }
  /** For insert-only collections: inserting an existing `_id` with the same content is a no-op. */
  | { readonly op: 'insert'; readonly collection: string; readonly doc: Doc };

export class InsertOnlyViolationError extends Error {
  constructor(
    readonly collection: string,
    readonly id: string,
  ) {
    super(`collection ${collection} is insert-only: document ${id} cannot be changed or removed`);
    this.name = 'InsertOnlyViolationError';
  }
}

export class InvalidCursorError extends Error {
  constructor() {
    super('cursor is not valid for this query');
    this.name = 'InvalidCursorError';
  }
}

/** A compound index: its fields in order, each ascending (1) or descending (-1). */
export type IndexKeys = Readonly<Record<string, 1 | -1>>;

export type CollectionOptions = {
  readonly insertOnly?: boolean;
  /**
   * A field name: a field often filtered by equality (the embedded store keeps an equality
   * index on it; MongoDB creates `{field: 1, _id: 1}`, so pages in `_id` order come off it).
   * Fields with directions: a compound index for a sort the queries use, equality fields
   * first, `_id` last as the tie-breaker every sort ends with (MongoDB only; the embedded
   * store sorts the matches in memory).
   */
  readonly indexes?: ReadonlyArray<string | IndexKeys>;
};

export interface ReadModelStore {
  /**
   * Declares a collection. insertOnly: upsert and delete on it throw InsertOnlyViolationError.
   * indexes: see CollectionOptions.
   */
  defineCollection(name: string, options?: CollectionOptions): void;
  /**
   * Documents read (get and find) are read-only: the embedded store hands out the instances
   * it keeps, frozen, so writing to one throws. A change is a new object (spread what stays)
   * passed to commit; the parts it shares with what was read are not copied again.
   */
  get<T extends Doc>(collection: string, id: string): Promise<T | null>;
  find<T extends Doc>(collection: string, filter: Filter, options?: FindOptions): Promise<Page<T>>;
  count(collection: string, filter: Filter): Promise<number>;
  /**
   * Applies the writes and stores `checkpoint` for `projection` together (atomically where
   * the backend allows; otherwise writes first, checkpoint last, which is safe because
   * projections are idempotent).
   *
   * Safe with several writers (replicas sharing MongoDB, each projecting the same log): an
   * upsert or delete is applied only when the document was last written by a commit with a
   * lower checkpoint, or never, so a writer behind another cannot move a document back; a
   * delete is remembered at its checkpoint, so an older upsert cannot bring the document back
   * either. Within one commit the last op on a document is the one that counts. Inserts are
   * facts with no position: an existing id with the same content is a no-op. The stored
   * checkpoint only moves forward (a lower one leaves it as it is).
   */
  commit(projection: string, ops: readonly WriteOp[], checkpoint: number): Promise<void>;
  /** The highest committed checkpoint of a projection, 0 when none. */
  checkpoint(projection: string): Promise<number>;
  /** Drops every document and checkpoint (the rebuild command). */
  reset(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The documents matching `filter`, a page (at most 1,000) at a time: for work done as the
 * pages come, without holding them all. From `cursor` (a page's `nextCursor`) when given.
 */
export async function* pagesOf<T extends Doc>(
  store: ReadModelStore,
  collection: string,
  filter: Filter,
  sort?: Sort,
  from: string | null = null,
): AsyncGenerator<T[], void, undefined> {
  let cursor: string | null = from;
  do {
    const page: Page<T> = await store.find<T>(collection, filter, { sort, limit: 1000, cursor });
    if (page.items.length > 0) yield page.items;
    cursor = page.nextCursor;
  } while (cursor);
}

/** Every document matching `filter`, read page by page (from `cursor` when given). */
export async function findAll<T extends Doc>(
  store: ReadModelStore,
  collection: string,
  filter: Filter,
  sort?: Sort,
  from: string | null = null,
): Promise<T[]> {
  const out: T[] = [];
  for await (const items of pagesOf<T>(store, collection, filter, sort, from)) out.push(...items);
  return out;
}
