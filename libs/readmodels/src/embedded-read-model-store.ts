import { Query } from 'mingo';
import { assertNever } from '@fleet/kernel/decider';
import { KeptDocuments, requireId, sameContent } from './documents';
import {
  compareScalars,
  CursorValue,
  NOT_SCALAR,
  planPage,
  scalarReader,
  SortKey,
  sortObject,
  toPage,
} from './paging';
import {
  CollectionOptions,
  Doc,
  Filter,
  FindOptions,
  InsertOnlyViolationError,
  Page,
  ReadModelStore,
  WriteOp,
} from './port';

// No filter may run code: server-side JavaScript ($where, $function) is deprecated in
// MongoDB 8 and nothing here needs it, so the embedded store refuses it outright.
const MINGO_OPTIONS = { scriptEnabled: false };
const NO_DOCS: ReadonlyMap<string, Doc> = new Map();
const NO_IDS: ReadonlySet<string> = new Set();

/**
 * In-process read models with MongoDB query semantics (mingo), rebuilt from the event log
 * at start. Documents are copied on the way in, frozen, and read as they are: callers can
 * never change what is stored (a write to a document read throws, as the port says).
 */
export class EmbeddedReadModelStore implements ReadModelStore {
  private readonly collections = new Map<string, Map<string, Doc>>();
  private readonly insertOnly = new Set<string>();
  private readonly checkpoints = new Map<string, number>();
  /**
   * collection → id → checkpoint of the commit that last upserted or deleted it (kept after a
   * delete, as MongoDB keeps a tombstone): an older write of the document is skipped.
   */
  private readonly positions = new Map<string, Map<string, number>>();
  /** collection → field → value key → ids: equality filters on these fields skip the scan. */
  private readonly indexes = new Map<string, Map<string, Map<string, Set<string>>>>();
  /** The stored documents' instances (see KeptDocuments). */
  private readonly kept = new KeptDocuments();

  defineCollection(name: string, options: CollectionOptions = {}): void {
    if (options.insertOnly) this.insertOnly.add(name);
    else this.insertOnly.delete(name);
    // Compound indexes serve MongoDB's sorts; this store sorts its matches in memory.
    const fields = (options.indexes ?? []).filter((i): i is string => typeof i === 'string');
    if (fields.length === 0) return;
    let byField = this.indexes.get(name);
    if (!byField) this.indexes.set(name, (byField = new Map()));
    for (const field of fields) {
      if (byField.has(field)) continue;
      const index = new Map<string, Set<string>>();
      byField.set(field, index);
      for (const doc of this.docs(name).values()) addToIndex(index, doc[field], doc._id);
    }
  }

  async get<T extends Doc>(collection: string, id: string): Promise<T | null> {
    const doc = this.docs(collection).get(id);
    return doc ? (this.kept.read(doc) as T) : null;
  }

  async find<T extends Doc>(
    collection: string,
    filter: Filter,
    options?: FindOptions,
  ): Promise<Page<T>> {
    const plan = planPage(filter, options);
    // A next page: the caller's filter (indexes, no mingo for plain equalities), then the
    // cursor compared natively while sorting, instead of mingo testing the cursor's $or
    // filter on every document (a page of 100,000 nodes: ~200 ms that way).
    const sorted = plan.after
      ? sortMatches(this.matching(collection, filter, filter), plan.sort, plan.fetch, plan.after)
      : null;
    const page = toPage(
      plan,
      sorted ?? sortMatches(this.matching(collection, filter, plan.filter), plan.sort, plan.fetch),
    );
    return {
      items: page.items.map((doc) => this.kept.read(doc) as T),
      nextCursor: page.nextCursor,
    };
  }

  async count(collection: string, filter: Filter): Promise<number> {
    const sets = this.indexSets(collection, filter);
    if (sets?.length === 1) return sets[0].size;
    return this.matching(collection, filter, filter).length;
  }

