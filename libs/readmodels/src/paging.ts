import { createHash } from 'node:crypto';
import { Doc, Filter, FindOptions, InvalidCursorError, Page, Sort } from './port';

/**
 * Keyset paging written once in MongoDB syntax, shared by every adapter: an adapter runs
 * `plan.filter` sorted by `plan.sort`, takes `plan.fetch` documents and hands them to
 * `toPage`. Keyset (not skip) paging keeps pages stable while documents are inserted.
 *
 * Sort values a cursor can carry: string, number, boolean, or null. A missing field pages
 * as null and, as in MongoDB, null sorts before every other value (first ascending, last
 * descending). Fields mixing those types still page correctly because the "after" test
 * follows MongoDB's cross-type order (null < numbers < strings < objects < booleans).
 *
 * A cursor is bound to its query: it carries the sort and a digest of the filter, and is
 * refused (InvalidCursorError) with any other. Continued under another filter, its position
 * would silently skip or repeat documents. Cursors made before the binding carry no digest
 * and are refused too: the client starts the listing again.
 */

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export type SortKey = readonly [field: string, direction: 1 | -1];

export type PagePlan = {
  /** The caller's filter narrowed to the documents after the cursor. */
  readonly filter: Filter;
  /** The caller's sort with `_id` as the final tie-breaker. */
  readonly sort: readonly SortKey[];
  readonly limit: number;
  /** How many documents to fetch: one more than the limit tells whether a next page exists. */
  readonly fetch: number;
  /**
   * The cursor's sort values (null on a first page): an adapter that compares in MongoDB's
   * order itself may run the caller's filter and keep what sorts after these instead.
   */
  readonly after: readonly CursorValue[] | null;
  /** The caller's filter, whose digest the next page's cursor carries (made only then). */
  readonly query: Filter;
};

export type CursorValue = string | number | boolean | null;
type CursorBody = { readonly s: SortKey[]; readonly v: CursorValue[]; readonly f: string };

export function planPage(filter: Filter, options: FindOptions = {}): PagePlan {
  const sort = normaliseSort(options.sort ?? {});
  const limit = normaliseLimit(options.limit);
  const after = options.cursor ? decodeCursor(options.cursor, sort, filterDigest(filter)) : null;
  return {
    filter: after ? { $and: [filter, afterFilter(sort, after)] } : filter,
    sort,
    limit,
    fetch: limit + 1,
    after,
    query: filter,
  };
}

/**
 * A digest of the filter's meaning: the same for the same conditions in any key order (JSON
 * of objects with sorted keys; regular expressions and dates spelt out, which JSON would
 * flatten to `{}` and a string).
 */
export function filterDigest(filter: Filter): string {
  return createHash('sha256').update(canonicalJson(filter)).digest('base64url').slice(0, 22);
}

function canonicalJson(value: unknown): string {
  if (value instanceof RegExp) return JSON.stringify({ $regex: value.source, $flags: value.flags });
  if (value instanceof Date) return JSON.stringify({ $date: value.getTime() });
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map(
        (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
      );
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Cuts the fetched documents to the page and derives the cursor of the next one. */
export function toPage<T extends Doc>(plan: PagePlan, fetched: T[]): Page<T> {
  if (fetched.length <= plan.limit) return { items: fetched, nextCursor: null };
  const items = fetched.slice(0, plan.limit);
  return {
    items,
    nextCursor: encodeCursor(plan.sort, filterDigest(plan.query), items[items.length - 1]),
  };
}

/** The sort as the object both mingo and the MongoDB driver accept. */
export function sortObject(sort: readonly SortKey[]): Sort {
  return Object.fromEntries(sort);
}

/** What `scalarAt` returns for a value a cursor cannot carry (object, array, date...). */
export const NOT_SCALAR = Symbol('not a scalar');

/**
 * The sort value at a dotted path as a cursor carries it: a missing field reads as null.
 * Paths through arrays are not scalars (MongoDB would sort by an array element).
 */
export function scalarAt(doc: unknown, path: string): CursorValue | typeof NOT_SCALAR {
  return scalarReader(path)(doc);
}

/** `scalarAt` for one path, split once: for reading the same field of many documents. */
export function scalarReader(path: string): (doc: unknown) => CursorValue | typeof NOT_SCALAR {
  const parts = path.split('.');
  return (doc) => {
    let value: unknown = doc;
    for (let i = 0; i < parts.length; i++) {
      if (Array.isArray(value)) return NOT_SCALAR;
      if (value === null || typeof value !== 'object') return null;
      value = (value as Record<string, unknown>)[parts[i]];
    }
    if (value === undefined) return null;
    return isCursorValue(value) ? value : NOT_SCALAR;
  };
}

/** MongoDB's order between the scalar types: null < numbers < strings < booleans. */
export function compareScalars(a: CursorValue, b: CursorValue): number {
  const ra = scalarRank(a);
  const rb = scalarRank(b);
  if (ra !== rb) return ra - rb;
  if (a === b || a === null || b === null) return 0;
  return a < b ? -1 : 1;
}

function scalarRank(value: CursorValue): number {
  if (value === null) return 0;
  if (typeof value === 'number') return 1;
  if (typeof value === 'string') return 2;
  return 3;
}

function normaliseSort(sort: Sort): SortKey[] {
  const keys: SortKey[] = [];
  for (const [field, direction] of Object.entries(sort)) {
    if (direction !== 1 && direction !== -1) {
      throw new RangeError(`sort direction for ${field} must be 1 or -1`);
    }
    keys.push([field, direction]);
    // `_id` is unique, so keys after it could never break a tie.
    if (field === '_id') return keys;
  }
  keys.push(['_id', 1]);
  return keys;
}

function normaliseLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError('limit must be a positive integer');
  }
  return Math.min(limit, MAX_LIMIT);
}

