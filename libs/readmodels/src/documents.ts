import { isDeepStrictEqual } from 'node:util';
import { Doc } from './port';

/**
 * Whether a re-inserted document equals the stored one. Key order does not matter (MongoDB
 * may hand fields back in another order); array order and value types do.
 */
export function sameContent(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(cloneValue(a), cloneValue(b));
}

/**
 * A deep copy of a JSON-like document as MongoDB would store it with `ignoreUndefined`:
 * fields holding `undefined` are dropped, dates are copied, everything else stays plain.
 */
export function cloneValue<T>(value: T): T {
  return copy(value) as T;
}

/**
 * The documents the embedded store keeps: immutable (frozen) copies that readers get as they
 * are, without a copy per read. Parts of a new document that are kept instances already (the
 * unchanged parts of a document a projection built from one it read) are shared, not copied:
 * a write copies only what changed. Small flat objects that recur across documents (a node's
 * capacity, its labels, an empty allocation map, cordon flags: up to 4 fields, every value a
 * string, boolean, null or finite number) are one instance from `pool` for every document
 * holding the same content in the same key order. A Date cannot be frozen (setTime), so an
 * object holding one is never shared and a document holding one is copied on every read.
 */
export class KeptDocuments {
  /** Every frozen object or array kept, shareable by any document. */
  private readonly instances = new WeakSet<object>();
  /** Kept documents that hold a Date somewhere: read as copies. */
  private readonly dated = new WeakSet<object>();

  constructor(private readonly pool = new LeafPool()) {}

  keep<T>(value: T): T {
    let dates = 0;
    const c = (v: unknown): unknown => {
      if (v === null || typeof v !== 'object') return v;
      if (this.instances.has(v)) return v;
      if (v instanceof Date) {
        dates++;
        return new Date(v.getTime());
      }
      const before = dates;
      let out: object;
      if (Array.isArray(v)) out = v.map(c);
      else {
        const source = v as Record<string, unknown>;
        const keys = Object.keys(source);
        if (keys.length <= IN_OBJECT_SLOTS) {
          const shared = this.pool.leaf(source, keys);
          if (shared) {
            this.instances.add(shared);
            return shared;
          }
        }
        out = copyObject(source, keys, c);
      }
      if (dates === before) this.instances.add(Object.freeze(out));
      return out;
    };
    const kept = c(value);
    if (dates > 0 && kept !== null && typeof kept === 'object') this.dated.add(kept);
    return kept as T;
  }

  /** What a reader gets: the kept document itself, read-only, or a copy when it holds a Date. */
  read<T>(doc: T): T {
    return this.dated.has(doc as object) ? cloneValue(doc) : doc;
  }

  clear(): void {
    this.pool.clear();
  }
}

/** Interned small flat objects, bounded: when full it starts over (what is stored keeps its instances). */
export class LeafPool {
  private readonly leaves = new Map<string, Readonly<Record<string, unknown>>>();

  constructor(private readonly capacity = 10_000) {}

  /** The shared instance for a flat object of scalars, or null when it is not one. */
  leaf(
    source: Record<string, unknown>,
    keys: readonly string[],
  ): Readonly<Record<string, unknown>> | null {
    for (const k of keys) {
      const v = source[k];
      const t = typeof v;
      if (v === null || t === 'string' || t === 'boolean') continue;
      // JSON would not tell NaN, Infinity or -0 from null or 0, nor keep undefined: not shared.
      if (t === 'number' && Number.isFinite(v) && !Object.is(v, -0)) continue;
      return null;
    }
    const key = JSON.stringify(source);
    let leaf = this.leaves.get(key);
    if (leaf === undefined) {
      if (this.leaves.size >= this.capacity) this.leaves.clear();
      leaf = Object.freeze(copyObject(source, keys, copy));
      this.leaves.set(key, leaf);
    }
    return leaf;
  }

  clear(): void {
    this.leaves.clear();
  }
}

function copy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copy);
  if (value instanceof Date) return new Date(value.getTime());
  const source = value as Record<string, unknown>;
  return copyObject(source, Object.keys(source), copy);
}

function copyObject(
  source: Record<string, unknown>,
  keys: readonly string[],
  c: (v: unknown) => unknown,
): Record<string, unknown> {
  const make = keys.length > IN_OBJECT_SLOTS ? shapeOf(source, keys) : null;
  if (make) return make(source, c);
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = source[k];
    if (v !== undefined) out[k] = c(v);
  }
  return out;
}

/**
 * Exact-size copies of the common document shapes. An object built as `{}` plus keys keeps
 * 4 fields in the object and the rest in a separate, over-allocated backing store: a stored
 * 5-field GPU card takes 96 bytes (object and backing store) instead of 64. So once a shape
 * (the same keys in the same order, all defined) has been copied a few times, it is copied
 * by a generated object literal, `{uuid: c(o.uuid), model: c(o.model), ...}`, which V8
 * allocates at its exact size with one hidden class for every copy. Only shapes whose keys
 * are all plain identifiers get one (no `__proto__`, nothing to quote or escape), and at most
 * MAX_SHAPES of them: documents keyed by data (ids as keys) keep the generic path.
 */
type Make = (
  source: Record<string, unknown>,
  c: (v: unknown) => unknown,
) => Record<string, unknown>;

/** `{}` holds this many fields in the object itself: smaller shapes gain nothing. */
const IN_OBJECT_SLOTS = 4;
const MAX_SHAPES = 512;
/** Copies of a shape before it gets its literal (one-off shapes never do). */
const PROMOTE_AFTER = 4;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Signature (keys joined by ',') → copies seen so far, or the shape's literal. */
const shapes = new Map<string, number | Make>();

function shapeOf(source: Record<string, unknown>, keys: readonly string[]): Make | null {
  const signature = keys.join(',');
  let known = shapes.get(signature);
  if (known === undefined) {
    if (shapes.size >= MAX_SHAPES) return null;
    for (const k of keys) if (!IDENTIFIER.test(k) || k === '__proto__') return null;
    known = 0;
  }
  // A field holding undefined is dropped, so this object has another shape: the generic path.
  for (const k of keys) if (source[k] === undefined) return null;
  if (typeof known === 'function') return known;
  if (known + 1 < PROMOTE_AFTER) {
    shapes.set(signature, known + 1);
    return null;
  }
  // Keys are plain identifiers (checked above): nothing in the generated source is data.
  const body = `return {${keys.map((k) => `${k}: c(o.${k})`).join(', ')}};`;
  const make = new Function('o', 'c', body) as Make;
  shapes.set(signature, make);
  return make;
}

/** Both adapters key documents by a string `_id`; anything else is a projection bug. */
export function requireId(doc: Doc): string {
  if (typeof doc._id !== 'string') throw new TypeError('read-model documents need a string _id');
  return doc._id;
}