  async commit(projection: string, ops: readonly WriteOp[], checkpoint: number): Promise<void> {
    // Every op is checked against the state the earlier ops of the batch leave behind, and
    // nothing is applied until all passed: one refused op leaves the store untouched.
    const staged = new Map<string, Map<string, Staged>>();
    const current = (collection: string, id: string): Doc | null => {
      const pending = staged.get(collection);
      if (pending?.has(id)) return pending.get(id)?.doc ?? null;
      return this.docs(collection).get(id) ?? null;
    };
    const stage = (collection: string, id: string, doc: Doc | null, positioned: boolean): void => {
      let pending = staged.get(collection);
      if (!pending) staged.set(collection, (pending = new Map()));
      pending.set(id, { doc, positioned });
    };
    // A writer behind another (the position it writes is not newer than the document's):
    // what it would write is already reflected, or overtaken.
    const stale = (collection: string, id: string): boolean => {
      const at = this.positions.get(collection)?.get(id);
      return at !== undefined && at >= checkpoint;
    };
    for (const op of ops) {
      switch (op.op) {
        case 'upsert':
          this.refuseChangeToInsertOnly(op.collection, requireId(op.doc));
          if (stale(op.collection, op.doc._id)) break;
          stage(op.collection, op.doc._id, this.kept.keep(op.doc), true);
          break;
        case 'delete':
          this.refuseChangeToInsertOnly(op.collection, op.id);
          if (stale(op.collection, op.id)) break;
          stage(op.collection, op.id, null, true);
          break;
        case 'insert': {
          const existing = current(op.collection, requireId(op.doc));
          // After an upsert or delete of the id in this commit it stays positioned, as in MongoDB.
          const positioned = staged.get(op.collection)?.get(op.doc._id)?.positioned ?? false;
          if (!existing) stage(op.collection, op.doc._id, this.kept.keep(op.doc), positioned);
          else if (!sameContent(existing, op.doc)) {
            throw new InsertOnlyViolationError(op.collection, op.doc._id);
          }
          break;
        }
        default:
          assertNever(op, 'write op');
      }
    }
    for (const [collection, pending] of staged) {
      let docs = this.collections.get(collection);
      if (!docs) this.collections.set(collection, (docs = new Map()));
      let positions = this.positions.get(collection);
      if (!positions) this.positions.set(collection, (positions = new Map()));
      const byField = this.indexes.get(collection);
      for (const [id, { doc, positioned }] of pending) {
        if (byField) {
          const before = docs.get(id);
          for (const [field, index] of byField) {
            if (before) removeFromIndex(index, before[field], id);
            if (doc) addToIndex(index, doc[field], id);
          }
        }
        if (doc) docs.set(id, doc);
        else docs.delete(id);
        // An insert is a fact with no position, as in MongoDB (where it has no checkpoint field).
        if (positioned) positions.set(id, checkpoint);
        else positions.delete(id);
      }
    }
    // Only forward, as MongoDB's $max: a writer behind another leaves it where it is.
    const stored = this.checkpoints.get(projection);
    this.checkpoints.set(
      projection,
      stored === undefined ? checkpoint : Math.max(stored, checkpoint),
    );
  }

  async checkpoint(projection: string): Promise<number> {
    return this.checkpoints.get(projection) ?? 0;
  }

  async reset(): Promise<void> {
    this.collections.clear();
    this.positions.clear();
    this.kept.clear();
    for (const byField of this.indexes.values())
      for (const index of byField.values()) index.clear();
    this.checkpoints.clear();
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private docs(collection: string): ReadonlyMap<string, Doc> {
    return this.collections.get(collection) ?? NO_DOCS;
  }

  /** Ids from the smallest index hit by a plain equality in the filter, or null to scan. */
  private indexed(collection: string, filter: Filter): string[] | null {
    const byField = this.indexes.get(collection);
    if (!byField) return null;
    let best: Set<string> | null = null;
    for (const [field, index] of byField) {
      if (!(field in filter)) continue;
      const key = indexKey(filter[field]);
      if (key === null) continue;
      const exact = index.get(key);
      const any = index.get(ANY);
      const hit = any ? new Set([...(exact ?? []), ...any]) : (exact ?? new Set<string>());
      if (!best || hit.size < best.size) best = hit;
    }
    // Only narrows: every candidate is still tested against the whole filter.
    return best ? [...best] : null;
  }

  private refuseChangeToInsertOnly(collection: string, id: string): void {
    if (this.insertOnly.has(collection)) throw new InsertOnlyViolationError(collection, id);
  }

  /**
   * The index sets whose intersection is exactly what `filter` matches (smallest first), or
   * null when the indexes cannot answer alone: every key must be a plain scalar equality on
   * an indexed field none of whose documents holds an array or object there (those need
   * mingo's matching rules).
   */
  private indexSets(collection: string, filter: Filter): Array<ReadonlySet<string>> | null {
    const byField = this.indexes.get(collection);
    if (!byField) return null;
    const sets: Array<ReadonlySet<string>> = [];
    for (const field in filter) {
      const index = byField.get(field);
      const value = filter[field];
      if (!index || index.has(ANY)) return null;
      if (typeof value === 'number' && !Number.isFinite(value)) return null;
      const key = indexKey(value);
      if (key === null) return null;
      sets.push(index.get(key) ?? NO_IDS);
    }
    if (sets.length === 0) return null;
    return sets.sort((a, b) => a.size - b.size);
  }

  /** Stored documents matching `effective`; `_id` lookups in `filter` skip the scan. */
  private matching(collection: string, filter: Filter, effective: Filter): Doc[] {
    const docs = this.docs(collection);
    // A plain equality filter on indexed fields (the count of online nodes, say) is answered
    // by the indexes alone: no document is tested.
    const sets = effective === filter ? this.indexSets(collection, filter) : null;
    if (sets) {
      const out: Doc[] = [];
      for (const id of sets[0]) {
        if (!inAll(sets, id)) continue;
        const doc = docs.get(id);
        if (doc) out.push(doc);
      }
      return out;
    }
    const ids = idsOf(filter) ?? this.indexed(collection, filter);
    const candidates: Iterable<Doc> = ids ? ids.flatMap((id) => docs.get(id) ?? []) : docs.values();
    if (Object.keys(effective).length === 0) return [...candidates];
    const query = new Query<Doc>(effective, MINGO_OPTIONS);
    const out: Doc[] = [];
    for (const doc of candidates) if (query.test(doc)) out.push(doc);
    return out;
  }
}

/** The index key of a plain scalar (an operator object or array is not an equality: null). */
function indexKey(value: unknown): string | null {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return `s:${value}`;
    case 'number':
      return `n:${value}`;
    case 'boolean':
      return `b:${value}`;
    default:
      return null;
  }
}