function encodeCursor(sort: readonly SortKey[], query: string, last: Doc): string {
  const values = sort.map(([field]) => {
    const value = scalarAt(last, field);
    if (value === NOT_SCALAR) {
      throw new TypeError(
        `cannot page on ${field}: sort fields must hold strings, finite numbers, booleans or null`,
      );
    }
    return value;
  });
  const body: CursorBody = { s: [...sort], v: values, f: query };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The last item's sort values; a cursor made for another sort or filter is refused. */
function decodeCursor(cursor: string, sort: readonly SortKey[], query: string): CursorValue[] {
  let body: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (
    !isCursorBody(body) ||
    body.f !== query ||
    body.v.length !== sort.length ||
    body.s.length !== sort.length
  ) {
    throw new InvalidCursorError();
  }
  const sameSort = sort.every(([f, d], i) => body.s[i][0] === f && body.s[i][1] === d);
  if (!sameSort || typeof body.v[body.v.length - 1] !== 'string') throw new InvalidCursorError();
  return body.v;
}

function isCursorBody(body: unknown): body is CursorBody {
  if (body === null || typeof body !== 'object') return false;
  const { s, v, f } = body as Record<string, unknown>;
  return (
    typeof f === 'string' &&
    Array.isArray(s) &&
    Array.isArray(v) &&
    s.every(
      (k) =>
        Array.isArray(k) &&
        k.length === 2 &&
        typeof k[0] === 'string' &&
        (k[1] === 1 || k[1] === -1),
    ) &&
    v.every(isCursorValue)
  );
}

function isCursorValue(value: unknown): value is CursorValue {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

/**
 * `{$or: [{k1 after v1}, {k1 = v1, k2 after v2}, ..., {k1 = v1, ..., _id after id}]}`.
 * Branches are `$and` lists so that no two conditions compete for the same object key.
 */
function afterFilter(sort: readonly SortKey[], values: readonly CursorValue[]): Filter {
  const branches: Filter[] = [];
  for (let i = 0; i < sort.length; i++) {
    const [field, direction] = sort[i];
    const after = afterValue(field, direction, values[i]);
    if (after) {
      const equal = sort.slice(0, i).map(([f], j): Filter => ({ [f]: values[j] }));
      branches.push(equal.length === 0 ? after : { $and: [...equal, after] });
    }
  }
  return { $or: branches };
}

// MongoDB compares only within a type ("type bracketing"), so values of the types that
// sort after (or before) the cursor's type are matched by `$type`. Null and missing
// are matched by `field: null`, which covers both in MongoDB and mingo alike.
const TYPE_ORDER = ['number', 'string', 'object', 'bool'] as const;

function afterValue(field: string, direction: 1 | -1, value: CursorValue): Filter | null {
  if (value === null) {
    // Null is the lowest value: everything non-null follows it ascending, nothing descending.
    return direction === 1 ? { [field]: { $ne: null } } : null;
  }
  const conditions: Filter[] = [{ [field]: { [direction === 1 ? '$gt' : '$lt']: value } }];
  // Every `_id` is a string (both adapters refuse others), so it needs no cross-type terms.
  if (field === '_id') return conditions[0];
  const rank = TYPE_ORDER.indexOf(typeName(value));
  const otherTypes = direction === 1 ? TYPE_ORDER.slice(rank + 1) : TYPE_ORDER.slice(0, rank);
  if (otherTypes.length > 0) conditions.push({ [field]: { $type: [...otherTypes] } });
  if (direction === -1) conditions.push({ [field]: null });
  return conditions.length === 1 ? conditions[0] : { $or: conditions };
}

function typeName(value: string | number | boolean): (typeof TYPE_ORDER)[number] {
  if (typeof value === 'number') return 'number';
  if (typeof value === 'string') return 'string';
  return 'bool';
}
