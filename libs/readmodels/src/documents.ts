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

function copy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copy);
  if (value instanceof Date) return new Date(value.getTime());
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  const make = keys.length > IN_OBJECT_SLOTS ? shapeOf(source, keys) : null;
  if (make) return make(source, copy);
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = source[k];
    if (v !== undefined) out[k] = copy(v);
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