/** Whether every set after the first (the one iterated) holds `id`. */
function inAll(sets: ReadonlyArray<ReadonlySet<string>>, id: string): boolean {
  for (let i = 1; i < sets.length; i++) if (!sets[i].has(id)) return false;
  return true;
}

/** Documents whose field holds an array or object: candidates for every lookup (mingo decides). */
const ANY = '*';

function addToIndex(index: Map<string, Set<string>>, value: unknown, id: string): void {
  // A missing field equals null in MongoDB's equality.
  const key = indexKey(value === undefined ? null : value) ?? ANY;
  let ids = index.get(key);
  if (!ids) index.set(key, (ids = new Set()));
  ids.add(id);
}

function removeFromIndex(index: Map<string, Set<string>>, value: unknown, id: string): void {
  const key = indexKey(value === undefined ? null : value) ?? ANY;
  const ids = index.get(key);
  ids?.delete(id);
  if (ids && ids.size === 0) index.delete(key);
}

/**
 * Sorts only the matches, keys read once per document. Scalar keys (the normal case) use a
 * native comparator in MongoDB's order; anything else falls back to mingo's full sort,
 * which orders like MongoDB too (null/missing, numbers, strings, objects, arrays, booleans).
 */
function sortMatches(matches: Doc[], sort: readonly SortKey[], fetch: number): Doc[];
function sortMatches(
  matches: Doc[],
  sort: readonly SortKey[],
  fetch: number,
  after: readonly CursorValue[],
): Doc[] | null;
/**
 * With `after`: only the matches that sort after those values (the cursor), or null when a
 * sort value is not a scalar (the caller then lets mingo apply the cursor filter).
 */
function sortMatches(
  matches: Doc[],
  sort: readonly SortKey[],
  fetch: number,
  after?: readonly CursorValue[],
): Doc[] | null {
  if (matches.length <= 1 && after === undefined) return matches;
  const compareKeys = (a: readonly CursorValue[], b: readonly CursorValue[]): number => {
    for (let i = 0; i < sort.length; i++) {
      const c = compareScalars(a[i], b[i]);
      if (c !== 0) return c * sort[i][1];
    }
    return 0;
  };
  const readers = sort.map(([field]) => scalarReader(field));
  // The `fetch` smallest rows in a max-heap: a page needs only `limit + 1` of possibly
  // 100,000 matches, and a document that sorts after the heap's largest is read, compared
  // and dropped without allocating anything.
  const heap: Row[] = [];
  const keys: CursorValue[] = new Array<CursorValue>(readers.length);
  const above = (a: Row, b: Row): boolean => compareKeys(a.keys, b.keys) > 0;
  for (const doc of matches) {
    for (let i = 0; i < readers.length; i++) {
      const value = readers[i](doc);
      if (value === NOT_SCALAR) {
        if (after !== undefined) return null;
        return new Query<Doc>({}, MINGO_OPTIONS)
          .find<Doc>(matches)
          .sort(sortObject(sort))
          .limit(fetch)
          .all();
      }
      keys[i] = value;
    }
    if (after !== undefined && compareKeys(keys, after) <= 0) continue;
    if (heap.length < fetch) {
      heap.push({ doc, keys: keys.slice() });
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!above(heap[i], heap[parent])) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (compareKeys(keys, heap[0].keys) < 0) {
      heap[0] = { doc, keys: keys.slice() };
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let top = i;
        if (l < heap.length && above(heap[l], heap[top])) top = l;
        if (r < heap.length && above(heap[r], heap[top])) top = r;
        if (top === i) break;
        [heap[i], heap[top]] = [heap[top], heap[i]];
        i = top;
      }
    }
  }
  return heap.sort((a, b) => compareKeys(a.keys, b.keys)).map((row) => row.doc);
}

type Row = { readonly doc: Doc; readonly keys: CursorValue[] };

/** A write of a commit not applied yet: the document (null: deleted) and whether it was an upsert or delete. */
type Staged = { readonly doc: Doc | null; readonly positioned: boolean };

/** The ids a filter pins `_id` to (`_id: 'x'`, `{$eq: 'x'}`, `{$in: [...]}`), else null. */
function idsOf(filter: Filter): string[] | null {
  const id = filter._id;
  if (typeof id === 'string') return [id];
  if (id === null || typeof id !== 'object' || Array.isArray(id)) return null;
  const condition = id as Record<string, unknown>;
  const keys = Object.keys(condition);
  if (keys.length !== 1) return null;
  if (typeof condition.$eq === 'string') return [condition.$eq];
  const list = condition.$in;
  if (Array.isArray(list) && list.every((v): v is string => typeof v === 'string')) {
    return [...new Set(list)];
  }
  return null;
}
