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
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = copy(v);
  return out;
}

/** Both adapters key documents by a string `_id`; anything else is a projection bug. */
export function requireId(doc: Doc): string {
  if (typeof doc._id !== 'string') throw new TypeError('read-model documents need a string _id');
  return doc._id;
}
